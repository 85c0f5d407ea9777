"""ComplexMCP's own benchmark under mcpgym: its seven apps, its 47 tasks and its judge (docs/complexmcp.md).

Their judge, as the outcome rule ``complexmcp``, is :mod:`mcpgym.evaluation.scoring.complexmcp_rule`.

Modules: ``tasks`` (the parquet's rows), ``install`` (``mcpgym complexmcp setup``: the apps' own virtual
environment), ``apps`` (the seven apps on loopback), ``sessions`` (login, ``session_id``
injection, logout: the gateway the proxy forwards to), ``replay`` (the human transcripts as
an agent), ``run`` (episodes through mcpgym's proxy), ``suite`` (the apps started once for many episodes), ``reference`` (their ``judge.py``,
run in the apps' environment), ``report`` (the replay tables), ``command`` (the CLI).
"""
