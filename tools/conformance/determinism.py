"""Determinism checks: across processes (two ``PYTHONHASHSEED`` values), within a process, and
through snapshot -> JSON -> restore."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mcpgym.kernel.world import World, canonical_json
from mcpgym.tools.conformance.common import (
    HASH_SEEDS,
    IMPORTS_ENV,
    ROOT,
    app_state_json,
    first_difference,
    internal_errors,
    run_script,
    world_apps,
)
from mcpgym.tools.invoke import ToolInvoker


def probe(app: str, seed: int) -> dict[str, Any]:
    """What the cross-process check compares: run in a fresh interpreter by :func:`check_determinism`.

    Returns:
        ``initial``/``final``: the app state (JSON data) before and after :func:`run_script`;
        ``world_initial``/``world_final``: world state hashes; ``calls``: the script's call log;
        ``other_seed``: the app state for ``seed + 1`` (canonical JSON). On an exception while
        building or running: ``{"error": "..."}``.
    """
    try:
        world = World(seed, world_apps(app))
        initial = json.loads(app_state_json(world, app))
        world_initial = world.state_hash()
        log = run_script(ToolInvoker(world), app)
        other = World(seed + 1, world_apps(app))
        return {
            "initial": initial,
            "world_initial": world_initial,
            "final": json.loads(app_state_json(world, app)),
            "world_final": world.state_hash(),
            "calls": log,
            "other_seed": app_state_json(other, app),
        }
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def import_extra(entries: Iterable[str]) -> None:
    """Import extra modules: dotted names, or paths of ``.py`` files (loaded under their stem).

    Raises:
        ImportError: when one cannot be imported.
    """
    import importlib
    import importlib.util

    for entry in entries:
        entry = entry.strip()
        if not entry:
            continue
        if entry.endswith(".py"):
            path = Path(entry)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {entry}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        else:
            importlib.import_module(entry)


def _run_probes(
    apps: Sequence[str], seed: int, imports: Sequence[str], timeout: float
) -> tuple[list[dict[str, Any]], list[str]]:
    """Run the probe of every app in two subprocesses (one per :data:`HASH_SEEDS`), in parallel.

    Returns:
        ``(results, problems)``: per subprocess, app -> :func:`probe` output; problems of
        subprocesses that failed as a whole.
    """
    procs = []
    for hs in HASH_SEEDS:
        env = dict(os.environ)
        env["PYTHONHASHSEED"] = hs
        inherited = [i for i in os.environ.get(IMPORTS_ENV, "").split(os.pathsep) if i]
        env[IMPORTS_ENV] = os.pathsep.join([*inherited, *(str(i) for i in imports)])
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        cmd = [sys.executable, "-m", "mcpgym.tools.conformance", "--seed", str(seed), "--probe", *apps]
        procs.append(
            subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    results, problems = [], []
    for hs, proc in zip(HASH_SEEDS, procs, strict=False):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            problems.append(f"the determinism probe (PYTHONHASHSEED={hs}) took longer than {timeout:.0f} s")
            continue
        if proc.returncode != 0:
            tail = " | ".join(err.strip().splitlines()[-3:])
            problems.append(f"the determinism probe (PYTHONHASHSEED={hs}) failed: {tail}")
            continue
        try:
            results.append(json.loads(out))
        except json.JSONDecodeError as exc:  # something printed to stdout besides the probe
            problems.append(f"the determinism probe (PYTHONHASHSEED={hs}) printed no JSON ({exc}): {out[:200]!r}")
    return results, problems


def compare_probes(app: str, seed: int, a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Problems found by comparing the :func:`probe` outputs of two processes for ``app``."""
    for got in (a, b):
        if "error" in got:
            return [f"{app}: building the world or running the script failed: {got['error']}"]
    problems = []
    tag = f"{app} (seed {seed}, PYTHONHASHSEED={HASH_SEEDS[0]} vs {HASH_SEEDS[1]})"
    if a["initial"] != b["initial"] or a["world_initial"] != b["world_initial"]:
        where = first_difference(a["initial"], b["initial"]) or "outside the app state"
        problems.append(
            f"{tag}: generate() is not deterministic: the initial state differs between two processes "
            f"(global random, wall clock, uuid4, hash() or set order?); first difference at {where}"
        )
    else:
        for i, (x, y) in enumerate(zip(a["calls"], b["calls"], strict=False)):
            if x != y:
                where = first_difference(x, y, "call") or "?"
                problems.append(f"{tag}: call {i + 1} ({x['tool']}) gives a different result in two processes: {where}")
                break
        if a["final"] != b["final"] or a["world_final"] != b["world_final"]:
            where = first_difference(a["final"], b["final"]) or "outside the app state"
            problems.append(
                f"{tag}: the same calls lead to different states in two processes; first difference at {where}"
            )
    if a["other_seed"] == canonical_json(a["initial"]):
        problems.append(f"{app}: seeds {seed} and {seed + 1} give the same initial state: generate() ignores the seed")
    problems += [f"{app}: {p}" for p in internal_errors(a["calls"])]
    return problems


