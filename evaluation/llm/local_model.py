"""A real model on this machine, served over an OpenAI-compatible HTTP API on loopback.

Which model: a row of :mod:`mcpgym.evaluation.llm.local_models` (the 0.5B of
``mcpgym[local-model]``, the 1.5B of ``mcpgym[local-model-1.5b]``), shipped on PyPI as raw byte
pieces (each wheel holds one ``data/partNN.bin``; the model is their concatenation in the row's
order, checked against the row's size and sha256 by :func:`assemble_model`), or any GGUF file a
user has (``--model-path``, :func:`~mcpgym.evaluation.llm.local_models.model_from_path`). It is
run by ``xllamacpp==0.2.0``, a prebuilt wheel of llama.cpp b6301: its chat handler applies the
model's own template (jinja) and its Hermes-style parser turns the model's bare JSON tool calls
into OpenAI ``tool_calls``. Newer xllamacpp releases accept only ``<tool_call>``-tagged calls and
return these models' calls as text; llama-cpp-python compiles for over ten minutes on two cores.

xllamacpp 0.2.0 has no HTTP server of its own (only ``Server.handle_chat_completions(dict)``),
so :func:`build_app` is a small Starlette shim in front of it:

* ``POST /v1/chat/completions``: the request goes to llama.cpp as it is, except that a schema
  node with neither a type nor a combinator (``{"description": "new value"}``, which JSON Schema
  reads as "any value") loses its annotations: llama.cpp's grammar converter refuses such a node
  ("Unrecognized schema") and would fail every request of a tool that has one, while ``{}``
  means the same to it. Tool-call ids, which llama.cpp draws at random, become ``call_<i>``
  so that two runs at temperature 0 with one seed give the same trajectory.
* ``GET /v1/models`` (the served model's name) and ``GET /health``.

One request runs at a time (one llama.cpp slot): a second waits. Start it with
``python -m mcpgym.evaluation.llm.local_model --port 0 [--model NAME | --model-path FILE.gguf]``
(it prints one JSON line ``{"url", "model"}`` once it listens), :func:`serve_local_model` from Python, or let ``mcpgym run``
start it for its ``local:`` agents (:mod:`mcpgym.evaluation.llm.local_agent`; ``--model-context N``
sets its context window, :data:`DEFAULT_CONTEXT` tokens by default; ``--model-threads N`` its
CPU threads, :data:`DEFAULT_THREADS` by default, chosen from ``benchmarks/local_generation.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
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

from mcpgym.evaluation.llm.local_models import DEFAULT_MODEL, LocalModelRow, PathModel, find_row, model_from_path
from mcpgym.kernel.exceptions import InputError, ServiceError

MODEL_NAME = DEFAULT_MODEL.name
"""The default model's name (the 0.5B: what ``local:`` and the baseline serve when none is named)."""

PART_PACKAGES = DEFAULT_MODEL.pieces
"""The import packages holding the default model's pieces, in order."""

MODEL_BYTES = DEFAULT_MODEL.size
"""The size of the default model's assembled GGUF file."""

INSTALL_HINT = DEFAULT_MODEL.install_hint

MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""The largest request body the shim reads (a conversation with every tool is ~60 KB)."""

DEFAULT_CONTEXT = 4096
"""The context window (tokens) the server is started with when none is given."""

DEFAULT_THREADS = 1
"""The llama.cpp CPU threads when none are given: ``benchmarks/local_generation.py`` measured the
0.5B on the 2-core machine shared with other work (load average 9.6, docs/performance.md):
generated tokens/s 5.97 with 1 thread against 0.28 with 2 (two threads wait on each other when
the other core is busy), prompt tokens/s 19.2 against 13.1. Give ``--model-threads 2`` on a
quiet machine."""

MAX_THREADS = 64
"""The most llama.cpp threads accepted."""

MIN_CONTEXT = 256
"""The smallest context window accepted: the system prompt and one tool take over 200 tokens."""

MAX_CONTEXT = 32768
"""The largest context window accepted: the bundled models' own (both Qwen2.5-Coder models were
trained on 32,768 tokens); llama.cpp would allocate a larger cache and the model would read past
what it was trained on. A ``--model-path`` model's own ``context_length`` is the bound when its
header gives one below this."""

ServedModel = LocalModelRow | PathModel
"""A model the shim can serve: a bundled row, or a user's GGUF file."""


