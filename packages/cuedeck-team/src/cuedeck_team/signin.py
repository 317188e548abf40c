"""Sign-in with an identity provider: this server as an OAuth 2.1 resource server, as the
MCP authorization specification describes (docs/teams.md, "Sign-in").

A client gets a JWT access token from the team's identity provider and sends it as its
bearer token. The server checks its signature against the provider's JSON Web Key Set (a
file the operator keeps current, re-read when it changes; or the provider's JWKS URL,
fetched when first needed and again when a token names an unknown key, no more often
than a floor interval), the key id it names, its issuer, its audience (this server) and
its expiry; the member is the token's subject and their role the configured claim (or a
``cuedeck:<role>`` scope). Every refusal
is :class:`~cuedeck_team.errors.SignInRefused` (1410) with its reason.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck_team.errors import SignInMisconfigured, SignInRefused

if TYPE_CHECKING:
    from cuedeck.plugins.tools import Role
    from cuedeck_team.settings import TeamSettings

#: Signature algorithms accepted (asymmetric only: a shared secret is no key set).
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"]
#: The scope prefix that names a role when the role claim is ``scope``.
SCOPE_PREFIX = "cuedeck:"


@attrs.frozen
class SignedInMember:
    """Who a valid access token names."""

    name: str
    role: Role


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` has a JWT's three dot-separated parts (members' tokens have none)."""
    return token.count(".") == 2


