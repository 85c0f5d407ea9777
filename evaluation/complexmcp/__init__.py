"""ComplexMCP's own benchmark under mcpgym: its seven apps, its 47 tasks and its judge (docs/complexmcp.md).

Modules: ``judge`` (their outcome rule, written from its description), ``tasks`` (the
parquet's rows), ``install`` (``mcpgym complexmcp setup``: the apps' own virtual
environment), ``apps`` (the seven apps on loopback), ``sessions`` (login, ``session_id``
injection, logout: the gateway the proxy forwards to), ``replay`` (the human transcripts as
an agent), ``run`` (episodes through mcpgym's proxy), ``command`` (the CLI).
"""
