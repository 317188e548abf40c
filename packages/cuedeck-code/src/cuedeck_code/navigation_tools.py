"""``list_files``, ``browse_directory`` and ``directory_tree``: finding your way around.

They see the files :mod:`cuedeck_code.listing` walks. Sizes, languages and, for files
the index holds, tokens and hashes come without reading a file again; other files are
read for theirs only when listed (a page at most).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import TokenLimitExceeded
from cuedeck.serving.reply import fit_reply

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
    from cuedeck_code.listing import Entry
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

Folder = Annotated[
    str, pydantic.Field(description="Workspace-relative folder ('.' for the root)", max_length=1000)
]
#: Files of one folder that ``directory_tree`` names before it only counts the rest.
TREE_FILES_SHOWN = 30
#: Files larger than this are listed without tokens or hash unless indexed.
MEASURE_BYTES = 2 * 1024 * 1024


class FileInfo(TypedDict):
    """One file of ``list_files``."""

    path: str
    size: int
    language: str | None
    tokens: int | None
    hash: str | None
    indexed: bool


class FileList(TypedDict):
    """What ``list_files`` returns."""

    success: bool
    files: list[FileInfo]
    total: int
    offset: int
    returned: int
    has_more: bool
    next_offset: int | None


def list_files(
    workspace: Workspace,
    globs: Annotated[
        list[str] | None,
        pydantic.Field(
            description='Only paths matching these globs, e.g. ["src/**/*.py"]', max_length=50
        ),
    ] = None,
    path: Folder = ".",
    language: Annotated[
        str | None,
        pydantic.Field(description="Only this language (python, markdown...)", max_length=40),
    ] = None,
    min_size: Annotated[
        int | None, pydantic.Field(description="At least this many bytes", ge=0)
    ] = None,
    max_size: Annotated[
        int | None, pydantic.Field(description="At most this many bytes", ge=0)
    ] = None,
    limit: Annotated[
        int, pydantic.Field(description="Most files in this page", ge=1, le=500)
    ] = 100,
    offset: Annotated[int, pydantic.Field(description="Files to skip (next_offset)", ge=0)] = 0,
) -> FileList:
    """List workspace files by glob, language and size, with tokens and sha256 hashes.

    gitignore-aware; never .git, CueDeck's cache or [files] deny. Paths in order;
    follow next_offset while has_more.
    """
    from cuedeck_code.listing import Walker, folder_path, language_name

    folder = folder_path(workspace, path)
    index = workspace.fresh_index()
    wanted = _globs(globs)
    chosen: list[Entry] = []
    for entry in Walker(workspace).walk(folder):
        if entry.is_dir:
            continue
        if wanted is not None and not wanted.match(entry.path):  # type: ignore[attr-defined]
            continue
        if min_size is not None and entry.size < min_size:
            continue
        if max_size is not None and entry.size > max_size:
            continue
        if language is not None and language_name(workspace, entry.path) != language.lower():
            continue
        chosen.append(entry)
    page = chosen[offset : offset + limit]
    files: list[FileInfo] = []
    for entry in page:
        tokens, digest = _measure(workspace, entry)
        files.append(
            {
                "path": entry.path,
                "size": entry.size,
                "language": language_name(workspace, entry.path),
                "tokens": tokens,
                "hash": digest,
                "indexed": entry.path in index,
            }
        )
    has_more = offset + len(page) < len(chosen)
    return {
        "success": True,
        "files": files,
        "total": len(chosen),
        "offset": offset,
        "returned": len(files),
        "has_more": has_more,
        "next_offset": offset + len(files) if has_more else None,
    }


def _globs(globs: list[str] | None) -> object | None:
    kept = [g.strip() for g in globs or [] if g.strip()]
    if not kept:
        return None
    from cuedeck.index.globs import Globs

    return Globs.of_arguments(kept, field="globs")


def _measure(workspace: Workspace, entry: Entry) -> tuple[int | None, str | None]:
    """Tokens and sha256 of a file: the index's when it holds the file unchanged, else
    read now (text files up to :data:`MEASURE_BYTES`)."""
    from cuedeck.index.left_out import binary
    from cuedeck.writes import sha256_bytes

    index = workspace.index
    if entry.path in index:
        document = index.get(entry.path)
        if document is not None and document.size == entry.size:
            return document.tokens, document.sha256
    if entry.size > MEASURE_BYTES:
        return None, None
    try:
        data = (workspace.root / entry.path).read_bytes()
    except OSError:
        return None, None
    if binary(data):
        return None, sha256_bytes(data)
    return workspace.count_tokens(data.decode("utf-8", errors="replace")), sha256_bytes(data)


class DirectoryEntry(TypedDict):
    """One entry of ``browse_directory``."""

    name: str
    path: str
    type: str
    size: int
    files: int | None
    language: str | None
    tokens: int | None


class DirectoryListing(TypedDict):
    """What ``browse_directory`` returns."""

    success: bool
    path: str
    entries: list[DirectoryEntry]
    directories: int
    files: int
    total: int
    offset: int
    returned: int
    has_more: bool
    next_offset: int | None


def browse_directory(
    workspace: Workspace,
    path: Folder = ".",
    limit: Annotated[
        int, pydantic.Field(description="Most entries in this page", ge=1, le=1000)
    ] = 200,
    offset: Annotated[int, pydantic.Field(description="Entries to skip (next_offset)", ge=0)] = 0,
) -> DirectoryListing:
    """List one folder: its subfolders (with how many files each holds) and its files.

    Folders first, then files, by name; languages and tokens of indexed files.
    """
    from cuedeck_code.listing import Walker, folder_path, language_name

    folder = folder_path(workspace, path)
    index = workspace.fresh_index()
    counts: dict[str, int] = {}
    own: list[Entry] = []
    for entry in Walker(workspace).walk(folder):
        if entry.depth == 1:
            own.append(entry)
        elif not entry.is_dir:
            top = entry.path[len(folder) + 1 if folder else 0 :].split("/", 1)[0]
            counts[top] = counts.get(top, 0) + 1
    own.sort(key=lambda e: (not e.is_dir, posixpath.basename(e.path).lower()))
    entries: list[DirectoryEntry] = []
    for entry in own:
        name = posixpath.basename(entry.path)
        document = index.get(entry.path) if not entry.is_dir and entry.path in index else None
        entries.append(
            {
                "name": name + "/" if entry.is_dir else name,
                "path": entry.path,
                "type": "directory" if entry.is_dir else "file",
                "size": entry.size,
                "files": counts.get(name, 0) if entry.is_dir else None,
                "language": None if entry.is_dir else language_name(workspace, entry.path),
                "tokens": document.tokens if document is not None else None,
            }
        )
    page = entries[offset : offset + limit]
    has_more = offset + len(page) < len(entries)
    return {
        "success": True,
        "path": folder or ".",
        "entries": page,
        "directories": sum(e.is_dir for e in own),
        "files": sum(not e.is_dir for e in own),
        "total": len(entries),
        "offset": offset,
        "returned": len(page),
        "has_more": has_more,
        "next_offset": offset + len(page) if has_more else None,
    }


class DirectoryTree(TypedDict):
    """What ``directory_tree`` returns."""

    success: bool
    path: str
    tree: str
    depth: int
    directories: int
    files: int
    estimated_tokens: int
    truncated: bool
    hint: str | None


def directory_tree(
    workspace: Workspace,
    path: Folder = ".",
    depth: Annotated[int, pydantic.Field(description="Folder levels to show", ge=1, le=20)] = 3,
    max_tokens: Annotated[int, pydantic.Field(description="Reply budget", ge=50, le=50000)] = 2000,
) -> DirectoryTree:
    """Show the folder tree under a folder, depth- and token-bounded, with file counts.

    Each folder line says how many files it holds in all; a folder's files beyond the
    first 30, and folders below depth, are counted but not named.
    """
    from cuedeck_code.listing import Walker, folder_path

    folder = folder_path(workspace, path)
    entries = list(Walker(workspace).walk(folder))
    below: dict[str, int] = {}  # folder -> files it holds at any depth
    for entry in entries:
        if entry.is_dir:
            continue
        parent = posixpath.dirname(entry.path)
        while True:
            below[parent] = below.get(parent, 0) + 1
            if parent == folder or not parent:
                break
            parent = posixpath.dirname(parent)
    own_files: dict[str, int] = {}  # folder -> its own files
    for entry in entries:
        if not entry.is_dir:
            parent = posixpath.dirname(entry.path)
            own_files[parent] = own_files.get(parent, 0) + 1
    lines = [f"{folder or '.'}/ ({below.get(folder, 0)} files)"]
    shown_files: dict[str, int] = {}
    for entry in entries:
        if entry.depth > depth:
            continue
        indent = "  " * entry.depth
        name = posixpath.basename(entry.path)
        if entry.is_dir:
            lines.append(f"{indent}{name}/ ({below.get(entry.path, 0)} files)")
            continue
        parent = posixpath.dirname(entry.path)
        count = shown_files.get(parent, 0)
        shown_files[parent] = count + 1
        if count < TREE_FILES_SHOWN:
            lines.append(f"{indent}{name}")
        elif count == TREE_FILES_SHOWN:
            lines.append(f"{indent}… and {own_files[parent] - count} more files")
    directories = sum(e.is_dir for e in entries)

    def reply(budget: int) -> DirectoryTree:
        text, tokens, truncated = _fit(workspace, lines, budget)
        hint = None
        if truncated:
            hint = (
                f"The tree was cut at max_tokens={max_tokens}: lower depth or browse a subfolder."
            )
        return {
            "success": True,
            "path": folder or ".",
            "tree": text,
            "depth": depth,
            "directories": directories,
            "files": len(entries) - directories,
            "estimated_tokens": tokens,
            "truncated": truncated,
            "hint": hint,
        }

    return fit_reply(workspace, max_tokens, reply)


def _fit(workspace: Workspace, lines: list[str], budget: int) -> tuple[str, int, bool]:
    """The first lines of the tree that fit ``budget`` tokens."""
    text = "\n".join(lines)
    tokens = workspace.count_tokens(text)
    if tokens <= budget:
        return text, tokens, False
    low, high = 0, len(lines)
    while low < high:  # the most lines that fit, with the closing ellipsis
        middle = (low + high + 1) // 2
        if workspace.count_tokens("\n".join([*lines[:middle], "…"])) <= budget:
            low = middle
        else:
            high = middle - 1
    if low < 1:
        needed = workspace.count_tokens(f"{lines[0]}\n…")
        raise TokenLimitExceeded(
            f"a budget of {budget} tokens is too small for even one line of the tree "
            f"(it needs {needed})",
            current_size=needed,
            limit=budget,
            action=f"ask for max_tokens of at least {needed}",
        )
    kept = "\n".join([*lines[:low], "…"])
    return kept, workspace.count_tokens(kept), True
