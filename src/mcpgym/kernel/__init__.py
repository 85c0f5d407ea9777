"""The kernel: what every layer of mcpgym stands on, and which imports nothing above it.

- :mod:`mcpgym.kernel.spec`: the ``@tool`` decorator and :class:`~mcpgym.kernel.spec.ToolSpec`;
- :mod:`mcpgym.kernel.errors`: :class:`~mcpgym.kernel.errors.ToolError` and its codes;
- :mod:`mcpgym.kernel.app`: :class:`~mcpgym.kernel.app.App`, :class:`~mcpgym.kernel.app.AppState`
  and the app registry (the ``mcpgym.apps`` entry-point group);
- :mod:`mcpgym.kernel.world`: the :class:`~mcpgym.kernel.world.World` of one episode;
- :mod:`mcpgym.kernel.rng`, :mod:`mcpgym.kernel.clock`, :mod:`mcpgym.kernel.people`,
  :mod:`mcpgym.kernel.volatile`: seeded streams, the virtual clock, the people directory and
  the volatile marker the judge reads.

Layers, lowest first (``tests/project/test_layering.py`` enforces them): kernel, sandboxes, tools,
server, evaluation, benchmarks. See docs/design.md section 1.
"""
