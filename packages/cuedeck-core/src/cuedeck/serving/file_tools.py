"""File tools: read any text file of the workspace in pages, create, edit and delete files.

Every write is checked against the ``content_hash`` the writer last read: the sha256 of
the file's raw bytes, the same hash ``get_file_content`` reports, so a CRLF or BOM file
is edited through exactly the hash it was read with. A stale hash is error 1005 with
``current_content_hash``; writes are atomic (temp file, fsync, rename) under a lock, so
of two writers holding the same hash exactly one wins. Paths go through the workspace
boundary (:meth:`Workspace.locate`, decided on the resolved real path: no ``..``, no
absolute path, no link out, nothing inside ``.git`` or CueDeck's private and control
files) and never into a ``[files] deny`` glob; every write goes through core's write
path (:func:`cuedeck.writes.rewrite_file`).
"""

from __future__ import annotations

import posixpath
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import (
    Conflict,
    EditAmbiguous,
    EditNotFound,
    FileNotFound,
    InvalidInput,
    SharedFile,
)
from cuedeck.serving.confirmation import ConfirmationAsked, ConfirmationToken, confirm
from cuedeck.serving.paging import check_offset, page_lines
from cuedeck.writes import read_regular, remove_file, rewrite_file, sha256_bytes, write_file

if TYPE_CHECKING:
    from pathlib import Path

    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

HASH = "^[0-9a-f]{64}$"
#: A placeholder masking put in a reply: text that is not in the file.
PLACEHOLDER = re.compile(r"\[REDACTED:[A-Za-z0-9_.-]+#\d+\]")
LANGUAGES = {
    ".py": "python", ".md": "markdown", ".js": "javascript", ".ts": "typescript",
    ".tsx": "typescript", ".jsx": "javascript", ".json": "json", ".toml": "toml",
    ".yaml": "yaml", ".yml": "yaml", ".sh": "shell", ".rs": "rust", ".go": "go",
    ".java": "java", ".c": "c", ".h": "c", ".cpp": "cpp", ".rb": "ruby", ".html": "html",
    ".css": "css", ".sql": "sql", ".txt": "text",
}  # fmt: skip

FilePath = Annotated[
    str,
    pydantic.Field(
        description="Workspace-relative path",
        min_length=1,
        max_length=1000,
        # ``path`` too: read_doc took that name, and callers of one try it on the other.
        validation_alias=pydantic.AliasChoices("file_path", "path"),
    ),
]


class FileMetadata(TypedDict):
    """What ``get_file_content`` says about the page and the file."""

    path: str
    size: int
    modified_at: str
    language: str | None
    total_lines: int
    offset: int
    limit: int | None
    returned_lines: int
    has_more: bool
    estimated_tokens: int
    max_tokens_per_request: int
    truncated: bool
    truncated_at_line: int | None
    requires_pagination: bool
    pagination_hint: str | None


class FileContent(TypedDict):
    """The reply of ``get_file_content``."""

    success: bool
    file_path: str
    content: str
    content_hash: str
    metadata: FileMetadata


class CreatedFile(TypedDict):
    """The reply of ``create_file``."""

    success: bool
    file_path: str
    content_hash: str
    size_bytes: int
    created_at: str


class EditedFile(TypedDict):
    """The reply of ``edit_file``."""

    success: bool
    file_path: str
    new_content_hash: str
    modified_at: str
    changes_made: int


class FileDeleted(TypedDict):
    """What ``delete_file`` did, once confirmed."""

    success: bool
    file_path: str
    deleted_at: str


#: The reply of ``delete_file``: done, or asking for confirmation (its first call).
DeletedFile = FileDeleted | ConfirmationAsked


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def checked_path(workspace: Workspace, file_path: str, *, write: bool = False) -> tuple[str, Path]:
    """``file_path`` as a workspace-relative path and the file it reaches, or the refusal:
    1004 outside the workspace or in ``[files] deny``, 1013 a protected path (see
    :meth:`Workspace.locate <cuedeck.workspace.Workspace.locate>`), whatever link leads
    there."""
    rel, real_rel = workspace.locate(file_path, field="file_path", write=write)
    if rel == "." or real_rel == ".":
        raise InvalidInput(f"{file_path!r} is the workspace folder, not a file", field="file_path")
    if workspace.denied(rel) or workspace.denied(real_rel):
        raise InvalidInput(
            f"{rel} matches [files] deny: the file tools neither read nor write it",
            field="file_path",
            path=rel,
            help="secrets and keys stay out of replies; change [files] deny to allow it",
        )
    return rel, workspace.root / real_rel


