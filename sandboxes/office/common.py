"""Helpers shared by the office tool mixins: address and time parsing, directory lookups,
folder paths. :class:`OfficeBase` is the common base of the mixins and of the app."""

from __future__ import annotations

import re

from mcpgym.kernel.app import App
from mcpgym.kernel.clock import iso, parse_iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.people import Person
from mcpgym.sandboxes.office.models import File, OfficeState
from mcpgym.sandboxes.office.views import FileInfo

EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
NAME_RE = re.compile(r"^[^/\\\x00-\x1f]{1,100}$")
MAX_SPAN = 366 * 86_400
"""Longest time range a calendar query may cover (virtual seconds)."""
MAX_TIME = 221_845_392_000
"""9000-01-01T00:00:00Z: times from then on are rejected, so ranges and events stay formattable."""


class OfficeBase(App):
    """Common base of the office mixins: typed state and lookups (no tools)."""

    state: OfficeState

    # -- people ----------------------------------------------------------------------------
    @property
    def user_email(self) -> str:
        """The user's own address."""
        return self.world.user.email

    def person_by_email(self, email: str) -> Person | None:
        """The directory person with ``email`` (case-insensitive), or None."""
        key = email.strip().lower()
        for p in self.world.people:
            if p.email == key:
                return p
        return None

    def display_name(self, email: str) -> str:
        """Name for ``email``: the directory's, the user's, or the address's local part."""
        if email == self.user_email:
            return self.world.user.name
        p = self.person_by_email(email)
        return p.name if p is not None else email.split("@", 1)[0]

    def resolve_person(self, value: str, field: str, *, directory_only: bool = False) -> str:
        """Return the address named by ``value``: an email, a person id (``p-003``) or a full
        name from the shared directory (case-insensitive).

        Raises:
            ToolError: ``invalid_argument`` for a malformed address or an ambiguous name;
                ``not_found`` for an unknown id/name, or (``directory_only``) an address
                outside the directory.
        """
        text = value.strip()
        if "@" in text:
            addr = text.lower()
            if not EMAIL_RE.match(addr):
                raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{value!r} is not a valid email address", field=field)
            if directory_only and self.person_by_email(addr) is None:
                raise ToolError(
                    ErrorCode.NOT_FOUND, f"{addr} is not in the people directory; see office_list_contacts", field=field
                )
            return addr
        low = text.lower()
        for p in self.world.people:
            if p.person_id == low or p.name.lower() == low:
                return p.email
        partial = [p for p in self.world.people if low and low in p.name.lower()]
        if len(partial) == 1:
            return partial[0].email
        if len(partial) > 1:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"{value!r} matches several people: " + ", ".join(p.name for p in partial),
                field=field,
            )
        raise ToolError(
            ErrorCode.NOT_FOUND, f"no person {value!r} in the directory; see office_list_contacts", field=field
        )

    # -- time ------------------------------------------------------------------------------
    @staticmethod
    def parse_time(value: str, field: str) -> int:
        """Parse an ISO-8601 date or date-time (UTC when no zone) into virtual seconds.

        Raises:
            ToolError: ``invalid_argument`` naming ``field``.
        """
        try:
            ts = parse_iso(value)
        except (ValueError, OverflowError, OSError):
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"{field} must be an ISO-8601 date-time such as 2026-06-02T14:00:00Z, got {value!r}",
                field=field,
            ) from None
        if not (0 <= ts < MAX_TIME):
            raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{field} must lie between 1970 and 9000", field=field)
        return ts

    def parse_range(self, start: str | None, end: str | None, default_days: int = 7) -> tuple[int, int]:
        """Parse an optional ``[start, end)`` range; defaults: now and ``default_days`` later.

        Raises:
            ToolError: ``invalid_argument`` when malformed, empty or longer than a year.
        """
        lo = self.now if start is None else self.parse_time(start, "start")
        hi = lo + default_days * 86_400 if end is None else self.parse_time(end, "end")
        if hi <= lo:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "end must be after start", field="end")
        if hi - lo > MAX_SPAN:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "the range may cover at most 366 days", field="end")
        return lo, hi

    # -- folders ---------------------------------------------------------------------------
    @staticmethod
    def norm_folder(path: str, field: str = "folder") -> str:
        """Normalise a folder path (``Documents/`` -> ``/Documents``; ``/`` is the root).

        Raises:
            ToolError: ``invalid_argument`` for ``.``/``..`` segments or control characters.
        """
        parts = [p for p in path.strip().split("/") if p.strip()]
        for p in parts:
            if p.strip() in (".", "..") or not NAME_RE.match(p):
                raise ToolError(ErrorCode.INVALID_ARGUMENT, f"invalid folder path {path!r}", field=field)
        return "/" + "/".join(p.strip() for p in parts)

    @staticmethod
    def check_name(name: str, field: str = "name") -> str:
        """Validate a file name (1-100 characters, no slash, not ``.``/``..``); return it stripped.

        Raises:
            ToolError: ``invalid_argument``.
        """
        clean = name.strip()
        if not clean or clean in (".", "..") or not NAME_RE.match(clean):
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, f"invalid file name {name!r}: 1-100 characters, no slash", field=field
            )
        return clean

    # -- files -----------------------------------------------------------------------------
    def file_info(self, f: File) -> FileInfo:
        """The agent's view of file ``f``."""
        path = f.folder.rstrip("/") + "/" + f.name
        return FileInfo(
            file_id=f.file_id,
            name=f.name,
            folder=f.folder,
            path=path,
            size_bytes=len(f.content.encode("utf-8")),
            updated_iso=iso(f.updated_at),
            shared_with=[s.email for s in f.shares],
        )

    def require_folder(self, folder: str, field: str = "folder") -> str:
        """Normalise ``folder`` and check it exists.

        Raises:
            ToolError: ``invalid_argument`` for a bad path; ``not_found`` (remedy
                ``office_create_folder``) when it does not exist.
        """
        path = self.norm_folder(folder, field)
        if path not in self.state.folders:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"no folder {path!r}; create it with office_create_folder", field=field
            )
        return path

    def name_taken(self, folder: str, name: str, exclude: str | None = None) -> File | None:
        """The file named ``name`` (case-insensitive) in ``folder`` other than ``exclude``, or None."""
        for f in self.state.files.values():
            if f.folder == folder and f.name.lower() == name.lower() and f.file_id != exclude:
                return f
        return None

    def add_file(self, name: str, folder: str, content: str) -> File:
        """Create a file (the caller validated ``folder``); return it.

        Raises:
            ToolError: ``invalid_argument`` for a bad name; ``conflict`` when the folder
                already holds a file of that name.
        """
        clean = self.check_name(name)
        if self.name_taken(folder, clean) is not None:
            raise ToolError(
                ErrorCode.CONFLICT, f"{folder.rstrip('/')}/{clean} already exists; choose another name", field="name"
            )
        file_id = self.new_id("f")
        f = File(file_id=file_id, name=clean, folder=folder, content=content, created_at=self.now, updated_at=self.now)
        self.state.files[file_id] = f
        return f