def check_context(value: object, limit: int = MAX_CONTEXT) -> int:
    """``value`` as a context window in tokens: an integer from :data:`MIN_CONTEXT` to ``limit``
    (:data:`MAX_CONTEXT` by default; a string of one is read).

    Raises:
        ValueError: naming the value and the bounds.
    """
    number: object = value
    if isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, int) or not MIN_CONTEXT <= number <= limit:
        raise ValueError(
            f"the model's context window must be a whole number of tokens from {MIN_CONTEXT} to "
            f"{limit}, got {str(value)[:40]!r}"
        )
    return number


def check_threads(value: object) -> int:
    """``value`` as llama.cpp CPU threads: an integer from 1 to :data:`MAX_THREADS`.

    Raises:
        ValueError: naming the value and the bounds.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise ValueError(f"the model's threads must be a whole number from 1 to {MAX_THREADS}, got {str(value)[:40]!r}")
    return value


def context_limit(model: ServedModel) -> int:
    """The largest context window ``model`` is served with: its own trained context, at most
    :data:`MAX_CONTEXT`."""
    own = model.context_length
    return min(own, MAX_CONTEXT) if own and own >= MIN_CONTEXT else MAX_CONTEXT


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


def part_paths(row: LocalModelRow = DEFAULT_MODEL) -> list[Path]:
    """The row's installed pieces, in the row's order.

    Raises:
        ModelUnavailable: when a piece's wheel is not installed (naming the row's extra).
    """
    out: list[Path] = []
    for name in row.pieces:
        try:
            module = importlib.import_module(name)
        except ImportError:
            raise ModelUnavailable(f"the model piece {name} is not installed: {row.install_hint}") from None
        out.append(Path(module.get_part_path()))
    return out


def assemble_model(cache_dir: Path | None = None, row: LocalModelRow = DEFAULT_MODEL) -> Path:
    """The row's GGUF file, assembled from the installed pieces on first use.

    The pieces are joined in the row's order while their sha256 is computed; the file is written
    next to its final name and renamed into place only when its size and sha256 are the row's, so
    an interrupted or wrong assembly leaves no file under the final name. A verified file gets a
    stamp (``NAME.gguf.verified``: its sha256, size and modification time); a cached file whose
    stamp does not match it is hashed again, and rebuilt when it is not the row's.

    Returns:
        The path of the ``.gguf`` file (``row.size`` bytes).

    Raises:
        ModelUnavailable: a piece is missing, or the pieces do not make the row's file (size or
            sha256).
        OSError: the cache directory cannot be written.
    """
    parts = part_paths(row)
    folder = cache_dir or model_cache_dir()
    target = folder / f"{row.name}.gguf"
    if _is_verified(target, row):
        return target
    sizes = sum(p.stat().st_size for p in parts)
    if sizes != row.size:
        raise ModelUnavailable(
            f"the pieces of {row.name} hold {sizes:,} bytes, expected {row.size:,}: reinstall them ({row.install_hint})"
        )
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".part-{os.getpid()}")
    try:
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for p in parts:
                with p.open("rb") as src:
                    while chunk := src.read(8 << 20):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != row.sha256:
            raise ModelUnavailable(
                f"the pieces of {row.name} join to sha256 {digest.hexdigest()}, expected {row.sha256}: "
                f"reinstall them ({row.install_hint})"
            )
        os.replace(partial, target)
        _stamp(target, row)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return target


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp(target: Path, row: LocalModelRow) -> None:
    """Record that ``target`` (as it is now) was checked to be ``row``'s file."""
    info = target.stat()
    stamp = {"sha256": row.sha256, "size": info.st_size, "mtime_ns": info.st_mtime_ns}
    _stamp_path(target).write_text(json.dumps(stamp), encoding="utf-8")


