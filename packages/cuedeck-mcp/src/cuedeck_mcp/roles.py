"""Who may call what: bearer tokens mapped to roles ``read`` < ``write`` < ``admin``.

A tool needs the role that has its permission (:attr:`cuedeck.plugins.tools.Tool.role`,
the one rule: by its flags, ``read`` when read-only, ``admin`` when destructive,
``write`` otherwise, unless it was registered with another permission). Tokens live in
``.cuedeck/access.toml`` as sha256 hashes with a name and a role, never as tokens: ``cue
mcp token add`` prints a new token once. Clients without a token (stdio, loopback HTTP
with no token configured) get ``[mcp] local_role``. The role filters ``tools/list`` and
is checked again on every ``tools/call``.

Permissions: what each role may do, named as the code-indexer specification names them.
CueDeck's three roles are the specification's three: ``read`` is its ``normal_user``,
``write`` its ``power_user``, ``admin`` its ``admin``. A tool needs one permission
(:attr:`~cuedeck.plugins.tools.Tool.permission`); a role grants a set
(:data:`~cuedeck.plugins.tools.PERMISSIONS`); every refusal names the permission it
needed (docs/teams.md has the table).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import tomllib
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import InvalidInput
from cuedeck.layout import LOCKS_DIR
from cuedeck.plugins.tools import PERMISSIONS, ROLES, Role
from cuedeck.writes import locked, remove_file, write_file
from cuedeck_mcp.paths import ACCESS_PATH

if TYPE_CHECKING:
    from pathlib import Path


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


@attrs.frozen
class Caller:
    """Who is calling: a token's name (or ``local``), its role, how it came in, and the
    workspace it reached (its endpoint's name when a server serves several)."""

    name: str
    role: Role
    transport: str
    workspace: str


#: The caller of the request being served, set by the middleware for the tool to read.
CALLER: ContextVar[Caller | None] = ContextVar("cuedeck_caller", default=None)

#: The specification's name for each role.
SPEC_ROLES: dict[Role, str] = {"read": "normal_user", "write": "power_user", "admin": "admin"}


def permissions_of(role: Role) -> list[str]:
    """Every permission ``role`` has, in the table's order."""
    return [name for name, needed in PERMISSIONS.items() if allows(role, needed)]


def allows(role: Role, needed: Role) -> bool:
    """Whether ``role`` is at least ``needed``."""
    return ROLES.index(role) >= ROLES.index(needed)


def check_role(value: str, *, field: str = "role") -> Role:
    """``value`` as a role, or 1004 listing the roles."""
    if value not in ROLES:
        raise InvalidInput(f"unknown role {value!r} (roles: read, write, admin)", field=field)
    return value


@attrs.frozen
class Grant:
    """One token of ``access.toml``: its name, role, hash and when it was made."""

    name: str
    role: Role
    sha256: str
    created: str


def token_hash(token: str) -> str:
    """The sha256 a token is kept as."""
    return hashlib.sha256(token.strip().encode("utf-8")).hexdigest()


def load_grants(root: Path) -> list[Grant]:
    """The tokens of the workspace at ``root`` (none when the file is missing)."""
    path = root / ACCESS_PATH
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"{ACCESS_PATH} cannot be read: {exc}", path=ACCESS_PATH) from None
    grants = []
    for number, entry in enumerate(data.get("token", [])):
        try:
            grants.append(
                Grant(
                    name=str(entry["name"]),
                    role=check_role(str(entry["role"])),
                    sha256=str(entry["sha256"]).lower(),
                    created=str(entry.get("created", "")),
                )
            )
        except (KeyError, TypeError, InvalidInput) as exc:
            raise InvalidInput(
                f"{ACCESS_PATH}: token {number + 1} is malformed ({exc})",
                path=ACCESS_PATH,
                help="each [[token]] needs name, role (read, write or admin) and sha256",
            ) from None
    return grants


def _render(grants: list[Grant]) -> str:
    lines = [
        "# MCP bearer tokens of this workspace: sha256 hashes and roles, never the tokens.",
        "# Managed by `cue mcp token add/remove`; see docs/mcp.md.",
    ]
    for grant in grants:
        lines += [
            "",
            "[[token]]",
            f'name = "{grant.name}"',
            f'role = "{grant.role}"',
            f'sha256 = "{grant.sha256}"',
            f'created = "{grant.created}"',
        ]
    return "\n".join(lines) + "\n"


def check_name(name: str) -> str:
    """``name`` as a token's name, or 1004."""
    if not _NAME.match(name):
        raise InvalidInput(
            f"{name!r} is not a token name (letters, digits, _ . @ -; up to 64)", field="name"
        )
    return name


def new_token() -> str:
    """A fresh bearer token (shown once, kept as its hash)."""
    return "cdk_" + secrets.token_urlsafe(32)


def add_grant(root: Path, name: str, role: str) -> str:
    """Record a new token for ``name`` with ``role``; return the token (shown once)."""
    check_name(name)
    checked = check_role(role)
    token = new_token()
    with locked(root / LOCKS_DIR / "access.lock"):
        grants = load_grants(root)
        if any(grant.name == name for grant in grants):
            raise InvalidInput(
                f"a token named {name!r} exists", field="name",
                help=f"remove it first (cue mcp token remove {name}) or pick another name",
            )  # fmt: skip
        created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        grants.append(Grant(name, checked, token_hash(token), created))
        write_file(root, ACCESS_PATH, _render(grants), display=ACCESS_PATH)
    return token


def remove_grant(root: Path, name: str) -> int:
    """Forget the token named ``name``; how many tokens are left.

    Removing the last one deletes the file, which is what the person asked for: a
    running loopback server then serves without tokens at once (a non-loopback one still
    refuses every client). A file left empty some other way keeps HTTP locked: with an
    ``access.toml`` present, a token is required whatever it holds.
    """
    with locked(root / LOCKS_DIR / "access.lock"):
        grants = load_grants(root)
        kept = [grant for grant in grants if grant.name != name]
        if len(kept) == len(grants):
            raise InvalidInput(f"there is no token named {name!r}", field="name")
        if kept:
            write_file(root, ACCESS_PATH, _render(kept), display=ACCESS_PATH)
        else:
            remove_file(root, ACCESS_PATH, display=ACCESS_PATH)
        return len(kept)


def find_grant(grants: list[Grant], token: str) -> Grant | None:
    """The grant whose hash matches ``token`` (every hash compared, in constant time)."""
    digest = token_hash(token)
    found = None
    for grant in grants:
        if hmac.compare_digest(grant.sha256, digest):
            found = grant
    return found
