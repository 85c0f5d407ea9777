"""Fetch and convert the public transcripts of mcpgym's hand-labelled validation set.

The committed excerpts (``tests/data/validation/``) are small selections, trimmed; this
script rebuilds them, or converts every episode, from the sources at pinned commits:

* tau-bench (MIT, Sierra): ``historical_trajectories/gpt-4o-airline.json``, 200 gpt-4o
  airline episodes as chat-completions messages -> ``tau_bench_airline.json``, read by
  ``mcpgym score --format openai``.
* ToolBench (Apache-2.0, OpenBMB): ``data_example/answer/G*_answer/*.json``, ChatGPT DFS
  answer trees -> ``toolbench_answers.json`` (legacy ``function_call`` / ``role: function``
  messages, ``--format openai``). Per answer file: its final chain (``train_messages[-1]``),
  or a root-to-leaf path of its search tree (``tree:<leaf>``, leaves numbered depth-first
  from 0). The closing ``Finish`` call is kept as the source records it: a
  ``function_call`` with no ``function`` answer (``train_messages`` holds none).
* ComplexMCP (MIT, AIDC-AI): ``benchmark/data/data.parquet``, 47 human runs -> JSON Lines
  ``complexmcp_human.jsonl`` (``seed``, ``query``, ``apps``, ``level``, ``tool_cnt`` and the
  decoded transcript ``output``), ``--format complexmcp``. Needs ``pyarrow``
  (``pip install pyarrow``).
* EnterpriseBench (Apache-2.0, sjarmak/EnterpriseBench): 20 Claude Code runs on the
  Sourcegraph MCP server, ``results/.../agent_trace.jsonl`` (Claude Code's session log, one
  content block a line) -> ``enterprisebench_claude_code.json``, Anthropic Messages
  conversations read by ``--format anthropic`` (:func:`convert_enterprisebench`).

Usage: ``python scripts/fetch_validation.py OUT_DIR [--all] [--source-dir DIR]``. Without
``--source-dir`` the files are downloaded from GitHub (raw.githubusercontent.com) with
httpx; with it, ``DIR/<owner>+<repo>/<path>`` is read instead. ``--all`` converts every
episode untrimmed instead of the labelled selection. Existing output files are never
overwritten (the script exits 2 naming them).

Trimming (selection only): a message or tool result longer than :data:`TRIM` characters
keeps its first :data:`TRIM` characters and ends with ``[... N characters trimmed]``; the
system prompt keeps its first :data:`SYSTEM_TRIM`. Error markers sit at the start of a
result in all three sources, so trimming keeps what the labels need.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

import httpx

TRIM = 1500
"""Characters kept of a long message or tool result in the selection."""
SYSTEM_TRIM = 400
"""Characters kept of a system prompt (tau-bench's policy, ToolBench's AutoGPT prompt)."""
TIMEOUT_S = 60.0
"""Deadline of each download, seconds."""
MAX_BYTES = 20_000_000
"""Largest file downloaded (the biggest source file is 4.1 MB)."""

TAU_REPO, TAU_COMMIT = "sierra-research/tau-bench", "59a200c6d575d595120f1cb70fea53cef0632f6b"
TAU_PATH = "historical_trajectories/gpt-4o-airline.json"
TOOLBENCH_REPO, TOOLBENCH_COMMIT = "OpenBMB/ToolBench", "d56fdd89faf8c91fa135090b212bb9057ee5cfc2"
CMCP_REPO, CMCP_COMMIT = "AIDC-AI/complex-mcp", "570c75b8995091ede54f42860b70f2946073dad1"
CMCP_PATH = "benchmark/data/data.parquet"

EB_REPO, EB_COMMIT = "sjarmak/EnterpriseBench", "75fe1cc4870ff8692bc26e60b0a8044a0fff4422"
EB_RUNS: list[str] = [
    "results/mcp_batch/api-contract-grpc-metadata-001_mcp_only",
    "results/mcp_batch/cal-drift-flask-config-001_mcp_only",
    "results/mcp_batch/cal-err-flask-blueprint-001_mcp_only",
    "results/mcp_batch/dep-traversal-001_mcp_only",
    "results/mcp_batch_v2/dep-traversal-001_hybrid",
    "results/mcp_batch_v3/dep-traversal-001_hybrid",
    "results/mcp_batch_v4/cal-drift_hybrid",
    "results/mcp_batch_v5/incident_hybrid",
    "results/mcp_batch_v6/dep-traversal_hybrid",
    "results/smoke_mcp_v4",
    "results/studies/rryas-headline-v2-cli-compliance-canary/runs/api-contract-dual-envoy-istio-001/cli/rep1/attempt1",
    "results/studies/rryas-headline-v5/runs/dep-graph-tri-tokio-hyper-tonic-001/cli/rep1/attempt1",
    "results/studies/rryas-headline-v5/runs/dep-graph-tri-tokio-hyper-tonic-001/mcp_only/rep1/attempt1",
    "results/studies/rryas-headline-v6/runs/dep-traversal-001/baseline/rep1/attempt1",
    "results/studies/rryas-headline-v6/runs/dep-traversal-001/cli/rep1/attempt1",
    "results/studies/rryas-headline-v6/runs/dep-traversal-001/mcp_only/rep1/attempt1",
    "results/studies/rryas-headline-v6/runs/dep-traversal-002/baseline/rep1/attempt1",
    "results/studies/rryas-headline-v6/runs/dep-traversal-002/cli/rep1/attempt1",
    "results/studies/rryas-headline-v6/runs/dep-traversal-002/mcp_only/rep1/attempt1",
    "results/studies/rryas-headline-v6/runs/dep-traversal-004/cli/rep1/attempt1",
]
"""The labelled EnterpriseBench run folders, in episode order (each holds ``agent_trace.jsonl``
and, but for one, ``results.json``)."""
EB_TRIM = 2000
"""Characters kept of a long EnterpriseBench tool result (then `` ...[trimmed N chars]``)."""
EB_RECORD_KEYS = ("phase", "error", "failure_class")
"""``results.json`` fields kept beside the messages when set (the run's own record)."""

TAU_SELECTION: list[int] = [
    0, 1, 2, 3, 4, 11, 13, 15, 28, 32, 33, 38, 52, 58, 63, 70, 73, 109, 111, 113, 150, 163, 170, 173, 196,
]  # fmt: skip
"""Indices (0-based) into gpt-4o-airline.json of the labelled tau-bench episodes."""

TOOLBENCH_SELECTION: list[tuple[str, str]] = [
    ("G1_answer/10_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G1_answer/11_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G1_answer/57_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G1_answer/59_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G2_answer/102_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G2_answer/10_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G2_answer/119_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G2_answer/127_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G2_answer/52_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G3_answer/13_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G3_answer/15_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G3_answer/21_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G3_answer/3_ChatGPT_DFS_woFilter_w2.json", "final"),
    ("G2_answer/10_ChatGPT_DFS_woFilter_w2.json", "tree:2"),
    ("G2_answer/10_ChatGPT_DFS_woFilter_w2.json", "tree:6"),
    ("G2_answer/10_ChatGPT_DFS_woFilter_w2.json", "tree:11"),
    ("G1_answer/69_ChatGPT_DFS_woFilter_w2.json", "tree:3"),
    ("G1_answer/69_ChatGPT_DFS_woFilter_w2.json", "tree:5"),
    ("G3_answer/8_ChatGPT_DFS_woFilter_w2.json", "tree:0"),
    ("G2_answer/119_ChatGPT_DFS_woFilter_w2.json", "tree:7"),
    ("G2_answer/127_ChatGPT_DFS_woFilter_w2.json", "tree:0"),
]
"""(answer file under data_example/answer/, episode) pairs of the labelled ToolBench episodes."""

CMCP_SELECTION: list[int] = [0, 1, 2, 4, 5, 6, 9, 10, 11, 12, 13, 19, 20, 21, 27, 41]
"""Row indices (0-based) of data.parquet of the labelled ComplexMCP episodes."""


def _trim(text: Any, limit: int, enabled: bool) -> Any:
    if not enabled or not isinstance(text, str) or len(text) <= limit:
        return text
    return f"{text[:limit]}[... {len(text) - limit} characters trimmed]"


class Source:
    """Where source files come from: a local directory of checkouts, or GitHub raw files."""

    def __init__(self, source_dir: Path | None) -> None:
        self.source_dir = source_dir
        self.client = None if source_dir else httpx.Client(timeout=TIMEOUT_S, follow_redirects=True)

    def read(self, repo: str, commit: str, path: str) -> bytes:
        """Bytes of ``path`` in ``repo`` at ``commit``; raises OSError / httpx.HTTPError if absent."""
        if self.source_dir is not None:
            return (self.source_dir / repo.replace("/", "+") / path).read_bytes()
        assert self.client is not None
        url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
        with self.client.stream("GET", url) as r:
            r.raise_for_status()
            chunks, size = [], 0
            for chunk in r.iter_bytes():
                size += len(chunk)
                if size > MAX_BYTES:
                    raise OSError(f"{url}: larger than {MAX_BYTES} bytes")
                chunks.append(chunk)
        return b"".join(chunks)


def convert_tau(src: Source, everything: bool) -> list[dict[str, Any]]:
    """tau-bench records ``{task_id, trial, reward, traj}`` (``info`` dropped: it holds the gold actions)."""
    data = json.loads(src.read(TAU_REPO, TAU_COMMIT, TAU_PATH))
    picked = range(len(data)) if everything else TAU_SELECTION
    out = []
    for i in picked:
        ep = data[i]
        traj = []
        for m in ep["traj"]:
            m = dict(m)
            limit = SYSTEM_TRIM if m.get("role") == "system" else TRIM
            m["content"] = _trim(m.get("content"), limit, not everything)
            traj.append(m)
        out.append(
            {"source_index": i, "task_id": ep["task_id"], "trial": ep["trial"], "reward": ep["reward"], "traj": traj}
        )
    return out


def _tree_leaves(node: dict[str, Any], path: list[dict[str, Any]], out: list[list[dict[str, Any]]]) -> None:
    path = [*path, node]
    children = node.get("children") or []
    if not children:
        out.append(path)
    for c in children:
        _tree_leaves(c, path, out)


def _tree_messages(root: dict[str, Any], leaf: int, head: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages of one root-to-leaf path of a ToolBench DFS tree, in train_messages' shape."""
    leaves: list[list[dict[str, Any]]] = []
    _tree_leaves(root, [], leaves)
    msgs = list(head)
    thought: str | None = None
    name: str | None = None
    for node in leaves[leaf]:
        kind, desc = node.get("node_type"), node.get("description")
        if kind == "Thought":
            thought = desc
        elif kind == "Action":
            name = desc
        elif kind == "Action Input" and name is not None:
            msgs.append({"role": "assistant", "content": thought, "function_call": {"name": name, "arguments": desc}})
            if name != "Finish" and node.get("observation") is not None:
                msgs.append({"role": "function", "name": name, "content": node["observation"]})
            thought, name = None, None
    if thought:  # a closing thought with no call: the agent's last words
        msgs.append({"role": "assistant", "content": thought})
    return msgs


def convert_toolbench(src: Source, everything: bool) -> list[dict[str, Any]]:
    """ToolBench episodes ``{episode_id, query, messages}`` in legacy function-call messages."""
    selection = TOOLBENCH_SELECTION
    if everything:
        # The 15 answer files of data_example at the pinned commit, their final chains.
        names = {f for f, _ in TOOLBENCH_SELECTION}
        names |= {"G1_answer/69_ChatGPT_DFS_woFilter_w2.json", "G3_answer/8_ChatGPT_DFS_woFilter_w2.json"}
        selection = [(f, "final") for f in sorted(names)]
    out = []
    for name, which in selection:
        doc = json.loads(src.read(TOOLBENCH_REPO, TOOLBENCH_COMMIT, f"data_example/answer/{name}"))
        gen = doc["answer_generation"]
        chains = gen.get("train_messages") or []
        if which == "final":
            if not chains:
                continue
            messages = chains[-1]
        else:
            head = [m for m in (chains[-1] if chains else []) if m.get("role") in ("system", "user")][:2]
            if not head:
                head = [{"role": "user", "content": gen.get("query", "")}]
            messages = _tree_messages(doc["tree"]["tree"], int(which.split(":")[1]), head)
        trimmed = []
        for m in messages:
            m = dict(m)
            limit = SYSTEM_TRIM if m.get("role") == "system" else TRIM
            m["content"] = _trim(m.get("content"), limit, not everything)
            trimmed.append(m)
        out.append({"episode_id": f"{name}#{which}", "query": gen.get("query"), "messages": trimmed})
    return out


def convert_complexmcp(src: Source, everything: bool) -> list[dict[str, Any]]:
    """ComplexMCP rows with the transcript decoded (``gt_env``, the gold state, is dropped)."""
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found,unused-ignore]
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise SystemExit("ComplexMCP's data.parquet needs pyarrow: pip install pyarrow") from e
    rows = pq.read_table(io.BytesIO(src.read(CMCP_REPO, CMCP_COMMIT, CMCP_PATH))).to_pylist()
    picked = range(len(rows)) if everything else CMCP_SELECTION
    out = []
    for i in picked:
        r = rows[i]
        out.append(
            {
                "source_index": i,
                "seed": r["seed"],
                "query": r["query"],
                "apps": json.loads(r["apps"]),
                "level": r["level"],
                "tool_cnt": json.loads(r["tool_cnt"]),
                "output": json.loads(r["output"]),
            }
        )
    return out


def _eb_trim(text: str) -> str:
    return text if len(text) <= EB_TRIM else f"{text[:EB_TRIM]} ...[trimmed {len(text) - EB_TRIM} chars]"


def _eb_result(block: dict[str, Any]) -> dict[str, Any]:
    """A ``tool_result`` block with its text (a string or text parts) trimmed, ``is_error`` kept."""
    content = block.get("content")
    if isinstance(content, str):
        return {**block, "content": _eb_trim(content)}
    parts = [
        {**p, "text": _eb_trim(p.get("text", ""))} if isinstance(p, dict) and p.get("type") == "text" else p
        for p in content or []
    ]
    return {**block, "content": parts}


def claude_code_messages(log: str) -> tuple[list[dict[str, Any]], str | None]:
    """Claude Code's session log as Anthropic messages, as ``--format claude-code`` reads it
    (:func:`mcpgym.evaluation.formats.claude_code.session_messages`: the lines of one message
    merged, thinking blocks dropped), each ``tool_result``'s text trimmed; and the session's ``cwd``."""
    from mcpgym.evaluation.formats.claude_code import is_line, session_messages

    lines = [d for d in (json.loads(x) for x in log.splitlines() if x.strip()) if is_line(d)]
    messages, _ = session_messages(lines)
    for m in messages:
        m["content"] = [_eb_result(b) if b.get("type") == "tool_result" else b for b in m["content"]]
    return messages, next((d["cwd"] for d in lines if isinstance(d.get("cwd"), str)), None)


def convert_enterprisebench(src: Source, everything: bool) -> list[dict[str, Any]]:
    """EnterpriseBench's labelled runs as ``{"messages", "cwd", phase / error / failure_class}``
    (results over :data:`EB_TRIM` characters trimmed; ``--all`` changes nothing: the selection
    is every run the labels name)."""
    out = []
    for run in EB_RUNS:
        messages, cwd = claude_code_messages(src.read(EB_REPO, EB_COMMIT, f"{run}/agent_trace.jsonl").decode("utf-8"))
        conv: dict[str, Any] = {"messages": messages}
        if cwd:
            conv["cwd"] = cwd
        try:
            record = json.loads(src.read(EB_REPO, EB_COMMIT, f"{run}/results.json"))
        except (OSError, httpx.HTTPError):
            record = {}  # one run has no results.json
        conv.update({k: record[k] for k in EB_RECORD_KEYS if record.get(k)})
        out.append(conv)
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the four validation files into OUT_DIR; exit 2 if one exists already."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--all", action="store_true", help="every episode, untrimmed, not the labelled selection")
    ap.add_argument("--source-dir", type=Path, help="read DIR/<owner>+<repo>/<path> instead of downloading")
    args = ap.parse_args(argv)
    targets = {
        "tau_bench_airline.json": convert_tau,
        "toolbench_answers.json": convert_toolbench,
        "complexmcp_human.jsonl": convert_complexmcp,
        "enterprisebench_claude_code.json": convert_enterprisebench,
    }
    existing = [n for n in targets if (args.out_dir / n).exists()]
    if existing:
        print(f"not overwriting existing files in {args.out_dir}: {', '.join(existing)}", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    src = Source(args.source_dir)
    for name, convert in targets.items():
        records = convert(src, args.all)
        path = args.out_dir / name
        if name.endswith(".jsonl"):
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        else:
            path.write_text(json.dumps(records, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{path}: {len(records)} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
