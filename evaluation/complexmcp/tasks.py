"""ComplexMCP's 47 tasks, read from their ``benchmark/data/data.parquet`` (needs pyarrow).

Each row: ``seed`` (the apps' seed), ``query`` (the instruction, ending with their request to
write ``[END]``), ``apps`` (JSON list: the apps logged into besides LightSystem), ``level``
(1-3: their difficulty), ``output`` (the human's transcript, JSON-encoded text), ``tool_cnt``
(JSON: tool -> status -> calls in that transcript) and ``gt_env`` (JSON: app -> its ``logout``
answer after the human's run: the gold state). mcpgym names the task of row i ``complexmcp_NN``
(``complexmcp_00`` .. ``complexmcp_46``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.evaluation.complexmcp.apps import APP_NAMES

DATA_FILE = Path("benchmark") / "data" / "data.parquet"
"""Where the tasks are, inside a ComplexMCP tree."""
DEFAULT_MAX_CALLS = 100
"""Their harness's turn budget per task (``max_turns=100`` in ``run_benchmark.py``)."""


class ComplexTask(BaseModel):
    """One ComplexMCP task (module docstring), shaped as mcpgym's runners read a task.

    Attributes:
        id: ``complexmcp_NN``. index: the parquet row. seed, level, instruction (their ``query``).
        apps: the apps besides LightSystem. transcript: the human's text transcript.
        tool_cnt: tool -> status -> count. gold: app -> ``logout`` envelope.
        max_calls: the call budget.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    index: int = Field(ge=0)
    seed: int
    level: int = Field(ge=1, le=3)
    instruction: str = Field(min_length=1)
    apps: list[str]
    transcript: str
    tool_cnt: dict[str, dict[str, int]]
    gold: dict[str, Any]
    max_calls: int = Field(DEFAULT_MAX_CALLS, ge=1, le=10_000)

    # what mcpgym's agents may read of a task besides the instruction
    oracle: Any = Field(None, exclude=True)
    user: Any = Field(None, exclude=True)
    feasible: bool | None = Field(None, exclude=True)
    tags: list[str] = Field(default_factory=list, exclude=True)
    faults: Any = Field(None, exclude=True)
    checks: list[Any] = Field(default_factory=list, exclude=True)

    @property
    def provided_tools(self) -> list[str]:
        """The tools of the human's transcript (``tool_cnt``'s keys): their ``provide`` mode."""
        return list(self.tool_cnt)


def load_tasks(tree: Path) -> list[ComplexTask]:
    """The tasks of the ComplexMCP tree ``tree`` (its ``benchmark/data/data.parquet``).

    Raises:
        ValueError: the file is missing or unreadable (pyarrow absent included), or a row does
            not have the fields above (naming the row and the field).
    """
    path = tree / DATA_FILE
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        raise ValueError("reading ComplexMCP's tasks needs pyarrow (pip install 'mcpgym[dev]')") from None
    if not path.is_file():
        raise ValueError(f"{path}: no such file (a ComplexMCP tree has benchmark/data/data.parquet)")
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many kinds for a broken file
        raise ValueError(f"{path}: cannot read the parquet file: {exc}") from None
    tasks = []
    for i, row in enumerate(rows):
        try:
            apps = json.loads(row["apps"])
            unknown = [a for a in apps if a not in APP_NAMES]
            if unknown:
                raise ValueError(f"unknown app {unknown[0]!r}")
            tasks.append(
                ComplexTask(
                    id=f"complexmcp_{i:02d}",
                    index=i,
                    seed=int(row["seed"]),
                    level=int(row["level"]),
                    instruction=str(row["query"]),
                    apps=apps,
                    transcript=json.loads(row["output"]),
                    tool_cnt=json.loads(row["tool_cnt"]),
                    gold=json.loads(row["gt_env"]),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: row {i}: {type(exc).__name__}: {str(exc)[:300]}") from None
    return tasks
