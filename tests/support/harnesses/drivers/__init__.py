"""One standalone script per harness. Each runs as ``python DRIVER --mcp-url URL --model-url URL
--instruction TEXT --out FILE [--api chat|responses]`` (in a virtual environment holding that
harness, which need not hold mcpgym), plays one episode through the harness as its users do,
saves the transcript the way its users save it to ``FILE`` and prints one JSON line
``{"final": TEXT}`` (the harness's final output) on stdout."""
