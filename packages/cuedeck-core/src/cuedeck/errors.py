"""The one exception family of CueDeck, with stable codes.

Every failure a user or an agent can see is a :class:`CueError`. Its ``code`` is stable
(the CLI prints ``error[CODE]``, MCP returns it as the JSON-RPC error code) and its
``data`` dict carries the machine-readable details documented in docs/errors.md. Core's
classes are here; a plugin's live in its package, with codes from a range reserved for
it in docs/errors.md (a test keeps codes unique and documented).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


class CueError(Exception):
    """Base of every CueDeck failure: a stable ``code``, a message and a ``data`` dict."""

    code: ClassVar[int] = 1000
    title: ClassVar[str] = "CueDeck Error"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        help: str | None = None,
        **data: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.help = help
        self.data: dict[str, Any] = dict(data)
        if path is not None:
            self.data.setdefault("path", path)
        if line is not None:
            self.data.setdefault("line", line)
        if help is not None:
            self.data.setdefault("help", help)

    @property
    def location(self) -> str | None:
        """``path:line`` (or ``path``) when known."""
        if self.path is None:
            return None
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used by ``--json`` output and MCP error data."""
        return {"code": self.code, "title": self.title, "message": self.message, **self.data}


class FileNotFound(CueError):
    """A file, section or card that does not exist (1001); ``suggestion`` names a near match."""

    code = 1001
    title = "File Not Found"


class CycleDetected(CueError):
    """References or dependencies that loop back (1002); ``cycle_path`` lists the loop."""

    code = 1002
    title = "Cycle Detected"

    def __init__(self, cycle_path: Sequence[str], *, arrow: str = "->", **kw: Any) -> None:
        path = list(cycle_path)
        kw.setdefault("suggestion", f"Remove the reference from {path[-2]} to {path[-1]}")
        super().__init__(f"cycle detected: {f' {arrow} '.join(path)}", cycle_path=path, **kw)
        self.cycle_path = path


class TokenLimitExceeded(CueError):
    """Content that cannot fit the token budget (1003)."""

    code = 1003
    title = "Token Limit Exceeded"


class InvalidInput(CueError):
    """Bad input (1004); ``field`` names the offending argument, key or frontmatter field."""

    code = 1004
    title = "Invalid Input"


class ToolLoadFailed(InvalidInput):
    """A tool registered by import path that does not load (1004, like every other broken
    registration): its module fails to import or lacks the function; ``tool``, ``plugin``
    and ``target`` name it."""


class Conflict(CueError):
    """A write based on content that changed meanwhile (1005); ``current_hash`` is on disk."""

    code = 1005
    title = "Conflict"


class StaleCache(CueError):
    """A cache or output that no longer matches its inputs (1006)."""

    code = 1006
    title = "Stale Cache"


class LockError(CueError):
    """A lock another process holds for too long (1007); ``holder_pid`` names it."""

    code = 1007
    title = "Lock Error"


class MissingExtra(CueError):
    """A feature whose optional distribution is not installed (1008)."""

    code = 1008
    title = "Missing Extra"

    @classmethod
    def needs(cls, message: str, extra: str | None = None, **data: Any) -> MissingExtra:
        """``message`` with the hint that installs ``extra`` (every CueDeck plugin when no
        extra is named); ``extra`` is in the data."""
        return cls(message, help=install_hint(extra), extra=extra, **data)


def install_hint(
    extra: str | None = None, *, distribution: str = "cuedeck", reinstall: bool = False
) -> str:
    """The one way CueDeck says how to install a missing part: ``pip install
    "cuedeck[search]"`` (``cuedeck[all]`` when no extra is named), or how to reinstall it."""
    how = "pip install --force-reinstall" if reinstall else "pip install"
    return f'{how} "{distribution}[{extra or "all"}]"'


class ConfirmationRequired(CueError):
    """A destructive operation whose confirmation token is missing, wrong, used or expired
    (1009); ``data`` carries a fresh ``confirmation_token`` and the ``warning_message``."""

    code = 1009
    title = "Confirmation Required"


class PermissionDenied(CueError):
    """A file or folder CueDeck may not read or write (1010); ``path`` names it."""

    code = 1010
    title = "Permission Denied"


class NotIndexed(CueError):
    """A file the index leaves out (1011): a link whose real path leaves the workspace,
    or a binary file named like markdown; ``path`` names it, ``reason`` says why."""

    code = 1011
    title = "Not Indexed"


class Forbidden(CueError):
    """A tool the caller's role may not call (1012); ``role`` is the caller's,
    ``required_role`` the tool's."""

    code = 1012
    title = "Forbidden"


class Protected(CueError):
    """A path no tool may read or write, whatever path or link reaches it (1013): inside a
    ``.git`` folder, CueDeck's private files (cache, locks, token hashes, state) or, for
    writes, its control files (``config.toml``, memory); ``reason`` says which."""

    code = 1013
    title = "Protected Path"


class SharedFile(CueError):
    """A file with several hard links (1014): its content may be a file outside the
    workspace, which no path check can see, so tools do not read it."""

    code = 1014
    title = "Shared File"


class PatternTooLarge(CueError):
    """A client's regular expression that would compile or run past CueDeck's bounds
    (1016): counted repeats nesting past the size limit, or a search that needed more
    memory than its worker may take; ``limit`` says which bound."""

    code = 1016
    title = "Pattern Too Large"


class PortInUse(CueError):
    """A server port another program holds (1050); ``host`` and ``port`` name it, ``help``
    a free port to pass with ``--port``."""

    code = 1050
    title = "Port In Use"


class EditNotFound(CueError):
    """``edit_file``'s ``old_string`` does not occur in the file (1020)."""

    code = 1020
    title = "Edit Not Found"


class EditAmbiguous(CueError):
    """``edit_file``'s ``old_string`` occurs several times and ``replace_all`` is off (1021);
    ``occurrences`` says how many."""

    code = 1021
    title = "Edit Ambiguous"


def did_you_mean(
    wanted: str, candidates: Iterable[str], *, n: int = 3, cutoff: float = 0.5
) -> list[str]:
    """Candidates close to ``wanted``, best first (case-insensitive)."""
    pool = list(candidates)
    lowered = {c.lower(): c for c in pool}
    hits = difflib.get_close_matches(wanted.lower(), list(lowered), n=n, cutoff=cutoff)
    return [lowered[h] for h in hits]


def suggestion_text(matches: Sequence[str]) -> str | None:
    """``Did you mean 'x'?`` for the best match, or None."""
    return f"Did you mean '{matches[0]}'?" if matches else None
