"""mcpgym where its users already work: thin adapters over the in-process episode API
(:class:`mcpgym.evaluation.GymEpisode`) and the HTTP server's control API.

One module per integration, each needing its own optional extra:

* :mod:`.gymnasium_env` (``pip install 'mcpgym[gym]'``): ``gymnasium.make("mcpgym/Episode-v0", ...)``;
* :mod:`.openenv_env` (``[openenv]``): OpenEnv's reset/step/state server (``mcpgym serve --openenv``);
* :mod:`.inspect_task` (``[inspect]``): an Inspect AI ``Task`` factory and scorer;
* ``nemo_gym_server.py``: NeMo Gym's resources server, standalone (it imports no mcpgym and runs
  in a venv of its own with ``nemo-gym`` 0.4 and ``mcp<2``, over ``mcpgym serve``'s HTTP API;
  docs/rl.md "NeMo Gym"): never import it as ``mcpgym.integrations.nemo_gym_server``.

Every RL door rewards a finished episode with the one reward,
:func:`mcpgym.evaluation.scoring.reward.episode_reward` under a named profile (``outcome`` by
default, ``shaped``, or your own; docs/design.md "Reward (RL)", docs/rl.md).

The ATIF and Inspect-log readers and the ATIF writer are trajectory formats, so they live with
the other formats (:mod:`mcpgym.evaluation.formats.atif`, :mod:`mcpgym.evaluation.formats.inspect_log`),
where ``mcpgym score`` and ``mcpgym export`` reach them.

Layer: above :mod:`mcpgym.evaluation`, below :mod:`mcpgym.benchmarks` (tests/project/test_layering.py).
Importing this package imports none of the optional packages.
"""