def _bytes(rel: str, path: Path) -> bytes:
    try:
        data, status = read_regular(path, rel)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFound(f"{rel} does not exist", path=rel) from None
    if status.st_nlink > 1:
        raise SharedFile(
            f"{rel} has several hard links: its content may belong to a file outside "
            "the workspace, so the file tools do not read it",
            path=rel,
            field="file_path",
            help="replace the hard link with a copy (cp --remove-destination)",
        )
    return data


def get_file_content(
    workspace: Workspace,
    file_path: FilePath,
    offset: Annotated[int, pydantic.Field(description="First line, 1-based", ge=1)] = 1,
    limit: Annotated[int | None, pydantic.Field(description="Max lines", ge=1)] = None,
    anchor: Annotated[
        str | None,
        pydantic.Field(
            description="A heading or code symbol (Client.send) of an indexed file: read "
            "only its lines (offset counts from its first line)",
            max_length=200,
        ),
    ] = None,
) -> FileContent:
    """Read a text file of the workspace in token-limited pages of whole lines.

    content_hash is the sha256 of the raw bytes: pass it to edit_file or delete_file.
    Follow pagination_hint while requires_pagination.
    """
    from cuedeck.index.left_out import binary
    from cuedeck.serving.reply import fit_reply

    rel, path = checked_path(workspace, file_path)
    data = _bytes(rel, path)
    if binary(data):
        raise InvalidInput(f"{rel} is not a text file", field="file_path", path=rel)
    lines = data.splitlines(keepends=True)
    total = len(lines)
    first, stop = 0, total  # the file, or the anchor's lines, as 0-based [first, stop)
    if anchor is not None:
        first, stop = _anchor_lines(workspace, rel, data, anchor)
    check_offset(offset, stop - first)
    start = first + offset - 1
    end = stop if limit is None else min(stop, start + limit)
    limit_tokens = workspace.config.files.max_tokens
    stat = path.stat()

    def reply(budget: int) -> FileContent:
        page = page_lines(workspace.count_tokens, lines, start, end, budget)
        last = start + page.taken  # 0-based end of the page
        truncated = last < end or page.cut_from is not None  # by the budget, not limit
        has_more = last < stop
        hints = []
        if page.cut_from is not None:
            hints.append(
                f"Line {start + 1} alone is {page.cut_from} tokens, over the "
                f"{limit_tokens}-token limit: only its start is here."
            )
        if has_more:
            why = "Content truncated at the token limit" if last < end else "File has more content"
            hint = f"{why}. Continue with offset={last - first + 1}"
            if anchor is not None:
                hint += f" and the same anchor (its lines {first + 1}-{stop})"
            hints.append(hint)
        return {
            "success": True,
            "file_path": rel,
            "content": page.text,
            "content_hash": sha256_bytes(data),
            "metadata": {
                "path": rel,
                "size": stat.st_size,
                "modified_at": datetime.fromtimestamp(stat.st_mtime, UTC).strftime(
                    "%Y-%m-%dT%H:%M:%SZ"
                ),
                "language": LANGUAGES.get(posixpath.splitext(rel)[1].lower()),
                "total_lines": total,
                "offset": offset,
                "limit": limit,
                "returned_lines": page.taken,
                "has_more": has_more,
                "estimated_tokens": page.tokens,
                "max_tokens_per_request": limit_tokens,
                "truncated": truncated,
                "truncated_at_line": last if truncated else None,
                "requires_pagination": has_more,
                "pagination_hint": " ".join(hints) or None,
            },
        }

    return fit_reply(workspace, limit_tokens, reply)


def _anchor_lines(workspace: Workspace, rel: str, data: bytes, anchor: str) -> tuple[int, int]:
    """The 0-based ``[first, stop)`` lines of the heading or symbol ``anchor`` of the
    indexed file ``rel`` (re-indexed first when ``data`` is newer than the index)."""
    from cuedeck.serving.read_doc import anchor_not_found

    document = workspace.document(rel)
    if document.sha256 != sha256_bytes(data):
        workspace.refresh_paths([rel])
        document = workspace.document(rel)
    section = document.find_section(anchor)
    if section is None:
        raise anchor_not_found(document, anchor)
    return section.line - 1, section.end_line