class JwtSignIn:
    """Checks access tokens of the issuer ``[team] jwt_issuer`` for the audience
    ``[team] jwt_audience`` against the key set in ``[team] jwks_file``."""

    def __init__(self, settings: TeamSettings, home: Path) -> None:
        if not settings.jwt_audience or not (settings.jwks_file or settings.jwks_url):
            raise SignInMisconfigured(
                "[team] jwt_issuer is set without jwt_audience and jwks_file or jwks_url",
                help="set [team] jwt_audience (this server's URL) and jwks_file or jwks_url "
                "(the identity provider's key set)",
            )
        self.fetcher = (
            KeySetFetcher(settings.jwks_url, settings.jwks_refetch_seconds)
            if settings.jwks_url
            else None
        )
        self.issuer = settings.jwt_issuer
        self.audience = settings.jwt_audience
        self.role_claim = settings.role_claim
        jwks = Path(settings.jwks_file).expanduser()
        self.jwks_path = jwks if jwks.is_absolute() else home / jwks
        self._keys: dict[str, Any] = {}
        self._seen: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def metadata(self) -> dict[str, Any]:
        """The protected resource metadata (RFC 9728)."""
        return {
            "resource": self.audience,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": [f"{SCOPE_PREFIX}{role}" for role in ("read", "write", "admin")],
            "resource_name": "CueDeck team server",
        }

    def keys(self, *, wanted: str | None = None) -> dict[str, Any]:
        """Key id -> key, from the key set file (re-read when it changed) or URL (fetched
        again when ``wanted`` is missing, at most once per floor interval); 1411 when it
        cannot be read."""
        import jwt

        if self.fetcher is not None:
            return self.fetcher.keys(wanted)
        try:
            stat = self.jwks_path.stat()
            seen = (stat.st_mtime_ns, stat.st_size)
            with self._lock:
                if seen != self._seen:
                    data = json.loads(self.jwks_path.read_text(encoding="utf-8"))
                    self._keys = parse_key_set(data)
                    self._seen = seen
                return self._keys
        except (OSError, ValueError, jwt.PyJWTError) as exc:
            raise SignInMisconfigured(
                f"the identity provider's key set cannot be read ({type(exc).__name__}: {exc})",
                path=str(self.jwks_path),
                help="point [team] jwks_file at the provider's JWKS document (a JSON file)",
            ) from None

    def verify(self, token: str) -> SignedInMember:
        """The member ``token`` names, or 1410 with the reason it is refused."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _refused("malformed", "the access token is not a JWT") from None
        kid = str(header.get("kid", ""))
        key = self.keys(wanted=kid).get(kid)
        if key is None:
            raise _refused(
                "unknown_key",
                "the access token is signed with a key the identity provider's key set "
                "does not hold",
                help="the provider rotated its keys: update [team] jwks_file (a jwks_url "
                "is fetched again by itself)",
            )
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise _refused("expired", "the access token has expired") from None
        except jwt.InvalidAudienceError:
            raise _refused("wrong_audience", "the access token is for another server") from None
        except jwt.InvalidIssuerError:
            raise _refused("wrong_issuer", "the access token is from another issuer") from None
        except jwt.InvalidSignatureError:
            raise _refused("bad_signature", "the access token's signature is wrong") from None
        except jwt.PyJWTError as exc:
            raise _refused("malformed", f"the access token is malformed ({exc})") from None
        role = self._role(claims)
        if role is None:
            raise _refused(
                "no_role",
                f"the access token names no CueDeck role (claim {self.role_claim!r})",
                help="have the identity provider add the role claim (read, write or admin)",
            )
        return SignedInMember(name=str(claims["sub"]), role=role)

    def _role(self, claims: dict[str, Any]) -> Role | None:
        from cuedeck.plugins.tools import ROLES

        value = claims.get(self.role_claim)
        if self.role_claim == "scope" and isinstance(value, str):
            named = [s[len(SCOPE_PREFIX) :] for s in value.split() if s.startswith(SCOPE_PREFIX)]
            granted = [role for role in ROLES if role in named]
            return granted[-1] if granted else None  # the highest role the scopes grant
        return next((role for role in ROLES if role == value), None)


def _refused(reason: str, message: str, **data: Any) -> SignInRefused:
    return SignInRefused(message, reason=reason, **data)


def parse_key_set(data: Any) -> dict[str, Any]:
    """Key id -> key of a JWKS document (keys without an id are left out)."""
    import jwt

    found = jwt.PyJWKSet.from_dict(data)
    return {key.key_id: key for key in found.keys if key.key_id}


class KeySetFetcher:
    """The key set at ``url``: fetched when first needed, kept, and fetched again when a
    token names a key it lacks, no sooner than ``floor`` seconds after the last fetch.
    A failed fetch keeps the keys already known (1411 when there are none)."""

    def __init__(self, url: str, floor: float, *, timeout: float = 5.0) -> None:
        self.url = _check_url(url)
        self.floor = floor
        self.timeout = timeout
        self.fetches = 0
        self._keys: dict[str, Any] | None = None
        self._fetched = 0.0
        self._lock = threading.Lock()

    def keys(self, wanted: str | None) -> dict[str, Any]:
        """The keys known, fetched first when none are, or when ``wanted`` is missing and
        the floor interval has passed."""
        import time

        with self._lock:
            now = time.monotonic()
            stale = wanted is not None and self._keys is not None and wanted not in self._keys
            if self._keys is None or (stale and now - self._fetched >= self.floor):
                self._fetch(now)
            assert self._keys is not None
            return self._keys

    def _fetch(self, now: float) -> None:
        import logging
        import urllib.request

        import jwt

        self._fetched = now
        self.fetches += 1
        request = urllib.request.Request(self.url, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                self._keys = parse_key_set(json.loads(response.read(1 << 20)))
        except (OSError, ValueError, jwt.PyJWTError) as exc:
            if self._keys is not None:  # keep serving the keys known; try again later
                logging.getLogger("cuedeck").error(
                    "error[1411] the identity provider's key set could not be fetched: %s", exc
                )
                return
            raise SignInMisconfigured(
                f"the identity provider's key set cannot be fetched ({type(exc).__name__}: {exc})",
                url=self.url,
                retryable=True,
                help="check [team] jwks_url and that this node reaches the identity provider",
            ) from None


def _check_url(url: str) -> str:
    """``url`` if it may be fetched: https, or http on a loopback address; else 1411."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "::1", "localhost")
    if parts.scheme == "https" or (parts.scheme == "http" and loopback):
        return url
    raise SignInMisconfigured(
        f"[team] jwks_url must be an https:// URL (http:// only on a loopback address): {url!r}",
        help="give the identity provider's JWKS URL over https",
    )