def _is_verified(target: Path, row: LocalModelRow) -> bool:
    """``target`` is ``row``'s file: its stamp matches it, or (no or a stale stamp) its size and
    sha256 are the row's (the stamp is then renewed)."""
    try:
        info = target.stat()
        if info.st_size != row.size:
            return False
        with contextlib.suppress(OSError, ValueError):
            stamp = json.loads(_stamp_path(target).read_text(encoding="utf-8"))
            if stamp == {"sha256": row.sha256, "size": info.st_size, "mtime_ns": info.st_mtime_ns}:
                return True
        digest = hashlib.sha256()
        with target.open("rb") as fh:
            while chunk := fh.read(8 << 20):
                digest.update(chunk)
        if digest.hexdigest() != row.sha256:
            return False
        _stamp(target, row)
        return True
    except OSError:
        return False


def model_file(model: ServedModel, cache_dir: Path | None = None) -> Path:
    """The GGUF file of ``model``: a row's assembled file (:func:`assemble_model`), or a
    ``--model-path`` file itself.

    Raises:
        ModelUnavailable: see :func:`assemble_model`.
    """
    if isinstance(model, PathModel):
        return model.path
    return assemble_model(cache_dir, model)


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


def server_params(model_path: Path, *, threads: int = DEFAULT_THREADS, context: int = DEFAULT_CONTEXT) -> Any:
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


def load_server(model_path: Path, *, threads: int = DEFAULT_THREADS, context: int = DEFAULT_CONTEXT) -> Any:
    """An ``xllamacpp.Server`` for the model, loaded with :func:`server_params`.

    Raises:
        ModelUnavailable: xllamacpp is not installed.
        ValueError: a context window out of bounds.
    """
    import xllamacpp  # noqa: PLC0415 - an optional extra (server_params checked it is there)

    return xllamacpp.Server(server_params(model_path, threads=threads, context=context))


