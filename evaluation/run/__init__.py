"""Running episodes: from a run configuration to a run directory of trajectories and scores.

* :mod:`.config`: :class:`~.config.RunConfig`, every run option; the ``mcpgym run`` flags, the
  manifest's settings, ``--resume`` and every episode's context come from it.
* :mod:`.launch`: a run from its config (:func:`~.launch.plan`, :func:`~.launch.launch`): the
  Python API under ``mcpgym run``.
* :mod:`.episode_spec`: the episode spec that executors ship to a worker.
* :mod:`.runner`: :func:`~.runner.run_evaluation`, the whole run (suites x agents x trials).
* :mod:`.episode_runner`: one episode against a server (agent, user, deadline, judging).
* :mod:`.executors` / :mod:`.ray_executor`: where episodes are played (local tasks, Ray).
* :mod:`.server_process`: the MCP server child process and its control client.
* :mod:`.run_dir` / :mod:`.run_lock`: the run directory on disk and its single-writer lock.
* :mod:`.gym`: :class:`~.gym.GymEpisode`, one episode driven step by step from Python.
"""
