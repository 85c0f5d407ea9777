"""Shared machinery of the benchmark suite: settings, figures, statistics, machine facts.

Every figure is measured as a *ratio against a baseline measured in the same run*: the
baseline runs interleaved with the measured code (call by call, or block by block), each
repetition yields one ratio, and the figure is the median over repetitions. Absolute times
are reported alongside, never asserted by the unit tests.
"""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import statistics
import sys
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Mode = Literal["full", "quick", "tiny"]


@dataclass(frozen=True)
class Settings:
    """How hard each figure works.

    Attributes:
        mode: ``full`` (the default run), ``quick`` (``--quick``: under ~2 minutes on 2 cores)
            or ``tiny`` (the unit test: numbers are meaningless, every code path runs).
        reps: repetitions per figure; the figure is the median of the per-repetition values.
            The three expensive figures repeat less: memory, concurrency and the end-to-end
            run take 3 repetitions in ``full`` and 1 in ``quick``.
        round_trips: timed tool calls per repetition of a transport figure (per server).
        inproc_calls: timed calls per repetition of the in-process call-path figure.
        worlds: worlds built per repetition of the world-creation figure.
        episodes: live episodes held for the memory figure (the issue says 500).
        concurrent_episodes / calls_per_episode: the concurrency figure (100 x 20).
        trajectories / steps_per_trajectory: synthetic trajectories scored per repetition.
        e2e_trials: trials per task of the end-to-end ``mcpgym run`` figure.
    """

    mode: Mode = "full"
    reps: int = 7
    round_trips: int = 300
    inproc_calls: int = 2000
    worlds: int = 20
    episodes: int = 500
    concurrent_episodes: int = 100
    calls_per_episode: int = 20
    trajectories: int = 200
    steps_per_trajectory: int = 30
    e2e_trials: int = 2

    @classmethod
    def for_mode(cls, mode: Mode) -> Settings:
        """The settings of ``full``, ``quick`` or ``tiny``.

        Raises:
            ValueError: for another mode.
        """
        if mode == "full":
            return cls()
        if mode == "quick":
            return cls(
                mode="quick",
                reps=5,
                round_trips=40,
                inproc_calls=1000,
                worlds=6,
                episodes=500,
                concurrent_episodes=100,
                calls_per_episode=20,
                trajectories=60,
                steps_per_trajectory=30,
                e2e_trials=1,
            )
        if mode == "tiny":
            return cls(
                mode="tiny",
                reps=2,
                round_trips=6,
                inproc_calls=20,
                worlds=2,
                episodes=4,
                concurrent_episodes=3,
                calls_per_episode=4,
                trajectories=4,
                steps_per_trajectory=12,
                e2e_trials=1,
            )
        raise ValueError(f"unknown benchmark mode {mode!r}: full, quick or tiny")


@dataclass
class Figure:
    """One row of the benchmark table.

    Attributes:
        name: stable key (``stdio_round_trip``...).
        title: what is measured, for the table.
        value: the figure (median over repetitions); None only when ``available`` is False.
        unit: unit of ``value`` (``x no-op``, ``ms``, ``MiB``, ``steps/s``, ``errors``, ``s``).
        target: the target ``value`` is compared with; None for a reported-only figure.
        op: ``<=`` (at most) or ``>=`` (at least).
        baseline: what the ratio divides by, in words.
        ratio: ``value`` expressed against ``baseline`` when ``value`` itself is absolute
            (world creation, memory, throughput...); for ratio figures it equals ``value``.
        details: medians of the raw measurements, per-repetition values, counts.
        available: False when the figure could not be measured (``note`` says why).
        note: free text (why unavailable, what was profiled...).
    """

    name: str
    title: str
    value: float | None
    unit: str
    target: float | None
    op: Literal["<=", ">="] = "<="
    baseline: str = ""
    ratio: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    available: bool = True
    note: str = ""

    @property
    def checked(self) -> bool:
        """True when the figure has a target that ``--check`` enforces."""
        return self.target is not None

    @property
    def ok(self) -> bool | None:
        """Whether the target is met (None for a reported-only or unavailable figure). A figure
        with sub-targets (``label_agreement``: every field) lists the missed ones in
        ``details["failed_subtargets"]``; any of them fails the figure."""
        if self.target is None or self.value is None:
            return None
        if self.details.get("failed_subtargets"):
            return False
        return self.value <= self.target if self.op == "<=" else self.value >= self.target

    def to_json(self) -> dict[str, Any]:
        """The JSON row (the dataclass fields plus ``ok`` and ``checked``)."""
        data = asdict(self)
        data["ok"] = self.ok
        data["checked"] = self.checked
        return data


