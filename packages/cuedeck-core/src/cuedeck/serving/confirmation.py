"""Confirmation tokens for destructive operations.

A destructive tool answers its first call with a token instead of acting. The token is
single-use, expires after five minutes and is bound to the operation, its exact
arguments and a digest of the state the operation would destroy (for example the files
``git clean`` would remove), so it cannot confirm anything else, or the same call after
the state moved on. Tokens are kept hashed in the workspace cache, under a lock, so a
second process (a CLI call, another server worker) can redeem what the first issued. A
server whose nodes share a store elsewhere (a team on PostgreSQL) sets
:data:`CONFIRMATION_STORE` for the call, and tokens are kept there instead.

Tools use :func:`confirm`, which binds the tool's name and every validated argument of
the call by itself (a tool cannot forget one), plus what the tool says those arguments
resolve to and the state they would destroy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import ConfirmationRequired, CueError
from cuedeck.layout import CONFIRMATIONS_LOCK, CONFIRMATIONS_PATH
from cuedeck.writes import locked, write_file

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path

    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

#: Letters and digits a person cannot confuse (no 0/O, 1/I/L, 5/S, 2/Z, 8/B).
ALPHABET = "34679ACDEFGHJKMNPQRTUVWXY"
TOKEN_LENGTH = 12
TTL_SECONDS = 300.0


class ConfirmationStore(Protocol):
    """Where pending tokens are kept, by the sha256 of the token."""

    def put_confirmation(self, key: str, entry: dict[str, Any]) -> None:
        """Keep ``entry`` (binding, operation, expires) under ``key``."""
        ...

    def take_confirmation(self, key: str) -> dict[str, Any] | None:
        """Remove and return the entry of ``key`` (None: unknown or already taken)."""
        ...


#: The store of the call being served, when not the workspace's own file (a team's nodes).
CONFIRMATION_STORE: ContextVar[ConfirmationStore | None] = ContextVar(
    "cuedeck_confirmation_store", default=None
)


#: The argument of a destructive tool that carries the token (``confirmed_token`` is
#: accepted too: :data:`cuedeck.plugins.tools.ARGUMENT_ALIASES`).
ConfirmationToken = Annotated[
    str | None,
    pydantic.Field(
        description="The confirmation_token a first call returned", min_length=1, max_length=64
    ),
]


class ConfirmationAsked(TypedDict):
    """The reply of a destructive tool's first call: nothing was changed yet."""

    requires_confirmation: bool
    confirmation_token: str
    warning_message: str


def confirm(
    workspace: Workspace,
    *,
    warning: str,
    token: str | None,
    state: str = "",
    resolved: Mapping[str, Any] | None = None,
    normalised: Mapping[str, Any] | None = None,
) -> ConfirmationAsked | None:
    """None when ``token`` confirms the destructive call now running; else the reply that
    asks for confirmation (``token`` None) or :class:`ConfirmationRequired` (1009, a
    token that does not confirm it, with a fresh one).

    The token is bound to the tool and every validated argument of the call (taken from
    :data:`cuedeck.plugins.tools.CURRENT_CALL`, so nothing is left out), to ``resolved`` (what the
    arguments name now: a ref's commit, the files it would overwrite) and to ``state`` (a
    digest of what the call would destroy). ``normalised`` replaces arguments by the form
    the tool reads them in (ids sorted, a path normalised), so that equivalent calls share
    a token; it may only name arguments of the call. ``warning`` says what would be lost.
    """
    from cuedeck.plugins.tools import ARGUMENT_ALIASES, CURRENT_CALL

    call = CURRENT_CALL.get()
    if call is None:
        raise CueError(
            "a destructive operation was called outside a tool call, so it cannot be confirmed",
            help="call it through its registered tool (workspace.plugins.tools()[name].call(...))",
        )
    skip = {"confirmation_token", *ARGUMENT_ALIASES["confirmation_token"]}
    arguments = {key: value for key, value in call.arguments.items() if key not in skip}
    unknown = set(normalised or {}) - set(arguments)
    if unknown:
        raise CueError(f"{call.tool}: normalised names no argument of the call: {sorted(unknown)}")
    bound = {"arguments": {**arguments, **(normalised or {})}, "resolved": dict(resolved or {})}
    confirmations = Confirmations(workspace.root, store=CONFIRMATION_STORE.get())
    if token is None:
        return {
            "requires_confirmation": True,
            "confirmation_token": confirmations.issue(call.tool, bound, state),
            "warning_message": warning,
        }
    confirmations.redeem(token, call.tool, bound, state, warning=warning)
    return None


