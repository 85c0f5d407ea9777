"""mcpgym's benchmark suite: speed and memory, each figure a ratio against a baseline.

Run ``python -m mcpgym.benchmarks [--quick] [--check] [--json OUT]``. Figures (targets from the
performance issue):

- ``stdio_round_trip``: a shop write over stdio / an SDK ``MCPServer`` no-op tool spawned
  the same way; target at most 1.3x.
- ``http_round_trip``: the same over streamable HTTP (an episode's ``mcp_url``) / the no-op
  over streamable HTTP on loopback; at most 1.3x.
- ``inproc_call_path``: ``ToolInvoker.call`` / the sandbox method called directly; at most 3x.
- ``world_creation``: CPU ms of ``World(seed, "all")`` (ratio vs ``World.restore``); at most 50 ms.
- ``episode_all_apps`` / ``episode_one_app``: CPU ms of an in-process episode (``GymEpisode``:
  create, 6 calls, judge) in a world of every app / of ``system`` only (ratio vs the 6 calls
  alone); at most 6 ms / 0.6 ms (issue 30). The per-phase split (create, calls, judge) is in
  the details.
- ``judge_time``: judging the all-app episode / one ``World.restore`` of its final snapshot;
  at most 1x.
- ``episode_memory``: RSS per live all-app episode, 500 held, each after the 6 calls (ratio vs
  the snapshot's JSON bytes); at most 0.25 MiB.
- ``gc_pause``: the longest full collection with 1,000 live all-app episodes, the process
  prepared as a server is (``tune_gc``); at most 50 ms.
- ``http_concurrency``: 100 HTTP episodes x 20 calls at once: errors, p50, p99 (ratio: p50 vs
  as many no-op sessions); 0 errors.
- ``http_episodes``: whole HTTP episodes per second (create, connect, 6 calls, delete) / SDK
  no-op sessions per second (connect, 6 calls), one at a time, interleaved; at least 0.9x.
- ``scoring_throughput``: steps per CPU second of ``score_episode`` (ratio vs parsing the
  trajectories); at least 50,000.
- ``scoring_growth``: CPU time per call of ``score_episode`` on one episode of 16,000 calls /
  on one of 2,000 (linear scoring: about 1); at most 1.5.
- ``ray_overhead``: wall seconds of the same episodes with ``--executor ray`` on a local 2-CPU
  Ray cluster / with ``--executor local``, with both episodes per second; reported
  (unavailable without ``mcpgym[ray]``).
- ``trajectory_bytes``: the median compact trajectory line on ``core`` (ratio vs the same
  line with its snapshots inline); at most 20 KB.
- ``proxy_overhead``: a ``git_status`` call of ``mcp-server-git`` over stdio through ``mcpgym
  proxy`` / the same call directly; at most 1.3x. ``proxy_overhead_noop``: the same for an
  ``MCPServer`` no-op (the floor of the proxy's hop); reported.
- ``full_run_bytes``: a ``full`` run of 3 agents x 3 trials, estimated from those lines and
  snapshot files as written (zstd; ratio vs the same uncompressed); at most 50 MB.
- ``complexmcp_replay``: ComplexMCP's 47 human transcripts replayed on their own apps, each
  call in a new MCP session as their harness makes it / through mcpgym (proxy, open
  sessions); at least 10x (issue 40). Unavailable without ``$MCPGYM_COMPLEXMCP_DIR``.
- ``label_agreement``: the share of (episode, field) pairs where ``mcpgym score`` equals the
  hand labels of the validation set (``tests/data/validation``, docs/labelling.md); at least
  98% overall and 95% on every field. Its baseline is the hand labels, not a timing.
- ``labeller_agreement``: the same comparison on the pairs two blind labellers agree on
  (``second_labels.jsonl`` beside ``labels.jsonl``); same targets; its baseline is the two
  labellers' agreement with each other (docs/labelling.md, "A second labeller").
- ``run_file_read``: CPU seconds to read a ``full`` run's 10,656 compressed trajectory lines
  (zstd frames, frame by frame), with 1,332 / 2,664 / 5,328 frames for the slope (ratio: per
  frame at 10,656 / at 1,332); at most 1 s (issue 36).
- ``server_truth`` / ``server_truth_no_catalog``: real harnesses' saved transcripts
  (``tests/data/harness``) scored by ``mcpgym score`` against the server's trajectory of the
  same episodes: every field equal with mcpgym's catalog (100%); without it at least 95% on
  every field of every harness. ``tool_kinds``: the no-catalog tool classifier against hand
  labels of real MCP servers' tool lists and mcpgym's own kinds (``tests/data/tool_kinds``);
  at least 95%, and no read counted as a write.
- ``gymnasium_step``: ``EpisodeEnv.step`` / ``GymEpisode.step`` of the same call; at most 1.2x.
- ``openenv_step``: an OpenEnv step over its WebSocket / the same call over MCP; at most 1x.
- ``shaped_reward_rollouts``: Gymnasium rollouts per second with the ``shaped`` reward / with
  ``outcome`` (the same rollouts, interleaved); at least 0.9x.
- ``verifiers_rollouts``: verifiers rollouts per second with a zero-latency scripted model through
  mcpgym's environment (an episode per rollout) / through verifiers' own tool environment with as
  many no-op tools and the same turn count; at least 0.9x (unavailable without ``.venv-vf``).
- ``nemo_gym_seed_verify``: NeMo Gym ``/seed_session`` + ``/verify`` pairs per second through its
  own client against mcpgym's resources server / against its example resources server, one pair
  at a time; reported (unavailable without ``.venv-nemo``).
- ``nemo_gym_seed_verify_concurrent``: the same with 16 pairs in flight and each resources server
  in its own process (a trainer's throughput); at least 0.9x (unavailable without ``.venv-nemo``).
- ``local_generation``: the local model's generated tokens per second with 2 llama.cpp threads /
  with 1 (prompt tokens per second of both in the details); reported, it chose
  ``DEFAULT_THREADS`` (unavailable without ``mcpgym[local-model]``).

Each figure is the median over repetitions, with its baseline measured in the same run
(interleaved). Unit tests never assert times: ``tests/benchmarks/test_benchmarks.py`` runs the harness
in its ``tiny`` mode and checks the shape of the JSON only.
"""

