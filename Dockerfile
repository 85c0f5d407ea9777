# mcpgym's OpenEnv server in a container: `docker build -t mcpgym .` then
# `docker run -p 8000:8000 mcpgym`; clients (openenv-core's GenericEnvClient, TRL, verifiers)
# connect to http://HOST:8000 and reset(task=...) one episode per session.
# The control token: HTTP /reset, /step, /state and /mcp need `Authorization: Bearer TOKEN`.
# Set it with `docker run -e MCPGYM_TOKEN=... -p 8000:8000 mcpgym`; without it the server
# generates one and prints it at start (`docker logs`). The WebSocket /ws needs none.
FROM python:3.11-slim

WORKDIR /opt/mcpgym
COPY pyproject.toml README.md ./
COPY src ./src
COPY server ./server
COPY tools ./tools
COPY sandboxes ./sandboxes
COPY evaluation ./evaluation
COPY benchmarks ./benchmarks
COPY integrations ./integrations
RUN pip install --no-cache-dir '.[openenv]'

# Inside the container the server must listen on every interface for the published port.
EXPOSE 8000
CMD ["mcpgym", "serve", "--openenv", "--host", "0.0.0.0", "--port", "8000", "--max-episodes", "64", "--faults", "default"]
