"""The evaluation client: tasks, agents, runner, trajectories, judge, scorer, reports."""