from __future__ import annotations

from collections.abc import Callable

from mcpgym.benchmarks.harness import Figure, Settings

FigureFn = Callable[[Settings], Figure]


def figure_functions() -> dict[str, FigureFn]:
    """Figure name -> function computing it, in table order."""
    from mcpgym.benchmarks.complexmcp import complexmcp_replay
    from mcpgym.benchmarks.concurrency import http_concurrency
    from mcpgym.benchmarks.http_episodes import http_episodes
    from mcpgym.benchmarks.inprocess import episode_memory, invoker_call_path, world_creation
    from mcpgym.benchmarks.integrations import gymnasium_step, openenv_step
    from mcpgym.benchmarks.label_agreement import label_agreement
    from mcpgym.benchmarks.labeller_agreement import labeller_agreement
    from mcpgym.benchmarks.local_generation import local_generation
    from mcpgym.benchmarks.nemo_gym import nemo_gym_seed_verify, nemo_gym_seed_verify_concurrent
    from mcpgym.benchmarks.proxy import proxy_overhead, proxy_overhead_noop
    from mcpgym.benchmarks.ray_overhead import ray_overhead
    from mcpgym.benchmarks.rl_reward import shaped_reward_rollouts
    from mcpgym.benchmarks.rollouts import episode_all_apps, episode_one_app, gc_pause, judge_time
    from mcpgym.benchmarks.run_file_read import run_file_read
    from mcpgym.benchmarks.scoring import scoring_throughput
    from mcpgym.benchmarks.scoring_growth import scoring_growth
    from mcpgym.benchmarks.server_truth import server_truth, server_truth_no_catalog
    from mcpgym.benchmarks.tool_kinds import tool_kinds
    from mcpgym.benchmarks.trajectory_bytes import full_run_bytes, trajectory_bytes
    from mcpgym.benchmarks.transport import http_round_trip, stdio_round_trip
    from mcpgym.benchmarks.verifiers_rollouts import verifiers_rollouts

    return {
        "stdio_round_trip": stdio_round_trip,
        "http_round_trip": http_round_trip,
        "inproc_call_path": invoker_call_path,
        "world_creation": world_creation,
        "episode_all_apps": episode_all_apps,
        "episode_one_app": episode_one_app,
        "judge_time": judge_time,
        "episode_memory": episode_memory,
        "gc_pause": gc_pause,
        "http_concurrency": http_concurrency,
        "http_episodes": http_episodes,
        "scoring_throughput": scoring_throughput,
        "scoring_growth": scoring_growth,
        "ray_overhead": ray_overhead,
        "trajectory_bytes": trajectory_bytes,
        "full_run_bytes": full_run_bytes,
        "proxy_overhead": proxy_overhead,
        "proxy_overhead_noop": proxy_overhead_noop,
        "complexmcp_replay": complexmcp_replay,
        "label_agreement": label_agreement,
        "labeller_agreement": labeller_agreement,
        "run_file_read": run_file_read,
        "server_truth": server_truth,
        "server_truth_no_catalog": server_truth_no_catalog,
        "tool_kinds": tool_kinds,
        "gymnasium_step": gymnasium_step,
        "openenv_step": openenv_step,
        "shaped_reward_rollouts": shaped_reward_rollouts,
        "verifiers_rollouts": verifiers_rollouts,
        "nemo_gym_seed_verify": nemo_gym_seed_verify,
        "nemo_gym_seed_verify_concurrent": nemo_gym_seed_verify_concurrent,
        "local_generation": local_generation,
    }


FIGURES: tuple[str, ...] = (
    "stdio_round_trip",
    "http_round_trip",
    "inproc_call_path",
    "world_creation",
    "episode_all_apps",
    "episode_one_app",
    "judge_time",
    "episode_memory",
    "gc_pause",
    "http_concurrency",
    "http_episodes",
    "scoring_throughput",
    "scoring_growth",
    "ray_overhead",
    "trajectory_bytes",
    "full_run_bytes",
    "proxy_overhead",
    "proxy_overhead_noop",
    "complexmcp_replay",
    "label_agreement",
    "labeller_agreement",
    "run_file_read",
    "server_truth",
    "server_truth_no_catalog",
    "tool_kinds",
    "gymnasium_step",
    "openenv_step",
    "shaped_reward_rollouts",
    "verifiers_rollouts",
    "nemo_gym_seed_verify",
    "nemo_gym_seed_verify_concurrent",
    "local_generation",
)
"""Every figure's name, in table order."""

__all__ = ["FIGURES", "Figure", "Settings", "figure_functions"]
