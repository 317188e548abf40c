"""The errors of a team (codes 1402-1419, docs/errors.md): its repositories, its shared
store and sign-in. A ``repository_alias`` naming nothing (1400) or a read-only repository
(1401) is the MCP server's error (:mod:`cuedeck_mcp.errors`): a server of one workspace
answers them too."""

from __future__ import annotations

from cuedeck.errors import CueError


class AliasTaken(CueError):
    """An alias already in use: a shared repository registered twice, an activation or a
    composite component added twice (1402)."""

    code = 1402
    title = "Alias Taken"


class WrongRepositoryKind(CueError):
    """An operation for another kind of repository (1403): a shared one given where an
    activation is needed (deactivate, sync), an activation where a shared one is (a
    composite's component), or a plain activation where a composite is."""

    code = 1403
    title = "Wrong Repository Kind"


class CloneFailed(CueError):
    """A repository the server could not clone or fetch (1404); ``reason`` and ``stderr``
    (masked, credentials removed) say why."""

    code = 1404
    title = "Clone Failed"


class NoRemote(CueError):
    """``sync_repository`` on a working copy without an ``origin`` remote (1405)."""

    code = 1405
    title = "No Remote"


class RepositoryBusy(CueError):
    """A repository another request is creating or removing right now (1406)."""

    code = 1406
    title = "Repository Busy"


class RepositoryRequired(CueError):
    """A tool call that names no repository where the caller can reach several (1407);
    ``candidates`` lists them."""

    code = 1407
    title = "Repository Required"


class StoreUnavailable(CueError):
    """The team's shared store cannot be reached or answered with an error (1408): the
    PostgreSQL server is down, restarting or refuses the connection. Nothing was changed;
    the call may be retried (``retryable``)."""

    code = 1408
    title = "Store Unavailable"


class StoreTooNew(CueError):
    """The team's database holds a schema newer than this CueDeck knows (1409): another
    node runs a newer version. Upgrade this node."""

    code = 1409
    title = "Store Too New"


class SignInRefused(CueError):
    """A JWT access token refused (1410): ``reason`` is one of ``expired``,
    ``wrong_audience``, ``wrong_issuer``, ``unknown_key``, ``no_role``, ``bad_signature``,
    ``malformed``."""

    code = 1410
    title = "Sign-In Refused"


class SignInMisconfigured(CueError):
    """Sign-in with JWTs is configured but cannot work (1411): the JWKS file is missing or
    unreadable, the JWKS URL is not https or cannot be fetched while no key is known, or
    ``[team]`` names an issuer without an audience."""

    code = 1411
    title = "Sign-In Misconfigured"