def create_file(
    workspace: Workspace,
    file_path: FilePath,
    content: Annotated[str, pydantic.Field(description="The whole file")],
) -> CreatedFile:
    """Create a new file (folders as needed); an existing file is refused (1005)."""
    rel, path = checked_path(workspace, file_path, write=True)
    data = content.encode("utf-8")
    digest = write_file(workspace.root, path, data, expected_sha256="", display=rel)
    workspace.invalidate([rel])
    return {
        "success": True,
        "file_path": rel,
        "content_hash": digest,
        "size_bytes": len(data),
        "created_at": _now(),
    }


def edit_file(
    workspace: Workspace,
    file_path: FilePath,
    old_string: Annotated[str, pydantic.Field(description="Exact text to replace", min_length=1)],
    new_string: Annotated[str, pydantic.Field(description="Its replacement")],
    content_hash: Annotated[
        str,
        pydantic.Field(description="sha256 get_file_content returned", pattern="^[0-9a-f]{64}$"),
    ],
    replace_all: Annotated[bool, pydantic.Field(description="Replace every occurrence")] = False,
) -> EditedFile:
    """Replace old_string (exactly once, or every time with replace_all) in a file.

    content_hash must be the file's current hash (a newer file is 1005 with
    current_content_hash). Line endings and a byte-order mark are kept.
    """
    if PLACEHOLDER.search(old_string):
        raise InvalidInput(
            "old_string contains a masking placeholder ([REDACTED:...]): replies are masked, "
            "files are not, so that text is not in the file",
            field="old_string",
            help="match text around the secret instead, or edit the file by hand",
        )
    rel, path = checked_path(workspace, file_path, write=True)
    found = 0

    def edit(data: bytes | None) -> bytes:
        nonlocal found
        if data is None:
            raise FileNotFound(f"{rel} does not exist", path=rel)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput(f"{rel} is not UTF-8 text", field="file_path") from None
        old, new = old_string, new_string
        if "\r\n" in text and old not in text and "\n" in old:
            # The agent wrote \n where the file has \r\n: edit in the file's line endings.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        found = text.count(old)
        if found == 0:
            raise EditNotFound(f"old_string was not found in {rel}", path=rel)
        if found > 1 and not replace_all:
            raise EditAmbiguous(
                f"old_string appears {found} times in {rel}",
                path=rel,
                occurrences=found,
                help="add surrounding text to make it unique, or pass replace_all",
            )
        edited = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        return edited.encode("utf-8")

    _bytes(rel, path)  # a shared (hard-linked) file is refused before anything else
    digest = rewrite_file(workspace.root, path, edit, expected_sha256=content_hash, display=rel)
    assert digest is not None  # edit always returns content
    workspace.invalidate([rel])
    return {
        "success": True,
        "file_path": rel,
        "new_content_hash": digest,
        "modified_at": _now(),
        "changes_made": found if replace_all else 1,
    }


def delete_file(
    workspace: Workspace,
    file_path: FilePath,
    content_hash: Annotated[
        str | None,
        pydantic.Field(description="Delete only if still this hash", pattern=HASH),
    ] = None,
    confirmation_token: ConfirmationToken = None,
) -> DeletedFile:
    """Delete a file; with content_hash, only if it has not changed since it was read.

    The first call answers requires_confirmation with a token bound to this file and
    its current content; call again with that confirmation_token to delete.
    """
    rel, path = checked_path(workspace, file_path, write=True)
    data = _bytes(rel, path)  # a missing file or a folder is named as such
    current = sha256_bytes(data)
    if content_hash is not None and content_hash != current:
        raise Conflict(
            f"{rel} changed since it was read; not deleted",
            path=rel,
            expected_hash=content_hash,
            current_hash=current,
            current_content_hash=current,
        )
    lines = data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
    asked = confirm(
        workspace,
        warning=f"deletes {rel} ({len(data):,} bytes, {lines:,} lines) for good; "
        "a file git does not track cannot be recovered",
        token=confirmation_token,
        state=current,
        resolved={"path": rel},
    )
    if asked is not None:
        return asked
    # The entry named goes (a link itself, not what it points to); the content confirmed.
    remove_file(workspace.root, workspace.root / rel, expected_sha256=current, display=rel)
    workspace.invalidate([rel])
    return {"success": True, "file_path": rel, "deleted_at": _now()}