def binding(operation: str, arguments: Mapping[str, Any], state: str = "") -> str:
    """The digest a token is bound to: operation, canonical arguments and state."""
    canonical = json.dumps(
        {"operation": operation, "arguments": arguments, "state": state},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _token_key(token: str) -> str:
    return hashlib.sha256(token.strip().upper().encode("utf-8")).hexdigest()


class Confirmations:
    """Issues and redeems the confirmation tokens of one workspace (kept in its cache, or
    in ``store``)."""

    def __init__(
        self,
        root: Path,
        *,
        ttl: float = TTL_SECONDS,
        clock: Callable[[], float] = time.time,
        store: ConfirmationStore | None = None,
    ) -> None:
        self.root = root
        self.ttl = ttl
        self.clock = clock
        self.store: ConfirmationStore = store or FileConfirmations(root, clock=clock)

    def issue(self, operation: str, arguments: Mapping[str, Any], state: str = "") -> str:
        """A new token for exactly this operation, these arguments and this state."""
        raw = "".join(secrets.choice(ALPHABET) for _ in range(TOKEN_LENGTH))
        token = f"{raw[:4]}-{raw[4:8]}-{raw[8:]}"
        entry = {
            "binding": binding(operation, arguments, state),
            "operation": operation,
            "expires": self.clock() + self.ttl,
        }
        self.store.put_confirmation(_token_key(token), entry)
        return token

    def redeem(
        self,
        token: str,
        operation: str,
        arguments: Mapping[str, Any],
        state: str = "",
        *,
        warning: str,
    ) -> None:
        """Spend ``token`` on this call, or raise :class:`ConfirmationRequired` (1009).

        The error carries a fresh token for this exact call and ``warning`` (what would
        be lost), so a client can show it and ask again. A token is spent even when it
        does not match, so a guessed or leaked token works at most once.
        """
        entry = self.store.take_confirmation(_token_key(token))
        if entry is None:
            reason = "unknown or already used"
        elif entry["expires"] < self.clock():
            reason = "expired"
        elif entry["binding"] != binding(operation, arguments, state):
            reason = (
                "issued for other arguments or the state has changed since"
                if entry["operation"] == operation
                else f"issued for {entry['operation']}"
            )
        else:
            return
        fresh = self.issue(operation, arguments, state)
        raise ConfirmationRequired(
            f"{operation}: the confirmation token is {reason}; nothing was changed",
            confirmation_token=fresh,
            warning_message=warning,
            reason=reason,
            help="check the warning, then call again with the new confirmation_token",
        )


class FileConfirmations:
    """Pending tokens in the workspace's cache (a JSON file under a lock): shared by the
    processes of one machine."""

    def __init__(self, root: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.root = root
        self.path = root / CONFIRMATIONS_PATH
        self.lock_path = root / CONFIRMATIONS_LOCK
        self.clock = clock

    def put_confirmation(self, key: str, entry: dict[str, Any]) -> None:
        """Keep ``entry`` under ``key``."""
        with self._locked() as pending:
            pending[key] = entry

    def take_confirmation(self, key: str) -> dict[str, Any] | None:
        """Remove and return the entry of ``key``."""
        with self._locked() as pending:
            found: dict[str, Any] | None = pending.pop(key, None)
        return found

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        """The pending tokens, locked; written back (old ones dropped) on success."""
        now = self.clock()
        with locked(self.lock_path):
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
            except (FileNotFoundError, ValueError):
                loaded = {}
            pending = {
                key: value
                for key, value in (loaded.items() if isinstance(loaded, dict) else ())
                # Expired tokens stay an hour so that their refusal can say "expired".
                if isinstance(value, dict) and value.get("expires", 0) >= now - 3600
            }
            yield pending
            write_file(self.root, self.path, json.dumps(pending, sort_keys=True))
