"""``mcpgym proxy``: seeded faults in front of any MCP server (issue 28, docs/proxy.md).

The proxy is an MCP server whose tools are an upstream server's tools: it forwards
``tools/list`` and ``tools/call`` (and resources, prompts, completions, notifications and
elicitation both ways) and injects faults by the sandboxes' seeded rules
(:mod:`mcpgym.tools.faults`). Modules: :mod:`~mcpgym.server.proxy.plan` (the fault decisions,
call log and ledger of one session), :mod:`~mcpgym.server.proxy.upstream` (connecting to the
upstream over stdio or streamable HTTP, with deadlines), :mod:`~mcpgym.server.proxy.server`
(the MCP server that forwards). Classifying the upstream's tools and recording trajectories
belong to the evaluation layer (:mod:`mcpgym.evaluation.proxy`), which hands them in.
"""