def build_app(server: Any, model_name: str = MODEL_NAME) -> Any:
    """The Starlette app of the shim in front of an ``xllamacpp.Server`` (see the module
    docstring) serving the model ``model_name`` (what ``/v1/models`` lists). A request llama.cpp refuses (``RuntimeError``) is answered 400 with
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
        return JSONResponse({"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "local"}]})

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


def _threads_arg(text: str) -> int:
    """``--threads`` of :func:`main`: :func:`check_threads`, its error as argparse's own."""
    try:
        return check_threads(int(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def resolve_model(name: str | None = None, model_path: Path | None = None) -> ServedModel:
    """The model of ``--model NAME`` (a row), ``--model-path FILE`` (its header read), or the
    default row when neither is given.

    Raises:
        InputError: both given, an unknown name, or a file that is no readable GGUF.
    """
    if name and model_path:
        raise InputError("give --model or --model-path, not both")
    if model_path is not None:
        return model_from_path(model_path)
    return find_row(name) if name else DEFAULT_MODEL


def main(argv: list[str] | None = None) -> None:
    """``python -m mcpgym.evaluation.llm.local_model [--port 0] [--model NAME | --model-path
    FILE.gguf] [--threads N] [--context 4096]``: assemble the model, load it, listen on
    127.0.0.1 and print ``{"url", "model"}`` as one JSON line on stdout; serve until killed.
    A model that is not installed, an unknown name or a file that is no GGUF is printed as
    ``{"error"}`` (exit 3)."""
    import uvicorn  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m mcpgym.evaluation.llm.local_model", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--model", default=None, help=f"a bundled model's name (default {MODEL_NAME})")
    parser.add_argument("--model-path", type=Path, default=None, help="a GGUF file to serve instead")
    parser.add_argument("--threads", type=_threads_arg, default=DEFAULT_THREADS, help="CPU threads of llama.cpp")
    parser.add_argument(
        "--context",
        type=_context_arg,
        default=DEFAULT_CONTEXT,
        help=f"context window in tokens ({MIN_CONTEXT} to {MAX_CONTEXT})",
    )
    args = parser.parse_args(argv)
    try:
        model = resolve_model(args.model, args.model_path)
        context = check_context(args.context, context_limit(model))
        server = load_server(model_file(model), threads=args.threads, context=context)
    except (ModelUnavailable, InputError, ValueError) as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
        raise SystemExit(3) from None
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(build_app(server, model.name), log_level="warning", access_log=False, lifespan="off")
    parent = os.getppid()

    def orphaned() -> None:  # a parent killed without cleaning up must not leave the model running
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=orphaned, daemon=True).start()
    print(json.dumps({"url": f"http://127.0.0.1:{port}/v1", "model": model.name}), flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def server_command(
    *, threads: int = DEFAULT_THREADS, context: int = DEFAULT_CONTEXT, model: ServedModel = DEFAULT_MODEL
) -> list[str]:
    """The command line of the shim's child process (:func:`main` on a free port) serving
    ``model`` (a row by its name, a ``--model-path`` model by its file).

    Raises:
        ValueError: a context window out of bounds (:func:`check_context`, up to the model's
            own :func:`context_limit`) or threads out of bounds (:func:`check_threads`).
    """
    command = [sys.executable, "-m", "mcpgym.evaluation.llm.local_model", "--port", "0"]
    command += ["--model-path", str(model.path)] if isinstance(model, PathModel) else ["--model", model.name]
    threads, context = check_threads(threads), check_context(context, context_limit(model))
    return command + ["--threads", str(threads), "--context", str(context)]


def check_local_model(name: str, path_model: PathModel | None = None) -> ServedModel:
    """The model ``local:NAME`` names: a row of :mod:`~mcpgym.evaluation.llm.local_models`, or
    ``path_model`` (the run's ``--model-path`` file) when ``name`` is its name (checked before
    whether anything is installed).

    Raises:
        ValueError: ``unknown local model NAME; known: ...`` (the ``--model-path`` model's name
            among them).
    """
    if path_model is not None and name == path_model.name:
        return path_model
    try:
        return find_row(name)
    except InputError as exc:
        said = str(exc)
        if path_model is not None:
            said += f", {path_model.name} (--model-path)"
        raise ValueError(said) from None


def check_available(model: ServedModel = DEFAULT_MODEL) -> None:
    """Check, without assembling or loading anything, that the model's pieces (or its file) and
    xllamacpp are installed.

    Raises:
        ModelUnavailable: naming what to install.
    """
    hint = model.install_hint if isinstance(model, LocalModelRow) else INSTALL_HINT
    if isinstance(model, LocalModelRow):
        part_paths(model)
    elif not model.path.is_file():
        raise ModelUnavailable(f"the model file {str(model.path)[:200]} is gone")
    if importlib.util.find_spec("xllamacpp") is None:
        raise ModelUnavailable(f"xllamacpp is not installed: {hint}")


@contextlib.contextmanager
def serve_local_model(
    *,
    threads: int = DEFAULT_THREADS,
    context: int = DEFAULT_CONTEXT,
    niceness: int = 10,
    start_timeout: float = 240.0,
    log: Path | None = None,
    model: ServedModel = DEFAULT_MODEL,
) -> Iterator[str]:
    """Run the shim for ``model`` in a child process (under ``nice``) and yield its base URL
    (``http://127.0.0.1:PORT/v1``); the process is ended when the block exits.

    Args:
        threads: llama.cpp CPU threads. context: the context window (tokens,
            :func:`check_context`; a prompt longer than it is refused with HTTP 400).
        niceness: the child's ``nice`` increment (the machine is shared).
        start_timeout: wall seconds to wait for the model to load and the port to listen.
        log: where the child's stderr (llama.cpp's log) goes (default: discarded).
        model: a row (default: the 0.5B) or a ``--model-path`` model.

    Raises:
        ModelUnavailable: the model or xllamacpp is not installed (checked in this process
            first, so the error names what to install), or the pieces are not the row's file.
        RuntimeError: the child exited or printed nothing within ``start_timeout``.
        ValueError: a context window or threads out of bounds.
    """
    command = server_command(threads=threads, context=context, model=model)
    model_file(model)
    check_available(model)
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
    "DEFAULT_THREADS",
    "INSTALL_HINT",
    "MAX_CONTEXT",
    "MAX_THREADS",
    "MIN_CONTEXT",
    "MODEL_BYTES",
    "MODEL_NAME",
    "PART_PACKAGES",
    "ModelUnavailable",
    "ServedModel",
    "assemble_model",
    "build_app",
    "check_available",
    "check_context",
    "check_local_model",
    "check_threads",
    "context_limit",
    "grammar_safe_schema",
    "load_server",
    "main",
    "model_cache_dir",
    "model_file",
    "part_paths",
    "prepare_request",
    "resolve_model",
    "serve_local_model",
    "server_command",
    "server_params",
    "steady_ids",
]

if __name__ == "__main__":
    main()
