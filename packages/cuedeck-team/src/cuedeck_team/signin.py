"""Sign-in with an identity provider: this server as an OAuth 2.1 resource server, as the
MCP authorization specification describes (docs/teams.md, "Sign-in").

A client gets a JWT access token from the team's identity provider and sends it as its
bearer token. The server checks its signature against the provider's JSON Web Key Set (a
file the operator keeps current, or the provider's URL: :mod:`cuedeck_team.key_sets`),
the key id it names, its issuer, its audience (this server) and its expiry; the member is
the token's subject and their role the configured claim (or a ``cuedeck:<role>`` scope).
Every refusal is :class:`~cuedeck_team.errors.SignInRefused` (1410) with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck_team.errors import SignInMisconfigured, SignInRefused
from cuedeck_team.key_sets import FileKeys, UrlKeys

if TYPE_CHECKING:
    from cuedeck.plugins.tools import Role
    from cuedeck_team.key_sets import KeySource
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
    ``[team] jwt_audience`` against the key set of ``[team] jwks_file`` or ``jwks_url``."""

    def __init__(self, settings: TeamSettings, home: Path) -> None:
        if not settings.jwt_audience or not (settings.jwks_file or settings.jwks_url):
            raise SignInMisconfigured(
                "[team] jwt_issuer is set without jwt_audience and a key set",
                help="set [team] jwt_audience (this server's URL) and jwks_url (the identity "
                "provider's jwks_uri) or jwks_file (its key set, kept current by you)",
            )
        if settings.jwks_file and settings.jwks_url:
            raise SignInMisconfigured(
                "[team] jwks_file and jwks_url are both set: the keys must come from one",
                help="keep one of them",
            )
        self.issuer = settings.jwt_issuer
        self.audience = settings.jwt_audience
        self.role_claim = settings.role_claim
        self.key_set: KeySource
        if settings.jwks_url:
            self.key_set = UrlKeys(settings.jwks_url)
        else:
            jwks = Path(settings.jwks_file).expanduser()
            self.key_set = FileKeys(jwks if jwks.is_absolute() else home / jwks)

    def metadata(self) -> dict[str, Any]:
        """The protected resource metadata (RFC 9728)."""
        return {
            "resource": self.audience,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": [f"{SCOPE_PREFIX}{role}" for role in ("read", "write", "admin")],
            "resource_name": "CueDeck team server",
        }

    def keys(self, wanted: str | None = None) -> dict[str, Any]:
        """Key id -> key of the provider's key set; 1411 when it cannot be had."""
        return self.key_set.keys(wanted=wanted)

    def verify(self, token: str) -> SignedInMember:
        """The member ``token`` names, or 1410 with the reason it is refused."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _refused("malformed", "the access token is not a JWT") from None
        kid = str(header.get("kid", ""))
        key = self.keys(kid).get(kid)
        if key is None:
            raise _refused(
                "unknown_key",
                "the access token is signed with a key the identity provider's key set "
                "does not hold",
                help="the provider rotated its keys: update [team] jwks_file"
                if isinstance(self.key_set, FileKeys)
                else "the provider's key set, fetched again for it (at most every 30 s), lacks it",
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