def median(values: Iterable[float]) -> float:
    """Median of ``values``.

    Raises:
        statistics.StatisticsError: for no values.
    """
    return float(statistics.median(list(values)))


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, nearest-rank method.

    Raises:
        ValueError: for no values or ``q`` outside [0, 100].
    """
    data = sorted(values)
    if not data:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    rank = max(1, -(-len(data) * q // 100))  # ceil(n * q / 100), at least 1
    return float(data[int(rank) - 1])


class gc_paused:
    """Context manager: collect garbage, then keep the cyclic collector off inside the block.

    Used around short timed loops so that a collection triggered by one side does not land
    on the other side's timings; both sides of a ratio run inside the same block.
    """

    def __enter__(self) -> gc_paused:
        self._was = gc.isenabled()
        gc.collect()
        gc.disable()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._was:
            gc.enable()


def cpu_split() -> tuple[set[int], set[int]] | None:
    """(server CPUs, client CPUs) for the transport figures: the last CPU this process may use
    for the servers, the others for the client; None with fewer than two CPUs.

    Pinning both servers of a comparison to the same CPU makes whatever else runs on the
    machine slow them down alike (their calls alternate, so they never compete with each
    other), and keeps the client's own work off that CPU.
    """
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if len(cpus) < 2:
        return None
    return {cpus[-1]}, set(cpus[:-1])


@contextlib.contextmanager
def pinned(cpus: set[int] | None) -> Iterator[None]:
    """Run the block with this thread's CPU affinity set to ``cpus`` (no-op for None);
    processes started inside inherit it."""
    if cpus is None:
        yield
        return
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, saved)


def process_cpu_ns(pid: int) -> int:
    """CPU time in nanoseconds that the live threads of process ``pid`` have run so far: the
    sum of the first field of ``/proc/<pid>/task/<tid>/schedstat`` (Linux; time on a CPU, not
    time waiting for one). A thread that has ended no longer counts, so a difference of two
    readings is exact for processes whose threads live through it (the benchmark's servers
    and client: event loops and pooled worker threads).

    Raises:
        OSError: where ``/proc/<pid>/task`` is not available (not Linux) or ``pid`` is gone.
    """
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as fh:
                total += int(fh.read().split()[0])
        except FileNotFoundError:  # a thread that ended after the listing
            continue
    return total


def rss_bytes() -> int:
    """Resident set size of this process in bytes (from ``/proc/self/statm``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def machine() -> dict[str, Any]:
    """Facts about the machine: cores, CPU model, memory, Python and key package versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
                    break
    except (OSError, ValueError):
        pass
    versions: dict[str, str | None] = {}
    for pkg in ("mcp", "pydantic", "pydantic_core", "starlette", "uvicorn", "anyio"):
        try:
            from importlib.metadata import version

            versions[pkg] = version(pkg.replace("_", "-"))
        except Exception:  # noqa: BLE001 - a missing package is reported as such
            versions[pkg] = None
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": mem_gib,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in load] if load else None,
        "packages": versions,
    }


__all__ = [
    "Figure",
    "Mode",
    "Settings",
    "cpu_split",
    "gc_paused",
    "machine",
    "median",
    "percentile",
    "pinned",
    "rss_bytes",
]
