"""Reading the files a user gives mcpgym: bounded, regular files only, one clear error naming them.

Every file input (fault profiles, task files, catalogs, run manifests, trajectory files given to
``score`` or to a replay agent, snapshot files) goes through :func:`read_input_bytes` /
:func:`read_input_text`, and every YAML document through :func:`load_yaml`:

* only regular files are read: ``/dev/zero``, a FIFO, a socket or a directory is refused before
  a byte is read (a FIFO is opened without blocking, so it cannot hang the caller);
* at most ``limit`` bytes are read (a file past it is refused with its size; ``/proc`` files
  that claim size 0 are read up to the limit and no further);
* a file that is not UTF-8 text is refused as such, with the byte offset, never an "unexpected
  UnicodeDecodeError";
* YAML is parsed into its node graph first and its size *with every alias expanded* is counted
  before any Python object is built: a 1 KB "billion laughs" document is refused at once.

Every refusal is an :class:`InputFileError`: one line, ``<path>: <what>: <reason>``.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.shorten import short_text

MAX_CONFIG_BYTES = 16 * 1024 * 1024
"""Largest configuration file (fault profile, task file, catalog, manifest, snapshot): 16 MiB."""

MAX_TRAJECTORY_BYTES = 1024 * 1024 * 1024
"""Largest trajectory file (``score``, ``--agent replay:``, a run's ``trajectories.jsonl``): 1 GiB."""

MAX_YAML_NODES = 200_000
"""Most YAML nodes a document may hold once its aliases are expanded (a 16 MiB task file of
generated tasks holds far fewer; a billion-laughs document holds 10^9)."""

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)


