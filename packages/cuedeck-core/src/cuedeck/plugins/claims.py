"""Claims as core sees them: who is acting, and the guard every path-writing tool passes.

The ``claims`` service's typed view (as the host's other typed views of what plugins
registered), kept in this room so that :class:`cuedeck.plugins.tools.Tool` can call the
guard without reaching above itself.

Agents take cards with claims that expire unless renewed (a lease), and a claim may name
the files it intends to change. Core keeps no claims: a plugin registers the ``claims``
service (the tasks plugin does), an object of the :class:`ClaimRegistry` protocol, and
core asks it two things through this module alone:

- :func:`guard_writes`: called by :meth:`cuedeck.plugins.tools.Tool.call` for every tool
  registered with ``writes=`` (the file tools, the git tools that take paths) before the
  tool runs. Paths another agent's live claim holds are refused by the registry with its
  own error (who holds them, until when) unless the call passed ``force``, which the
  registry records.
- :func:`holder_of`: who holds a card now, for anything that shows or records it (memory's
  task snapshots).

Who is acting is :func:`acting_agent`: the member a server authenticated by token (set
with :func:`act_as`), else the name a call gives, else ``$CUEDECK_AGENT``, else the name
a server knows the caller by (``local``), else the user's login name.
"""

from __future__ import annotations

import contextlib
import os
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from cuedeck.errors import CueError, InvalidInput, MissingExtra

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from contextvars import Token

    from cuedeck.hooktypes import WorkspaceArg

#: The name of the service a claims plugin registers (``register_services``).
CLAIMS_SERVICE = "claims"
#: Names the agent a process acts for, when nothing more certain does.
ENV_AGENT = "CUEDECK_AGENT"
#: A path argument's value meaning "the whole workspace" (a git tool given no paths).
WHOLE_WORKSPACE = "."


def iso_time(seconds: float) -> str:
    """``seconds`` since the epoch as ISO 8601 UTC with milliseconds (leases are short)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@attrs.frozen
class Hold:
    """A live claim: card ``card`` held by ``agent`` from ``since`` until ``until`` (epoch
    seconds), naming ``paths`` (workspace-relative files, folders or ``path#Symbol``)."""

    card: str
    agent: str
    since: float
    until: float
    paths: tuple[str, ...] = ()

    def to_record(self) -> dict[str, Any]:
        """JSON-ready: ``{agent, since, until, paths}`` with ISO times."""
        return {
            "agent": self.agent,
            "since": iso_time(self.since),
            "until": iso_time(self.until),
            "paths": list(self.paths),
        }


@runtime_checkable
class ClaimRegistry(Protocol):
    """What the ``claims`` service does for core (the tasks plugin's claim store)."""

    def holder(self, card_id: str) -> Hold | None:
        """The live claim on card ``card_id``, or None."""
        ...

    def check_write(self, paths: Sequence[str], *, agent: str, force: bool, tool: str) -> None:
        """Refuse (raise its own CueError naming holder and lease) when ``paths`` (workspace-
        relative; ``"."`` is everything) overlap a live claim of another agent than
        ``agent``; with ``force``, record the forced write instead of refusing."""
        ...

    def version(self) -> str:
        """A stamp that changes whenever a claim is made, renewed or ends (cheap: what a
        page showing claims polls)."""
        ...


@attrs.frozen
class Acting:
    """The caller a server authenticated: ``verified`` when a token names them."""

    name: str
    verified: bool


_ACTING: ContextVar[Acting | None] = ContextVar("cuedeck_acting", default=None)


def act_as(name: str, *, verified: bool) -> Token[Acting | None]:
    """Record who the current call comes from (servers call this per request)."""
    return _ACTING.set(Acting(name, verified))


@contextlib.contextmanager
def acting(name: str, *, verified: bool) -> Iterator[None]:
    """:func:`act_as` for the block only."""
    token = act_as(name, verified=verified)
    try:
        yield
    finally:
        _ACTING.reset(token)


def acting_agent(given: str | None = None, *, field: str = "agent") -> str:
    """The agent the current call acts for (see the module docstring).

    A caller a token authenticated acts as its member: a ``given`` name that differs is
    InvalidInput (1004), so no member claims in another's name.
    """
    acting = _ACTING.get()
    if acting is not None and acting.verified:
        if given is not None and given != acting.name:
            raise InvalidInput(
                f"this server knows you as {acting.name!r} (your token's name); claims "
                f"cannot be made as {given!r}",
                field=field,
                help="leave agent out, or give each agent a token of its own",
            )
        return acting.name
    if given is not None:
        return given
    named = os.environ.get(ENV_AGENT, "").strip()
    if named:
        return named
    if acting is not None:
        return acting.name
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        return "local"


def claim_registry(workspace: WorkspaceArg) -> ClaimRegistry | None:
    """The workspace's ``claims`` service, or None when no installed plugin keeps claims."""
    try:
        found = workspace.service(CLAIMS_SERVICE)
    except MissingExtra:
        return None
    if not isinstance(found, ClaimRegistry):
        raise InvalidInput(
            f"the {CLAIMS_SERVICE!r} service is a {type(found).__name__}, not a ClaimRegistry",
            field=CLAIMS_SERVICE,
        )
    return found


def claims_version(workspace: WorkspaceArg) -> str:
    """:meth:`ClaimRegistry.version` of the workspace's claims (``""`` without any)."""
    registry = claim_registry(workspace)
    return "" if registry is None else registry.version()


def holder_of(workspace: WorkspaceArg, card_id: str) -> Hold | None:
    """Who holds card ``card_id`` now (None: nobody, or no plugin keeps claims)."""
    registry = claim_registry(workspace)
    return None if registry is None else registry.holder(card_id)


def guard_writes(
    workspace: WorkspaceArg, tool: str, paths: Sequence[str | None], *, force: bool
) -> None:
    """Let ``tool`` write ``paths`` (as the call gave them; None is the whole workspace)
    only where no other agent's live claim holds them (see :class:`ClaimRegistry`)."""
    registry = claim_registry(workspace)
    if registry is None:
        return
    checked: list[str] = []
    for path in paths:
        if path is None:
            checked.append(WHOLE_WORKSPACE)
            continue
        # The path as asked and its real path: a link must not slip past a claim. A path
        # the workspace refuses is the tool's to refuse, with its own error.
        try:
            located = workspace.locate(path, field="file_path", write=True)
        except CueError:
            continue
        checked.extend(p for p in located if p not in checked)
    registry.check_write(checked, agent=acting_agent(), force=force, tool=tool)
