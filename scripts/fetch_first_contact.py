"""Rebuild the first-contact validation sources whose transcripts are not committed (issue 35).

Three of the five public sources labelled blind for issue 35 publish no licence, so their
transcripts stay out of the repository; their hand labels are committed in
``tests/data/validation/first_contact/labels.jsonl`` (one line per episode, with the source
file's ``path``). This script downloads each labelled transcript from GitHub at the pinned
commit, as the source stores it, into ``OUT_DIR/<item>.json``, and writes
``OUT_DIR/labels.jsonl`` (the committed labels), so that::

    MCPGYM_VALIDATION_DIR=OUT_DIR python -m mcpgym.benchmarks --only label_agreement

measures mcpgym's agreement on them (docs/labelling.md, "First contact"):

* ``mcpmark-community``: eval-sys/mcpmark-community-experiments at ``92db83e``, OpenAI Agents
  SDK runs (``RunResult.to_input_list()``) of Claude Sonnet 4 / 4.5 on real GitHub, Notion and
  Postgres MCP servers (``mcp_servers/<service>/<server>/run-1/<task>/messages.json``);
* ``toolathlon``: WaitHZ/toolathlon-traj-website at ``3bf7d62``, Toolathlon trajectories of
  Claude Sonnet 4.5 and DeepSeek V3.2 on real MCP servers (``trajs/<model>_<task>.json``);
* ``skill-vs-mcp``: aniruddha-chaudhari/skill-vs-mcp-benchmarks at ``0baa698``, opencode runs
  of Claude Sonnet 4.6, GPT-5.3 Codex, Gemini 3 Flash, Grok Code Fast 1 and MiniMax M2.5 with the
  Playwright MCP server, bash, Google Workspace's ``gws`` CLI and opencode's file tools
  (``eval/eval-results/<provider>_<model>/<suite>/<task>/agent-output.jsonl``, :data:`CONVERTED`):
  opencode's event logs, converted into one file of chat conversations
  (:func:`opencode_conversations`, the labeller's conversion; the prompts from the task files);
* ``mcp-universe-salesforce``: mcp-universe/mcp-universe.github.io at ``7eb7931``, GPT-5 in
  MCP-Universe's ReAct agent and Cursor 1.5.11 on Salesforce's AIOps MCP servers
  (``salesforce/assets/*_data.json``, :data:`CONVERTED`): stored as trajectory steps no format
  reads, so its three files are converted into one file of OpenAI chat conversations
  (:func:`mcp_universe_conversations`, the labeller's conversion: the labels count its
  messages);
* ``claude-code-github``: Claude Code session logs people committed to their own repositories
  (SkogAI/claude's ``~/.claude`` copy, two Solana hackathon repositories'
  ``claude-session.jsonl``), read as stored by ``--format claude-code``. Its episodes come from
  several repositories: each label record names its own ``repo`` and ``commit``.

LiveMCPBench (Apache-2.0), is committed as
``tests/data/validation/livemcpbench_claude.json`` (its records in label order, as stored).

Usage: ``python scripts/fetch_first_contact.py OUT_DIR [--source-dir DIR]``: with
``--source-dir``, ``DIR/<owner>+<repo>/<path>`` is read instead of downloading. Existing output
files are never overwritten (the script exits 2 naming them).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "data" / "validation" / "first_contact" / "labels.jsonl"
MORE_LABELS = (LABELS.with_name("second_labels.jsonl"), LABELS.with_name("third_labels.jsonl"))
"""The second blind labeller's labels of the same episodes and the third's of the pairs the
first two split on (docs/labelling.md, "A second labeller"), copied beside ``labels.jsonl``
when present."""
SOURCES: dict[str, tuple[str, str]] = {
    "mcpmark-community": ("eval-sys/mcpmark-community-experiments", "92db83e36c6da2691141a0698f137665aa0116fe"),
    "toolathlon": ("WaitHZ/toolathlon-traj-website", "3bf7d62c650019de4508278a4637a3ca369c6a90"),
    "mcp-universe-salesforce": ("mcp-universe/mcp-universe.github.io", "7eb7931d8e934928682a50a0738b7db9f5f40eb6"),
    "skill-vs-mcp": ("aniruddha-chaudhari/skill-vs-mcp-benchmarks", "0baa69878f6fc2e2bfa1c0fd1b77b41bfe9d6415"),
}
"""Source name -> (GitHub repository, pinned commit)."""
TIMEOUT_S = 60.0
"""Deadline of each download, seconds."""
MAX_BYTES = 5_000_000
"""Largest file downloaded (the biggest, MCP-Universe's GPT-5 trajectories, is 2.4 MB)."""


RESULT_TRIM = 2000
"""MCP-Universe tool results longer than this many characters are cut to it and end with
`` ...[trimmed N chars]`` (the labeller's conversion; every error text is in the first 200)."""


def _trimmed(value: Any) -> str:
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= RESULT_TRIM else text[:RESULT_TRIM] + f" ...[trimmed {len(text) - RESULT_TRIM} chars]"


def _arguments(value: Any) -> str:
    # GPT-5's files store the arguments as a Python repr, Cursor's as a dict
    if value is None:
        return "{}"
    if isinstance(value, dict):
        return json.dumps(value)
    try:
        return json.dumps(ast.literal_eval(value))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return json.dumps({"_raw": value})


def mcp_universe_conversations(files: dict[str, bytes]) -> bytes:
    """MCP-Universe's trajectory files (path -> bytes, in :data:`CONVERTED` order) as one JSON
    list of ``{"messages", "source_file", "trajectory_id", "trace_id"}``, the messages in the
    OpenAI chat form: the ``question`` as the user's; per step with a ``tool_name`` an assistant
    message (its ``llm_response``, one tool call ``call_<trajectory_id>_<n>`` with
    ``action_input`` as JSON) and the ``tool`` answer (:data:`RESULT_TRIM`); a step without a
    tool, its ``llm_response`` as assistant text; last the ``answer`` verbatim as the assistant's.

    Raises:
        ValueError: a file that is not JSON; KeyError: one without ``trajectories``.
    """
    out = []
    for path, data in files.items():
        for t in json.loads(data)["trajectories"]:
            msgs: list[dict[str, Any]] = [{"role": "user", "content": t["question"]}]
            n = 0
            for step in t["steps"]:
                if step.get("tool_name"):
                    n += 1
                    cid = f"call_{t['trajectory_id']}_{n}"
                    call = {"name": step["tool_name"], "arguments": _arguments(step.get("action_input"))}
                    msgs.append(
                        {
                            "role": "assistant",
                            "content": step.get("llm_response") or None,
                            "tool_calls": [{"id": cid, "type": "function", "function": call}],
                        }
                    )
                    msgs.append({"role": "tool", "tool_call_id": cid, "content": _trimmed(step.get("tool_result"))})
                elif step.get("llm_response"):
                    msgs.append({"role": "assistant", "content": step["llm_response"]})
            answer = t.get("answer")
            msgs.append({"role": "assistant", "content": answer if isinstance(answer, str) else json.dumps(answer)})
            out.append(
                {
                    "messages": msgs,
                    "source_file": path,
                    "trajectory_id": t["trajectory_id"],
                    "trace_id": t.get("trace_id"),
                }
            )
    return json.dumps(out, indent=1).encode("utf-8")


OPENCODE_RESULTS = "eval/eval-results/"
"""Where skill-vs-mcp-benchmarks keeps its runs: ``<provider>_<model>/<suite>/<task>/agent-output.jsonl``."""
OPENCODE_CONFIGS: dict[str, str] = {
    "web-browsing-hard-playwright-mcp": "eval/tasks/eval-config-hard.json",
    "web-browsing-hard-pinchtab": "eval/tasks/eval-config-hard.json",
    "web-browsing-hard-agent-browser": "eval/tasks/eval-config-hard.json",
    "google-workspace-gws-cli": "eval/tasks/eval-config-google-workspace.json",
    "file-management": "eval/tasks/eval-config-file-management.json",
    "file-management-skills": "eval/tasks/eval-config-file-management-skills.json",
}
"""Suite -> the task file its prompts come from (the runs do not store the prompt)."""
OPENCODE_RUNS: tuple[str, ...] = tuple(
    OPENCODE_RESULTS + run + "/agent-output.jsonl"
    for run in (
        "github-copilot_grok-code-fast-1/web-browsing-hard-playwright-mcp/EVAL_HN_001_hacker-news-top-story-thread-deep-dive",
        "github-copilot_grok-code-fast-1/web-browsing-hard-playwright-mcp/EVAL_STACKOVERFLOW_002_stack-overflow-answer-audit-with-code-block-detection",
        "opencode_minimax-m2.5-free/web-browsing-hard-playwright-mcp/EVAL_PYPI_001_pypi-package-release-history-delta",
        "github-copilot_gemini-3-flash-preview/web-browsing-hard-playwright-mcp/EVAL_GH_002_github-cross-repo-contributor-overlap-analysis",
        "github-copilot_gpt-5.3-codex/web-browsing-hard-playwright-mcp/EVAL_GH_002_github-cross-repo-contributor-overlap-analysis",
        "github-copilot_claude-sonnet-4.6/web-browsing-hard-playwright-mcp/EVAL_GH_002_github-cross-repo-contributor-overlap-analysis",
        "opencode_minimax-m2.5-free/web-browsing-hard-playwright-mcp/EVAL_STACKOVERFLOW_002_stack-overflow-answer-audit-with-code-block-detection",
        "github-copilot_grok-code-fast-1/google-workspace-gws-cli/EVAL_GWS_005_google-drive-file-hygiene-audit-stale-oversized-public-files",
        "github-copilot_claude-sonnet-4.6/google-workspace-gws-cli/EVAL_GWS_002_gmail-smart-draft-replies-for-a-project-thread",
        "github-copilot_gpt-5.3-codex/google-workspace-gws-cli/EVAL_GWS_002_gmail-smart-draft-replies-for-a-project-thread",
        "github-copilot_claude-sonnet-4.6/google-workspace-gws-cli/EVAL_GWS_001_gmail-unread-inbox-triage-sender-domain-breakdown",
        "github-copilot_gemini-3-flash-preview/google-workspace-gws-cli/EVAL_GWS_002_gmail-smart-draft-replies-for-a-project-thread",
        "github-copilot_claude-sonnet-4.6/file-management-skills/EVAL_FM_015_powerpoint-add-agenda-slide-after-title-slide",
        "github-copilot_gemini-3-flash-preview/file-management-skills/EVAL_FM_015_powerpoint-add-agenda-slide-after-title-slide",
        "opencode_minimax-m2.5-free/file-management/EVAL_FM_005_powerpoint-slide-deck-restructure-style-normalization",
        "github-copilot_claude-sonnet-4.6/file-management-skills/EVAL_FM_010_excel-word-cross-format-report-generation-from-pivot-analysi",
        "opencode_minimax-m2.5-free/file-management-skills/EVAL_FM_009_excel-extract-failed-students-from-exam-results",
        "github-copilot_gpt-5.3-codex/file-management-skills/EVAL_FM_002_word-tracked-changes-redline-review-selective-accept",
        "github-copilot_grok-code-fast-1/web-browsing-hard-agent-browser/EVAL_NPM_001_npm-dependency-chain-depth-analysis",
        "github-copilot_claude-sonnet-4.6/web-browsing-hard-pinchtab/EVAL_GH_002_github-cross-repo-contributor-overlap-analysis",
        "github-copilot_gpt-5.3-codex/web-browsing-hard-agent-browser/EVAL_GH_002_github-cross-repo-contributor-overlap-analysis",
    )
)
"""The 21 labelled opencode runs, in label order (picked for coverage: docs/labelling.md)."""


def _opencode_prompt(task: dict[str, Any]) -> str:
    """The prompt opencode was given for ``task``, built as the benchmark's runner builds it:
    the task's ``prompt``, then its input and output files, each list under its heading."""
    lines: list[str] = []
    for key, heading in (("inputFiles", "INPUT FILES (read these):"), ("outputFiles", "OUTPUT FILES (save results to exactly these paths):")):  # fmt: skip
        if task.get(key):
            lines += [heading, *(f"  - {f}" for f in task[key])]
    return task["prompt"] + ("\n\n" + "\n".join(lines) if lines else "")


def _opencode_messages(events: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    """One opencode run (its ``run --format json`` events) as chat messages: the prompt as the
    user's; per model step (``part.messageID``) one assistant message, its ``text`` parts
    joined by a blank line and its ``tool_use`` parts as tool calls ``c1``, ``c2``... (the
    input as JSON), each answered by a ``tool`` message (``state.output``, or ``state.error``
    when the call failed; :data:`RESULT_TRIM` characters at most, cut without a mark); a step
    that ends the run with nothing, an empty assistant message. Run-level ``error`` events
    (the harness's, outside any result) are left out."""
    msgs: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    turn: dict[str, Any] | None = None
    answers: list[dict[str, Any]] = []
    turn_id, n = None, 0

    def close() -> None:
        nonlocal turn, answers
        if turn is not None:
            if not turn["tool_calls"]:
                del turn["tool_calls"]
            msgs.append(turn)
            msgs.extend(answers)
        turn, answers = None, []

    for e in events:
        kind, part = e.get("type"), e.get("part") or {}
        if kind == "step_finish" and part.get("reason") == "stop" and part.get("messageID") != turn_id:
            close()
            turn_id, turn = part.get("messageID"), {"role": "assistant", "content": "", "tool_calls": []}
            continue
        if kind not in ("text", "tool_use"):
            continue
        if part["messageID"] != turn_id:
            close()
            turn_id, turn = part["messageID"], {"role": "assistant", "content": "", "tool_calls": []}
        assert turn is not None
        if kind == "text":
            turn["content"] = turn["content"] + "\n\n" + part["text"] if turn["content"] else part["text"]
            continue
        n += 1
        state = part["state"]
        call = {"name": part["tool"], "arguments": json.dumps(state.get("input", {}), ensure_ascii=False)}
        turn["tool_calls"].append({"id": f"c{n}", "type": "function", "function": call})
        result = state.get("output") if state["status"] == "completed" else state.get("error")
        text = "" if result is None else str(result)
        answers.append({"role": "tool", "tool_call_id": f"c{n}", "content": text[:RESULT_TRIM]})
    close()
    return msgs


def opencode_conversations(files: dict[str, bytes]) -> bytes:
    """skill-vs-mcp-benchmarks' opencode runs (:data:`OPENCODE_RUNS`, with the task files of
    :data:`OPENCODE_CONFIGS`) as one JSON list of ``{"id": <run path>, "messages"}``
    (:func:`_opencode_messages`), the labeller's conversion byte for byte.

    Raises:
        ValueError: a run or task file that is not JSON (lines); KeyError: a task the runs'
            suite file lacks.
    """
    tasks: dict[str, dict[str, Any]] = {}
    for path in dict.fromkeys(OPENCODE_CONFIGS.values()):
        tasks |= {path + "#" + t["id"]: t for t in json.loads(files[path])["tasks"]}
    out = []
    for path in OPENCODE_RUNS:
        _, suite, task_dir = path[len(OPENCODE_RESULTS) :].split("/")[:3]
        task = tasks[OPENCODE_CONFIGS[suite] + "#" + "_".join(task_dir.split("_")[:3])]
        events = [json.loads(line) for line in files[path].decode("utf-8").splitlines() if line.strip()]
        out.append({"id": path, "messages": _opencode_messages(events, _opencode_prompt(task))})
    return json.dumps(out, ensure_ascii=False, indent=1).encode("utf-8")


CONVERTED: dict[str, tuple[tuple[str, ...], Callable[[dict[str, bytes]], bytes]]] = {
    "skill-vs-mcp": (OPENCODE_RUNS + tuple(dict.fromkeys(OPENCODE_CONFIGS.values())), opencode_conversations),
    "mcp-universe-salesforce": (
        (
            "salesforce/assets/gpt_5_no_trans_traj_data.json",
            "salesforce/assets/gpt_5_trajectories_data.json",
            "salesforce/assets/cursor_trajectories_data.json",
        ),
        mcp_universe_conversations,
    ),
}
"""Sources stored in no format mcpgym reads: source -> (its files, in order; the conversion of
their bytes into the one labelled file, every record of the source naming that ``file``)."""


def fetch(repo: str, commit: str, path: str, source_dir: Path | None) -> bytes:
    """The bytes of ``path`` in ``repo`` at ``commit`` (from ``source_dir`` when given).

    Raises:
        httpx.HTTPError: a failed download. ValueError: a file over :data:`MAX_BYTES`.
    """
    if source_dir is not None:
        data = (source_dir / repo.replace("/", "+") / path).read_bytes()
    else:
        url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
        resp = httpx.get(url, timeout=TIMEOUT_S, follow_redirects=True)
        resp.raise_for_status()
        data = resp.content
    if len(data) > MAX_BYTES:
        raise ValueError(f"{repo}/{path}: {len(data)} bytes, over {MAX_BYTES}")
    return data


def main(argv: list[str] | None = None) -> int:
    """Write every labelled transcript and ``labels.jsonl`` into OUT_DIR (module docstring).

    Returns:
        0 on success; 2 when an output file exists already or a download fails (the message
        names it).
    """
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--source-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    records = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: Path = args.out_dir
    more = {p.name: p.read_text(encoding="utf-8") for p in MORE_LABELS if p.is_file()}
    targets = [out / f for f in dict.fromkeys(r["file"] for r in records)] + [out / "labels.jsonl"]
    targets += [out / name for name in more]
    existing = [str(t) for t in targets if t.exists()]
    if existing:
        print(f"refusing to overwrite: {', '.join(existing[:5])}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for r in records:
        if (out / r["file"]).exists():  # a converted file, written for an earlier record of its source
            continue
        repo, commit = (r["repo"], r["commit"]) if "repo" in r else SOURCES[r["source"]]
        paths, convert = CONVERTED.get(r["source"], ((r["path"],), None))
        try:
            got = {p: fetch(repo, commit, p, args.source_dir) for p in paths}
            data = convert(got) if convert is not None else got[r["path"]]
        except (httpx.HTTPError, OSError, ValueError, KeyError) as exc:
            print(f"{r['source']} {r['path']}: {exc}", file=sys.stderr)
            return 2
        (out / r["file"]).write_bytes(data)
    lines = [{k: v for k, v in r.items() if k not in ("path", "repo", "commit")} for r in records]
    (out / "labels.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
    )
    for name, text in more.items():  # the second and third labellers' (docs/labelling.md)
        (out / name).write_text(text, encoding="utf-8")
    print(f"wrote the transcripts of {len(records)} labelled episodes and labels.jsonl to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