class InputFileError(InputError, ValueError):
    """A file input was refused. ``str()`` is one line naming the file.

    Attributes:
        path: the file as given. reason: what is wrong, without the path (for callers that
            print the path themselves).
    """

    def __init__(self, path: str | Path, reason: str, what: str = "") -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{short_text(str(path), 300)}: {what + ': ' if what else ''}{reason}")


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def file_kind(path: str | Path) -> str:
    """What ``path`` is (symlinks followed), as a noun phrase: ``a regular file``, ``a
    directory``, ``a character device``, ``a named pipe (FIFO)``, ``a socket``...; ``missing``
    when nothing is there (or it cannot be looked at)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "missing"
    return "a regular file" if stat.S_ISREG(mode) else _kind(mode)


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
"""``os.O_NOFOLLOW`` where the platform has it (0 elsewhere): opening a symlink fails."""


def read_input_bytes(path: str | Path, *, what: str = "", limit: int = MAX_CONFIG_BYTES, follow: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Args:
        path: the file. what: what the file is for the message (``fault profile``...).
        limit: most bytes accepted.
        follow: False for a file of a run directory: a symlink is refused, never followed
            (``O_NOFOLLOW``; where the platform lacks it, ``lstat`` is checked first and the
            opened file must be the one looked at).

    Raises:
        InputFileError: missing, unreadable, not a regular file, a symlink (``follow=False``),
            or longer than ``limit``.
    """
    p = Path(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        _refuse_symlink(p, what)
        flags |= NOFOLLOW
    try:
        fd = os.open(p, flags)
    except FileNotFoundError:
        raise InputFileError(p, "no such file", what) from None
    except IsADirectoryError:
        raise InputFileError(p, "is a directory, not a file", what) from None
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise InputFileError(p, SYMLINK_REFUSED, what) from None
        raise InputFileError(p, f"cannot read: {exc.strerror or exc}", what) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _kind(info.st_mode)
            raise InputFileError(p, f"is {kind}, not a regular file; give a file", what)
        if info.st_size > limit:
            raise InputFileError(p, f"is {info.st_size:,} bytes; the limit is {limit:,}", what)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise InputFileError(p, f"holds more than {limit:,} bytes, the limit", what)
        return b"".join(chunks)
    except OSError as exc:
        raise InputFileError(p, f"cannot read: {exc.strerror or exc}", what) from None
    finally:
        os.close(fd)


SYMLINK_REFUSED = "is a symlink; mcpgym never follows a symlink in a run directory (replace it by the file itself)"
"""The reason a run directory's symlinked file is refused."""


def _refuse_symlink(path: Path, what: str) -> None:
    """Refuse ``path`` when it is a symlink (the check behind ``O_NOFOLLOW``, and the whole
    check where the platform lacks it)."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise InputFileError(path, SYMLINK_REFUSED, what)
    except FileNotFoundError:
        return
    except OSError:
        return


def decode_input(data: bytes, path: str | Path, *, what: str = "") -> str:
    """``data`` as UTF-8 text (a leading BOM dropped).

    Raises:
        InputFileError: when it is not UTF-8 (names the byte offset; a NUL byte says binary).
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        binary = " (a binary file?)" if b"\0" in data[:8192] else ""
        raise InputFileError(path, f"not UTF-8 text{binary}: {exc.reason} at byte {exc.start}", what) from None


def read_input_text(path: str | Path, *, what: str = "", limit: int = MAX_CONFIG_BYTES) -> str:
    """:func:`read_input_bytes` decoded by :func:`decode_input`.

    Raises:
        InputFileError: as those two do.
    """
    return decode_input(read_input_bytes(path, what=what, limit=limit), path, what=what)


def check_input_file(path: str | Path, *, what: str = "", limit: int = MAX_TRAJECTORY_BYTES) -> int:
    """Check, without reading it, that ``path`` is a regular file of at most ``limit`` bytes
    (for readers that stream a file line by line); returns its size in bytes.

    Raises:
        InputFileError: as :func:`read_input_bytes` does.
    """
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise InputFileError(p, "no such file", what) from None
    except OSError as exc:
        raise InputFileError(p, f"cannot read: {exc.strerror or exc}", what) from None
    if not stat.S_ISREG(info.st_mode):
        raise InputFileError(p, f"is {_kind(info.st_mode)}, not a regular file; give a file", what)
    if info.st_size > limit:
        raise InputFileError(p, f"is {info.st_size:,} bytes; the limit is {limit:,}", what)
    return info.st_size


MAX_ARCHIVE_MEMBER_BYTES = 256 * 1024 * 1024
"""Largest member of a zip archive input (an Inspect ``.eval`` log) once inflated: 256 MiB."""


def check_zip_input(
    path: str | Path, *, what: str = "", limit: int = MAX_TRAJECTORY_BYTES, member_limit: int = MAX_ARCHIVE_MEMBER_BYTES
) -> int:
    """Check a zip archive input before a library reads it: a regular file (a FIFO or device
    refused without blocking) of at most ``limit`` bytes, every member declaring at most
    ``member_limit`` bytes inflated and all of them together at most ``limit``. Python's
    ``zipfile`` never inflates a member past the size it declares (it stops there and fails its
    CRC), so the declared sizes bound what reading the archive can cost. Returns the number of
    members.

    Raises:
        InputFileError: not a regular file, too large, not a zip archive, or a member (named,
            shortened) that would inflate past the bounds.
    """
    import zipfile

    check_input_file(path, what=what, limit=limit)
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputFileError(path, f"not a readable zip archive ({short_text(str(exc), 120)})", what) from None
    total = 0
    for info in members:
        if info.file_size > member_limit:
            raise InputFileError(
                path,
                f"its member {short_text(info.filename, 80)!r} inflates to {info.file_size:,} bytes; "
                f"the limit is {member_limit:,}",
                what,
            )
        total += info.file_size
        if total > limit:
            raise InputFileError(path, f"its members inflate to more than {limit:,} bytes, the limit", what)
    return len(members)


class YamlLimitError(InputError, yaml.YAMLError):
    """A YAML document too large once its aliases are expanded, or an alias that contains itself."""


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """Nodes of the graph under ``root`` counted with every alias expanded (each shared node
    counted as many times as it is reached), stopping as soon as the count passes ``limit``."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise YamlLimitError("an alias refers to a node that contains it (a recursive document)")
        active.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for child in node.value:
                total += size(child)
                if total > limit:
                    break
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k) + size(v)
                if total > limit:
                    break
        active.discard(key)
        if total > limit:
            raise YamlLimitError(
                f"the document expands to more than {limit:,} nodes through its aliases (&anchor / *alias); "
                "write the values out or use fewer aliases"
            )
        sizes[key] = total
        return total

    return size(root)


_INT_TAG = "tag:yaml.org,2002:int"
_MAX_INT_DIGITS = 4300


def _refuse_repeated_key(node: yaml.MappingNode, where: str) -> None:
    """Refuse a mapping that gives one key twice (PyYAML keeps the last silently), naming the
    key, its field and the line of the second one. Merge keys (``<<``) may repeat."""
    seen: set[str] = set()
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.value == "<<":
            continue
        if key.value in seen:
            field = f" in field {short_text(where, 80)!r}" if where else ""
            raise YamlLimitError(
                f"the key {short_text(key.value, 80)!r} is given twice{field} "
                f"(again at line {key.start_mark.line + 1}; remove one)"
            )
        seen.add(key.value)


def _check_long_integers(root: yaml.Node) -> None:
    """Refuse an integer scalar of more than 4,300 digits (Python's ``int(str)`` limit, whose
    own error names no file or field) and a mapping that gives one key twice
    (:func:`_refuse_repeated_key`) before any object is built, naming its field and line.
    Iterative: the graph's depth costs no recursion."""
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, where = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _INT_TAG and len(node.value) > _MAX_INT_DIGITS:
                field = f"field {short_text(where, 80)!r}: " if where else ""
                raise YamlLimitError(
                    f"{field}an integer of {len(node.value):,} digits (at most {_MAX_INT_DIGITS:,}) "
                    f"at line {node.start_mark.line + 1}"
                )
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            _refuse_repeated_key(node, where)
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else "?"
                stack.append((key, where))
                stack.append((value, f"{where}.{name}" if where else str(name)))


def load_yaml(text: str, *, max_nodes: int = MAX_YAML_NODES) -> Any:
    """Parse one YAML document (safe tags only) after checking its expanded size.

    Args:
        text: the document (JSON is read too, as YAML 1.2's subset).
        max_nodes: most nodes with every alias expanded.

    Returns:
        The document's data (None for an empty document).

    Raises:
        yaml.YAMLError: for a syntax error (with ``problem_mark``), or a :class:`YamlLimitError`
            when the document expands past ``max_nodes``, holds a recursive alias, an integer
            of more than 4,300 digits or a key given twice in one mapping (naming its field and line).
    """
    loader = _YAML_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, max_nodes)
        _check_long_integers(node)
        return loader.construct_document(node)
    except RecursionError:
        raise YamlLimitError("the document is nested too deeply") from None
    finally:
        loader.dispose()


def yaml_error_text(exc: yaml.YAMLError) -> str:
    """One line for a YAML error: the problem and, when known, ``at line L, column C``."""
    if isinstance(exc, YamlLimitError):
        return str(exc)
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"{problem}{where}"


__all__ = [
    "MAX_ARCHIVE_MEMBER_BYTES",
    "MAX_CONFIG_BYTES",
    "MAX_TRAJECTORY_BYTES",
    "MAX_YAML_NODES",
    "NOFOLLOW",
    "SYMLINK_REFUSED",
    "InputFileError",
    "YamlLimitError",
    "check_input_file",
    "check_zip_input",
    "decode_input",
    "file_kind",
    "load_yaml",
    "read_input_bytes",
    "read_input_text",
    "yaml_error_text",
]
