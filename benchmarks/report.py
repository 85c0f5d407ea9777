"""Output of the benchmark suite: a rich table, a JSON document and a Markdown table."""

from __future__ import annotations

from typing import Any

from mcpgym.benchmarks.harness import Figure


def _num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".strip()


def target_text(fig: Figure) -> str:
    """``<= 1.3 x no-op``, ``>= 50,000 steps/s``, or ``reported``."""
    if fig.target is None:
        return "reported"
    return f"{fig.op} {_num(fig.target, fig.unit)}"


def status_text(fig: Figure) -> str:
    """``ok`` / ``MISSED`` / ``n/a`` / ``info``."""
    if not fig.available:
        return "n/a"
    ok = fig.ok
    return "info" if ok is None else ("ok" if ok else "MISSED")


def detail_text(fig: Figure) -> str:
    """The few raw numbers that explain a figure, for the table's last column ("" when its
    details lack them)."""
    try:
        return _detail_text(fig)
    except (KeyError, TypeError, ValueError):
        return fig.note


def _detail_text(fig: Figure) -> str:
    d = fig.details
    if not fig.available:
        return fig.note
    name = fig.name
    if name in ("stdio_round_trip", "http_round_trip"):
        return f"ours {d['ours_median_ms']:.2f} ms, no-op {d['noop_median_ms']:.2f} ms"
    if name == "inproc_call_path":
        return f"invoker {d['invoker_median_us']:.1f} us, direct {d['direct_median_us']:.1f} us"
    if name == "world_creation":
        return (
            f"restore {d['restore_ms']:.2f} ms, system-only {d['system_only_ms']:.2f} ms "
            f"({d['ratio_vs_system_only']:.0f}x); wall {d['wall_ms']:.1f} ms"
        )
    if name == "episode_memory":
        return f"tracemalloc {d['tracemalloc_mib']:.2f} MiB; snapshot JSON {d['snapshot_json_kib']:.0f} KiB"
    if name == "http_concurrency":
        return (
            f"p50 {_num(d['p50_ms'], 'ms')}, p99 {_num(d['p99_ms'], 'ms')}, {_num(d['calls_per_second'])} "
            f"calls/s; no-op p50 {_num(d['noop_p50_ms'], 'ms')}, p99 {_num(d['noop_p99_ms'], 'ms')}, "
            f"{_num(d['noop_calls_per_second'])} calls/s; one episode alone p50 {_num(d['alone_p50_ms'], 'ms')}"
        )
    if name == "scoring_throughput":
        per = ", ".join(f"{k} {v:,}/s" for k, v in d["steps_per_s_by_profile"].items())
        return f"{d['steps']} steps in {d['trajectories']} trajectories ({per})"
    if name in ("episode_all_apps", "episode_one_app"):
        return (
            f"create {d['create_ms']:.2f} + calls {d['calls_ms']:.2f} + judge {d['judge_ms']:.2f} ms; "
            f"{_num(d['episodes_per_cpu_second'])} episodes per CPU second"
        )
    if name == "http_episodes":
        return (
            f"{d['episodes_per_second']:g} episodes/s vs {d['noop_sessions_per_second']:g} no-op sessions/s; "
            f"CPU ms (server + client) {d['episode_server_cpu_ms']:g} + {d['episode_client_cpu_ms']:g} vs "
            f"no-op {d['noop_server_cpu_ms']:g} + {d['noop_client_cpu_ms']:g} ({d['cpu_ratio']:g}x); "
            f"control API's path (create, session, delete) {d['control_api_ratio']:g}x; {d['errors']} errors"
        )
    if name == "judge_time":
        return f"judge {d['judge_ms']:.2f} ms, restore {d['restore_ms']:.2f} ms"
    if name == "gc_pause":
        return (
            f"{d['tracked_objects']:,} tracked objects ({d['tracked_per_episode']:.0f} per episode, "
            f"{d.get('hot_episodes', '?')} hot); before the episodes {d['empty_ms']:.1f} ms"
        )
    if name == "ray_overhead":
        return (
            f"{d['episodes_per_run']} episodes: ray {d['ray_episodes_per_s']:g}/s, local "
            f"{d['local_episodes_per_s']:g}/s; cluster start {d['cluster_start_s']:g} s (apart); "
            f"same scores: {'yes' if d['same_scores'] else 'NO'}"
        )
    if name == "trajectory_bytes":
        return (
            f"self-contained {d['median_inline_kb']:.1f} KB; {d['episodes']} episodes of {d['tasks']} tasks; "
            f"{d['snapshot_files']} snapshot files of {d['mean_snapshot_file_kb']:.0f} KB"
        )
    if name == "full_run_bytes":
        return (
            f"{d['episodes']:,} episodes x {d['mean_line_kb']:.2f} KB + snapshots of {d['tasks']:,} tasks "
            f"({d['mean_snapshot_file_kb']:.0f} KB each); uncompressed {d['uncompressed_mb']:,.0f} MB, "
            f"self-contained {d['self_contained_mb']:,.0f} MB"
        )
    return ""


def ratio_text(fig: Figure) -> str:
    """The ratio column: ``2.51x``, or ``-``."""
    return "-" if fig.ratio is None else f"{fig.ratio:g}x"


def rich_table(figures: list[Figure], title: str) -> Any:
    """A ``rich.table.Table`` of the figures."""
    from rich.table import Table

    table = Table(title=title)
    right = ("value", "target", "ratio")
    for col in ("figure", "value", "target", "ratio", "baseline", "status", "detail"):
        table.add_column(col, overflow="fold", justify="right" if col in right else "left")
    colour = {"ok": "green", "MISSED": "bold red", "n/a": "yellow", "info": "cyan"}
    for fig in figures:
        status = status_text(fig)
        table.add_row(
            fig.title,
            _num(fig.value, fig.unit),
            target_text(fig),
            ratio_text(fig),
            fig.baseline,
            f"[{colour[status]}]{status}[/]",
            detail_text(fig),
        )
    return table


def markdown_table(figures: list[Figure]) -> str:
    """The figures as a Markdown table (for docs/performance.md)."""
    rows = [
        "| figure | value | target | ratio | baseline | status | detail |",
        "| --- | ---: | ---: | ---: | --- | --- | --- |",
    ]
    for fig in figures:
        cells = [
            fig.title,
            _num(fig.value, fig.unit),
            target_text(fig),
            ratio_text(fig),
            fig.baseline,
            status_text(fig),
            detail_text(fig),
        ]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


__all__ = ["detail_text", "markdown_table", "ratio_text", "rich_table", "status_text", "target_text"]
