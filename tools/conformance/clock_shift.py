"""Conformance check: a write's outcome does not depend on the exact virtual time it ran at.

The judge compares the final state with the gold state field by field (docs/design.md,
"Outcome"). The gold state comes from the task's oracle, whose calls run at other virtual
times than an agent's (an agent reads first, retries, waits), so any state field a write
copies from the clock (``created_at = self.world.clock.now``) differs from gold by a few
virtual seconds and the episode fails although the agent did everything right: a silent
mis-score. Such a field must be marked ``VOLATILE`` (:mod:`mcpgym.kernel.volatile`), which
removes it from the comparison.

:func:`check_clock_shift` runs every write tool twice, from the same state, once at the
world's clock and once at a clock shifted by a few virtual seconds, and reports every
comparable field (``World.comparable()``) that differs between the two outcomes. A tool whose
effect really depends on the time (a market order filled only during trading hours) declares
it with ``@tool(..., time_dependent="<how the judge compares>")``; the check skips it and the
declaration is shown in the catalog, so a task author knows that its gold state holds only
when the oracle's clock matches the agent's.
"""

from __future__ import annotations

from typing import Any

from mcpgym.kernel.spec import ToolKind
from mcpgym.kernel.world import World
from mcpgym.tools.conformance.args import example_arguments, known_values
from mcpgym.tools.conformance.common import app_cls, first_difference, grant_all_privileges, world_apps
from mcpgym.tools.invoke import ToolInvoker

SHIFTS: tuple[int, ...] = (7, 61)
"""Virtual seconds the clock is moved forward for the second run (small: like an agent's
extra reads and retries, far from hour or day boundaries)."""


def check_clock_shift(app: str | type, seed: int = 5, salts: int = 3, shifts: tuple[int, ...] = SHIFTS) -> list[str]:
    """Replay each write tool of ``app`` at a shifted virtual clock; report clock-derived fields.

    For each write tool (tools declaring ``time_dependent`` are skipped) and each of ``salts``
    argument sets (:func:`example_arguments`, privileges granted first): the call runs on the
    world as it is, then, after restoring the state, on the world with its clock moved forward
    by each of ``shifts``. When both runs succeed, their comparable states (volatile fields
    removed) must be equal; when only one succeeds, that is reported too.

    Args:
        app: a registered app name (or class).
        seed: world seed.
        salts: argument sets per tool.
        shifts: virtual seconds to move the clock forward.

    Returns:
        Problems such as ``office_send_mail: state.office.sent[0].sent_at differs when the
        virtual clock is 7 s later (...): mark the field VOLATILE or declare the tool
        time_dependent``; empty when nothing depends on the clock.
    """
    cls = app_cls(app)
    world = World(seed, world_apps(cls.name))
    invoker = ToolInvoker(world)
    grant_all_privileges(invoker)
    known = known_values(world, cls.name)
    problems: list[str] = []
    for name, spec in sorted(cls.tools.items()):
        if spec.kind == ToolKind.READ or spec.time_dependent:
            continue
        reported = False
        for salt in range(salts):
            if reported:
                break
            args = example_arguments(spec, world, f"clock-{salt}", known)
            saved = world.checkpoint()
            start = world.clock.now
            base_ok, base_state = _run(invoker, name, args)
            for shift in shifts:
                world.rollback(saved)
                world.clock.now = start + shift
                ok, state = _run(invoker, name, args)
                if ok != base_ok:
                    problems.append(
                        f"{name}({_args(args)}): {'succeeds' if ok else 'fails'} when the virtual clock is "
                        f"{shift} s later but {'succeeds' if base_ok else 'fails'} at the original time: "
                        f"declare the tool time_dependent"
                    )
                    reported = True
                    break
                if ok:
                    diff = first_difference(base_state, state, "state")
                    if diff is not None:
                        problems.append(
                            f"{name}({_args(args)}): {diff} differs when the virtual clock is {shift} s "
                            f"later: mark the field VOLATILE (or declare the tool time_dependent)"
                        )
                        reported = True
                        break
            world.rollback(saved)
    return problems


def _run(invoker: ToolInvoker, name: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Run one call; (succeeded, comparable state afterwards)."""
    out = invoker.call(name, args)
    return not out.is_error, invoker.world.comparable()


def _args(args: dict[str, Any]) -> str:
    from mcpgym.tools.conformance.common import short

    return short(args)


__all__ = ["SHIFTS", "check_clock_shift"]
