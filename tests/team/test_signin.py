"""Sign-in with an identity provider's JWT access tokens, checked against a key set made
here from a locally generated key pair: valid, expired, wrong audience, wrong issuer,
unknown key id, role claim missing; and a team server that publishes its protected
resource metadata and takes such tokens over HTTP."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from cuedeck_team.errors import SignInMisconfigured, SignInRefused
from cuedeck_team.settings import TeamSettings
from cuedeck_team.signin import JwtSignIn
from tests.team.conftest import call, session, team_server

ISSUER = "https://id.example.org/"
AUDIENCE = "https://cuedeck.example.org/mcp"


class Provider:
    """An identity provider of the test: a key pair, its key set file, tokens it signs."""

    def __init__(self, folder: Path) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        self.jwks = folder / "jwks.json"
        self.jwks.write_text(json.dumps({"keys": [{**public, "kid": "k1", "alg": "RS256"}]}))

    def token(self, *, kid: str = "k1", signer: Any = None, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "dana", "iat": now, "exp": now + 600,
                "cuedeck_role": "write", **claims}  # fmt: skip
        body = {key: value for key, value in body.items() if value is not None}
        return jwt.encode(body, signer or self.key, algorithm="RS256", headers={"kid": kid})


@pytest.fixture
def provider(tmp_path: Path) -> Provider:
    return Provider(tmp_path)


def sign_in(provider: Provider, tmp_path: Path, role_claim: str = "cuedeck_role") -> JwtSignIn:
    settings = TeamSettings(
        jwt_issuer=ISSUER,
        jwt_audience=AUDIENCE,
        jwks_file=str(provider.jwks),
        role_claim=role_claim,
    )
    return JwtSignIn(settings, tmp_path)


def reason(signin: JwtSignIn, token: str) -> str:
    with pytest.raises(SignInRefused) as refused:
        signin.verify(token)
    assert refused.value.code == 1410
    return str(refused.value.data["reason"])


def test_a_valid_token_names_the_member_and_role(provider: Provider, tmp_path: Path) -> None:
    member = sign_in(provider, tmp_path).verify(provider.token())
    assert (member.name, member.role) == ("dana", "write")


def test_refusals_say_why(provider: Provider, tmp_path: Path) -> None:
    signin = sign_in(provider, tmp_path)
    now = int(time.time())
    assert reason(signin, provider.token(exp=now - 120, iat=now - 900)) == "expired"
    assert reason(signin, provider.token(aud="https://elsewhere.example.org/")) == (
        "wrong_audience"
    )
    assert reason(signin, provider.token(iss="https://other-id.example.org/")) == "wrong_issuer"
    assert reason(signin, provider.token(kid="k2")) == "unknown_key"
    assert reason(signin, provider.token(cuedeck_role=None)) == "no_role"
    assert reason(signin, provider.token(cuedeck_role="owner")) == "no_role"
    assert reason(signin, provider.token(signer=provider.other)) == "bad_signature"
    assert reason(signin, "not.a.jwt") == "malformed"


def test_the_role_may_come_from_scopes(provider: Provider, tmp_path: Path) -> None:
    signin = sign_in(provider, tmp_path, role_claim="scope")
    member = signin.verify(provider.token(scope="openid cuedeck:read cuedeck:admin"))
    assert member.role == "admin"
    assert reason(signin, provider.token(scope="openid profile")) == "no_role"


def test_a_rotated_key_set_is_read_again(provider: Provider, tmp_path: Path) -> None:
    signin = sign_in(provider, tmp_path)
    assert reason(signin, provider.token(kid="k2", signer=provider.other)) == "unknown_key"
    keys = json.loads(provider.jwks.read_text())["keys"]
    other = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(provider.other.public_key()))
    provider.jwks.write_text(json.dumps({"keys": [*keys, {**other, "kid": "k2"}]}))
    assert signin.verify(provider.token(kid="k2", signer=provider.other)).name == "dana"


def test_a_missing_key_set_is_a_configuration_error(provider: Provider, tmp_path: Path) -> None:
    provider.jwks.unlink()
    with pytest.raises(SignInMisconfigured) as broken:
        sign_in(provider, tmp_path).verify(provider.token())
    assert broken.value.code == 1411


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_team_server_takes_access_tokens(provider: Provider, home: Path) -> None:
    config = home / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text()
        + f'\n[team]\njwt_issuer = "{ISSUER}"\njwt_audience = "{AUDIENCE}"\n'
        + f'jwks_file = "{provider.jwks}"\n',
        encoding="utf-8",
    )
    with team_server(home) as (url, _):
        metadata = httpx2.get(url + "/.well-known/oauth-protected-resource").json()
        assert metadata["resource"] == AUDIENCE
        assert metadata["authorization_servers"] == [ISSUER]

        async def who(client: Any) -> Any:
            return await call(client, "whoami", {})

        answer = await session(url + "/mcp", provider.token(), who)
        assert (answer["name"], answer["role"]) == ("dana", "write")

        expired = provider.token(exp=int(time.time()) - 120)
        refused = httpx2.post(url + "/mcp", json={}, headers={"Authorization": f"Bearer {expired}"})
        assert refused.status_code == 401
        assert refused.json()["code"] == 1410 and refused.json()["reason"] == "expired"
        assert 'resource_metadata="' in refused.headers["www-authenticate"]
        anonymous = httpx2.post(url + "/mcp", json={})
        assert anonymous.status_code == 401  # sign-in configured: a token is required
