"""Rebuild the first-contact validation sources whose transcripts are not committed (issue 35).

Two of the three public sources labelled blind for issue 35 publish no licence, so their
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
  Claude Sonnet 4.5 and DeepSeek V3.2 on real MCP servers (``trajs/<model>_<task>.json``).

The third source, LiveMCPBench (Apache-2.0), is committed as
``tests/data/validation/livemcpbench_claude.json`` (its records in label order, as stored).

Usage: ``python scripts/fetch_first_contact.py OUT_DIR [--source-dir DIR]``: with
``--source-dir``, ``DIR/<owner>+<repo>/<path>`` is read instead of downloading. Existing output
files are never overwritten (the script exits 2 naming them).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "data" / "validation" / "first_contact" / "labels.jsonl"
SOURCES: dict[str, tuple[str, str]] = {
    "mcpmark-community": ("eval-sys/mcpmark-community-experiments", "92db83e36c6da2691141a0698f137665aa0116fe"),
    "toolathlon": ("WaitHZ/toolathlon-traj-website", "3bf7d62c650019de4508278a4637a3ca369c6a90"),
}
"""Source name -> (GitHub repository, pinned commit)."""
TIMEOUT_S = 60.0
"""Deadline of each download, seconds."""
MAX_BYTES = 5_000_000
"""Largest transcript downloaded (the biggest labelled one is under 200 kB)."""


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
    targets = [out / r["file"] for r in records] + [out / "labels.jsonl"]
    existing = [str(t) for t in targets if t.exists()]
    if existing:
        print(f"refusing to overwrite: {', '.join(existing[:5])}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for r in records:
        repo, commit = SOURCES[r["source"]]
        try:
            data = fetch(repo, commit, r["path"], args.source_dir)
        except (httpx.HTTPError, OSError, ValueError) as exc:
            print(f"{r['source']} {r['path']}: {exc}", file=sys.stderr)
            return 2
        (out / r["file"]).write_bytes(data)
    lines = [{k: v for k, v in r.items() if k != "path"} for r in records]
    (out / "labels.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
    )
    print(f"wrote {len(records)} transcripts and labels.jsonl to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