def check_determinism_many(
    apps: Sequence[str], seed: int = 7, imports: Sequence[str] = (), timeout: float = 180.0
) -> dict[str, list[str]]:
    """:func:`check_determinism` for several apps with one pair of subprocesses; app -> problems."""
    results, failures = _run_probes(list(apps), seed, imports, timeout)
    if failures or len(results) != 2:
        return {app: [f"{app}: {f}" for f in failures] or [f"{app}: no probe output"] for app in apps}
    return {app: compare_probes(app, seed, results[0][app], results[1][app]) for app in apps}


def check_determinism(app: str, seed: int = 7, imports: Sequence[str] = (), timeout: float = 120.0) -> list[str]:
    """Build the world for ``seed`` and run the conformance script in two subprocesses with
    different ``PYTHONHASHSEED``; initial state, call results and final state must be equal, and
    ``seed + 1`` must give a different initial app state.

    Args:
        app: registered app name (in the subprocess, after importing ``imports``).
        seed: world seed.
        imports: extra modules for the subprocesses (see :data:`IMPORTS_ENV`), e.g. the ``.py``
            file of an app defined by a test.
        timeout: seconds each subprocess may take.
    """
    return check_determinism_many([app], seed, imports, timeout)[app]


def check_in_process_determinism(app: str, seed: int = 7) -> list[str]:
    """Two worlds built one after the other in this process must be equal (no leaked globals)."""
    try:
        a, b = World(seed, world_apps(app)), World(seed, world_apps(app))
    except Exception as exc:
        return [f"{app}: building the world failed: {type(exc).__name__}: {exc}"]
    if a.state_hash() != b.state_hash():
        where = first_difference(json.loads(app_state_json(a, app)), json.loads(app_state_json(b, app)))
        return [f"{app}: two worlds of seed {seed} built in one process differ; first difference at {where}"]
    return []


# -- snapshot / restore ------------------------------------------------------------------------
def check_snapshot_roundtrip(app: str, seed: int = 11) -> list[str]:
    """Snapshot after script round 0, restore from JSON text, compare hashes; then run round 1 on
    both worlds and compare results and hashes again. Also checks ``comparable()`` is JSON data."""
    problems: list[str] = []
    world = World(seed, world_apps(app))
    log = run_script(ToolInvoker(world), app, rounds=(0,))
    problems += [f"{app}: {p}" for p in internal_errors(log)]
    text = json.dumps(world.snapshot(), allow_nan=False)
    try:
        restored = World.restore(json.loads(text))
    except Exception as exc:
        return problems + [f"{app}: World.restore failed on its own snapshot: {type(exc).__name__}: {exc}"]
    if restored.state_hash() != world.state_hash():
        where = first_difference(world.snapshot(), restored.snapshot(), "snapshot")
        problems.append(f"{app}: the restored world has another state hash; first difference at {where}")
        return problems
    log_a = run_script(ToolInvoker(world), app, rounds=(1,))
    log_b = run_script(ToolInvoker(restored), app, rounds=(1,))
    for i, (x, y) in enumerate(zip(log_a, log_b, strict=False)):
        if x != y:
            problems.append(
                f"{app}: after restore, call {i + 1} ({x['tool']}) gives another result: "
                f"{first_difference(x, y, 'call')}"
            )
            break
    if world.state_hash() != restored.state_hash():
        where = first_difference(world.snapshot(), restored.snapshot(), "snapshot")
        problems.append(
            f"{app}: the original and restored worlds diverge under the same calls; first difference at {where}"
        )
    try:
        json.dumps(world.comparable(), allow_nan=False)
    except (TypeError, ValueError) as exc:
        problems.append(f"{app}: world.comparable() is not JSON data: {exc}")
    return problems
