"""The evaluation side of ``mcpgym proxy`` (docs/proxy.md): classifying an upstream's tools
(:mod:`~mcpgym.evaluation.proxy.classify`), recording each proxied session as a trajectory
(:mod:`~mcpgym.evaluation.proxy.record`) and the ``mcpgym proxy`` command
(:mod:`~mcpgym.evaluation.proxy.command`). The proxy server itself is
:mod:`mcpgym.server.proxy`."""
