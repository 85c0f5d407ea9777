"""Drive tools of the office app: folders, text files and notes, and sharing.

Sharing a file with a person of the directory needs the ``office.share`` privilege of the
system app (``permission_denied`` -> ``system_request_privilege``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.office.common import OfficeBase
from mcpgym.sandboxes.office.models import File, Share
from mcpgym.sandboxes.office.views import (
    FileDeleted,
    FileInfo,
    FileList,
    FileResult,
    FileView,
    FolderListing,
    FolderResult,
    ShareList,
    ShareResult,
    ShareView,
)

PRIVILEGE = "office.share"
FileId = Annotated[str, Field(description="file id, e.g. f-003")]
Person = Annotated[str, Field(description="a person of the directory: email, id (p-003) or full name")]
FILE_NOT_FOUND = ["office_list_files", "office_search_files"]


class FileTools(OfficeBase):
    """Mixin: the drive tools (see the module docstring)."""

    # -- helpers ---------------------------------------------------------------------------
    def _file(self, file_id: str) -> File:
        f = self.state.files.get(file_id)
        if f is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no file {file_id!r}; see office_list_files or office_search_files",
                field="file_id",
            )
        return f

    def _sorted(self, files: list[File]) -> list[FileInfo]:
        return [self.file_info(f) for f in sorted(files, key=lambda f: (f.folder, f.name.lower(), f.file_id))]

    def _share_view(self, f: File, s: Share) -> ShareView:
        return ShareView(
            file_id=f.file_id,
            path=self.file_info(f).path,
            email=s.email,
            name=s.name,
            permission=s.permission,
            shared_iso=iso(s.shared_at),
        )

    # -- browsing --------------------------------------------------------------------------
    @tool(
        "read",
        ["office.file", "office.folder"],
        alternatives=["office_search_files"],
        remedies={"not_found": ["office_list_files"]},
    )
    def office_list_files(
        self,
        folder: Annotated[str, Field(description="folder path, e.g. /Documents (default: the root /)")] = "/",
        recursive: Annotated[bool, Field(description="include files of every subfolder")] = False,
    ) -> FolderListing:
        """List a drive folder: its direct subfolders and its files (name, id, size in bytes,
        who it is shared with); recursive lists every file below it."""
        path = self.require_folder(folder)
        prefix = path.rstrip("/") + "/"
        subfolders = sorted(
            p for p in self.state.folders if p != path and p.startswith(prefix) and "/" not in p[len(prefix) :]
        )
        files = [
            f for f in self.state.files.values() if f.folder == path or (recursive and f.folder.startswith(prefix))
        ]
        return FolderListing(folder=path, subfolders=subfolders, files=self._sorted(files))

    @tool("read", ["office.file"], alternatives=["office_list_files"])
    def office_search_files(
        self,
        query: Annotated[
            str,
            Field(min_length=1, max_length=200, description="words that must all occur in the name, path or content"),
        ],
    ) -> FileList:
        """Search drive files whose name, folder or content contains every word of the query
        (case-insensitive)."""
        words = query.lower().split()
        if not words:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "the query must contain a word", field="query")
        hits = [
            f for f in self.state.files.values() if all(w in f"{f.folder}/{f.name}\n{f.content}".lower() for w in words)
        ]
        return FileList(query=query, files=self._sorted(hits))

    @tool("read", ["office.file"], remedies={"not_found": FILE_NOT_FOUND})
    def office_read_file(self, file_id: FileId) -> FileView:
        """Read a file's text content and metadata."""
        f = self._file(file_id)
        return FileView(file=self.file_info(f), content=f.content)

    # -- writing ---------------------------------------------------------------------------
    @tool(
        "write",
        ["office.file"],
        preconditions=["office.folder", "office.file"],
        remedies={"not_found": ["office_create_folder"]},
        id_args=["folder", "name"],
    )
    def office_create_file(
        self,
        name: Annotated[str, Field(min_length=1, max_length=100, description="file name, e.g. notes.md")],
        content: Annotated[str, Field(max_length=10_000, description="text content")] = "",
        folder: Annotated[str, Field(description="existing folder path")] = "/Documents",
    ) -> FileResult:
        """Create a text file or note in a folder. Errors: conflict when the folder already has
        a file of that name; not_found for a missing folder (office_create_folder)."""
        path = self.require_folder(folder)
        return FileResult(file=self.file_info(self.add_file(name, path, content)))

    @tool("write", ["office.file"], remedies={"not_found": FILE_NOT_FOUND})
    def office_edit_file(
        self,
        file_id: FileId,
        content: Annotated[str, Field(max_length=10_000, description="new text")],
        mode: Annotated[
            Literal["replace", "append"], Field(description="replace the content or append a line")
        ] = "replace",
    ) -> FileView:
        """Change a file's content: replace it, or append the text on a new line."""
        f = self._file(file_id)
        if mode == "replace":
            new = content
        else:
            new = f.content + ("" if not f.content or f.content.endswith("\n") else "\n") + content
        if len(new) > 100_000:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "a file may hold at most 100000 characters", field="content")
        f.content = new
        f.updated_at = self.now
        return FileView(file=self.file_info(f), content=f.content)

    @tool(
        "write",
        ["office.file"],
        alternatives=["office_move_file"],
        preconditions=["office.file"],
        remedies={"not_found": FILE_NOT_FOUND},
    )
    def office_rename_file(
        self,
        file_id: FileId,
        new_name: Annotated[str, Field(min_length=1, max_length=100, description="new file name")],
    ) -> FileResult:
        """Rename a file within its folder. Errors: conflict when the name is taken there."""
        f = self._file(file_id)
        return FileResult(file=self.file_info(self._relocate(f, f.folder, new_name)))

    @tool(
        "write",
        ["office.file"],
        alternatives=["office_rename_file"],
        preconditions=["office.folder", "office.file"],
        remedies={"not_found": ["office_create_folder", *FILE_NOT_FOUND]},
    )
    def office_move_file(
        self,
        file_id: FileId,
        folder: Annotated[str, Field(description="destination folder path (must exist)")],
        new_name: Annotated[str | None, Field(max_length=100, description="also rename it")] = None,
    ) -> FileResult:
        """Move a file to another folder, optionally renaming it. Errors: not_found for a
        missing folder (office_create_folder), conflict when the name is taken there."""
        f = self._file(file_id)
        path = self.require_folder(folder)
        return FileResult(file=self.file_info(self._relocate(f, path, f.name if new_name is None else new_name)))

    def _relocate(self, f: File, folder: str, name: str) -> File:
        clean = self.check_name(name, "new_name")
        if self.name_taken(folder, clean, exclude=f.file_id) is not None:
            raise ToolError(ErrorCode.CONFLICT, f"{folder.rstrip('/')}/{clean} already exists", field="new_name")
        if (f.folder, f.name) != (folder, clean):
            f.folder, f.name, f.updated_at = folder, clean, self.now
        return f

    @tool("write", ["office.file", "office.share"], remedies={"not_found": FILE_NOT_FOUND}, destructive=True)
    def office_delete_file(self, file_id: FileId) -> FileDeleted:
        """Delete a file permanently (its shares end with it)."""
        f = self._file(file_id)
        path = self.file_info(f).path
        del self.state.files[file_id]
        return FileDeleted(file_id=file_id, path=path)

    @tool("write", ["office.folder"], id_args=["path"])
    def office_create_folder(
        self,
        path: Annotated[str, Field(min_length=1, max_length=300, description="folder path, e.g. /Projects/2026")],
    ) -> FolderResult:
        """Create a folder (and any missing parent folders). Creating an existing folder
        changes nothing (created=false)."""
        norm = self.norm_folder(path, "path")
        created = norm not in self.state.folders
        parts = norm.strip("/").split("/") if norm != "/" else []
        for i in range(1, len(parts) + 1):
            p = "/" + "/".join(parts[:i])
            if p not in self.state.folders:
                self.state.folders.append(p)
        self.state.folders.sort()
        return FolderResult(path=norm, created=created, folders=list(self.state.folders))

    # -- sharing ---------------------------------------------------------------------------
    @tool(
        "write",
        ["office.share"],
        preconditions=["system.privilege", "office.file"],
        remedies={
            "permission_denied": ["system_request_privilege"],
            "not_found": ["office_list_contacts", *FILE_NOT_FOUND],
        },
        id_args=["file_id", "person"],
    )
    def office_share_file(
        self,
        file_id: FileId,
        person: Person,
        permission: Annotated[Literal["view", "edit"], Field(description="view (read only) or edit")] = "view",
    ) -> ShareResult:
        """Share a file with a person of the directory (view or edit); sharing again changes the
        permission. Needs the office.share privilege (permission_denied ->
        system_request_privilege)."""
        f = self._file(file_id)
        email = self.resolve_person(person, "person", directory_only=True)
        self.other("system").require_privilege(PRIVILEGE)
        for s in f.shares:
            if s.email == email:
                changed = s.permission != permission
                s.permission = permission
                return ShareResult(share=self._share_view(f, s), changed=changed)
        s = Share(email=email, name=self.display_name(email), permission=permission, shared_at=self.now)
        f.shares = sorted([*f.shares, s], key=lambda x: x.email)
        return ShareResult(share=self._share_view(f, s), changed=True)

    @tool(
        "write",
        ["office.share"],
        remedies={"not_found": ["office_list_shares", *FILE_NOT_FOUND]},
        id_args=["file_id", "person"],
        destructive=True,
    )
    def office_unshare_file(self, file_id: FileId, person: Person) -> ShareResult:
        """Stop sharing a file with a person. Errors: not_found when it is not shared with them."""
        f = self._file(file_id)
        email = self.resolve_person(person, "person")
        for s in f.shares:
            if s.email == email:
                f.shares = [x for x in f.shares if x.email != email]
                return ShareResult(share=self._share_view(f, s), changed=True, removed=True)
        raise ToolError(
            ErrorCode.NOT_FOUND, f"{file_id} is not shared with {email}; see office_list_shares", field="person"
        )

    @tool("read", ["office.share"], remedies={"not_found": FILE_NOT_FOUND})
    def office_list_shares(
        self,
        file_id: Annotated[str | None, Field(description="only this file's shares")] = None,
    ) -> ShareList:
        """List who the user's files are shared with (path, person, permission)."""
        files = [self._file(file_id)] if file_id is not None else list(self.state.files.values())
        out = [self._share_view(f, s) for f in files for s in f.shares]
        out.sort(key=lambda v: (v.path, v.email))
        return ShareList(shares=out)
