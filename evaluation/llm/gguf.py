"""A bounded reader of a GGUF file's header: its version and the metadata a local model server
needs (``general.name``, ``general.architecture``, ``<architecture>.context_length``).

GGUF (llama.cpp's model file, https://github.com/ggml-org/ggml/blob/master/docs/gguf.md) starts
with the magic ``GGUF``, a little-endian ``uint32`` version (2 or 3), the ``uint64`` tensor
count and the ``uint64`` count of metadata pairs; each pair is a string key (``uint64`` length,
UTF-8 bytes), a ``uint32`` value type and the value. :func:`read_gguf_header` reads the pairs in
order, skipping the values it does not keep (the tokenizer's vocabulary is an array of 150,000
strings), and never reads more than :data:`MAX_HEADER_BYTES` of the file nor a string longer than
:data:`MAX_STRING_BYTES`: a file that is no GGUF, or a corrupt one, is a :class:`GGUFError`
naming what was wrong, never an allocation of what a corrupt length says.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.kernel.exceptions import InputError

GGUF_MAGIC = b"GGUF"
"""The first four bytes of every GGUF file."""

SUPPORTED_VERSIONS = (2, 3)
"""The GGUF versions read (version 1 used 32-bit lengths and is no longer written)."""

MAX_HEADER_BYTES = 64 * 1024 * 1024
"""The most bytes of a file the reader goes through (a 1.5B model's header is ~6 MB)."""

MAX_STRING_BYTES = 1024 * 1024
"""The longest string (key or value) accepted (a chat template is ~6 KB)."""

MAX_PAIRS = 100_000
"""The most metadata pairs accepted (a model has ~30)."""

_SCALARS: dict[int, str] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
"""GGUF value type -> struct format of a scalar (8 is a string, 9 an array)."""

_STRING, _ARRAY = 8, 9


class GGUFError(InputError):
    """The file is not a GGUF model file, or its header is corrupt or over the reader's bounds
    (the message names the file and what was wrong)."""


class GGUFHeader(BaseModel):
    """What a GGUF header says about its model.

    Attributes:
        version: the GGUF version (2 or 3).
        tensors: the count of tensors the file holds.
        name: ``general.name`` (None when the file has none).
        architecture: ``general.architecture`` (``qwen2``, ``llama``...; None when absent).
        context_length: ``<architecture>.context_length``, the context the model was trained
            on in tokens (None when absent).
        header_bytes: how many bytes of the file the metadata took.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=1)
    tensors: int = Field(ge=0)
    name: str | None = None
    architecture: str | None = None
    context_length: int | None = Field(default=None, ge=1)
    header_bytes: int = Field(ge=0)


class _Reader:
    """Little-endian reads from ``fh`` that stop at :data:`MAX_HEADER_BYTES` or at the file's end."""

    def __init__(self, fh: BinaryIO, path: Path) -> None:
        self.fh = fh
        self.path = path
        self.used = 0

    def fail(self, what: str) -> GGUFError:
        return GGUFError(f"{self.path}: not a readable GGUF model file: {what}")

    def take(self, n: int) -> bytes:
        if self.used + n > MAX_HEADER_BYTES:
            raise self.fail(f"its metadata runs past {MAX_HEADER_BYTES // (1024 * 1024)} MB")
        data = self.fh.read(n)
        self.used += len(data)
        if len(data) != n:
            raise self.fail(f"the file ends inside its header (at byte {self.used})")
        return data

    def skip(self, n: int) -> None:
        if self.used + n > MAX_HEADER_BYTES:
            raise self.fail(f"its metadata runs past {MAX_HEADER_BYTES // (1024 * 1024)} MB")
        self.fh.seek(n, 1)
        self.used += n

    def scalar(self, fmt: str) -> int | float | bool:
        value: int | float | bool = struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        return value

    def string(self) -> str:
        length = int(self.scalar("<Q"))
        if length > MAX_STRING_BYTES:
            raise self.fail(f"a string of {length:,} bytes (more than {MAX_STRING_BYTES:,})")
        return self.take(length).decode("utf-8", "replace")

    def skip_value(self, kind: int, depth: int = 0) -> None:
        if kind in _SCALARS:
            self.skip(struct.calcsize(_SCALARS[kind]))
        elif kind == _STRING:
            length = int(self.scalar("<Q"))
            if length > MAX_STRING_BYTES:
                raise self.fail(f"a string of {length:,} bytes (more than {MAX_STRING_BYTES:,})")
            self.skip(length)
        elif kind == _ARRAY and depth < 2:
            inner, count = int(self.scalar("<I")), int(self.scalar("<Q"))
            if inner in _SCALARS:
                self.skip(count * struct.calcsize(_SCALARS[inner]))
            else:
                for _ in range(count):
                    self.skip_value(inner, depth + 1)
        else:
            raise self.fail(f"an unknown metadata value type {kind}")


def read_gguf_header(path: Path) -> GGUFHeader:
    """The header of the GGUF file at ``path`` (see the module docstring for the bounds).

    Raises:
        GGUFError: the file is no GGUF (no magic), of an unsupported version, truncated, or
            over the bounds. OSError: the file cannot be opened.
    """
    path = Path(path)
    with path.open("rb") as fh:
        reader = _Reader(fh, path)
        magic = fh.read(4)
        reader.used = len(magic)
        if magic != GGUF_MAGIC:
            raise reader.fail(f"it starts with {magic!r}, not the GGUF magic {GGUF_MAGIC!r}")
        version = int(reader.scalar("<I"))
        if version not in SUPPORTED_VERSIONS:
            raise reader.fail(f"GGUF version {version}; this reader knows versions {SUPPORTED_VERSIONS}")
        tensors, pairs = int(reader.scalar("<Q")), int(reader.scalar("<Q"))
        if pairs > MAX_PAIRS:
            raise reader.fail(f"{pairs:,} metadata pairs (more than {MAX_PAIRS:,})")
        found: dict[str, object] = {}
        for _ in range(pairs):
            key = reader.string()
            kind = int(reader.scalar("<I"))
            if kind == _STRING and key in ("general.name", "general.architecture"):
                found[key] = reader.string()
            elif kind in _SCALARS and key.endswith(".context_length"):
                found[key] = reader.scalar(_SCALARS[kind])
            else:
                reader.skip_value(kind)
        architecture = found.get("general.architecture")
        context = found.get(f"{architecture}.context_length") if isinstance(architecture, str) else None
        name = found.get("general.name")
        return GGUFHeader(
            version=version,
            tensors=tensors,
            name=name.strip() or None if isinstance(name, str) else None,
            architecture=architecture if isinstance(architecture, str) else None,
            context_length=int(context) if isinstance(context, int | float) and context >= 1 else None,
            header_bytes=reader.used,
        )


def write_gguf_header(path: Path, metadata: dict[str, str | int], *, version: int = 3) -> Path:
    """Write a GGUF file holding only a header (no tensors) with ``metadata`` (strings as GGUF
    strings, integers as ``uint32``): a file :func:`read_gguf_header` reads, for tests and
    examples. Returns ``path``.

    Raises:
        ValueError: a value that is neither a string nor an integer in ``uint32``'s range.
    """
    out = bytearray(GGUF_MAGIC + struct.pack("<IQQ", version, 0, len(metadata)))
    for key, value in metadata.items():
        raw_key = key.encode("utf-8")
        out += struct.pack("<Q", len(raw_key)) + raw_key
        if isinstance(value, str):
            raw = value.encode("utf-8")
            out += struct.pack("<IQ", _STRING, len(raw)) + raw
        elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**32:
            out += struct.pack("<II", 4, value)
        else:
            raise ValueError(f"metadata {key!r}: a string or a uint32, got {value!r}")
    Path(path).write_bytes(bytes(out))
    return Path(path)


__all__ = [
    "GGUF_MAGIC",
    "MAX_HEADER_BYTES",
    "MAX_PAIRS",
    "MAX_STRING_BYTES",
    "SUPPORTED_VERSIONS",
    "GGUFError",
    "GGUFHeader",
    "read_gguf_header",
    "write_gguf_header",
]
