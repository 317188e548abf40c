"""The identity provider's key set fetched from its URL: a real HTTP server on loopback
serves it; rotation, the fetch floor, max-age, a provider that goes away, and URLs refused."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import jwt
import pytest

from cuedeck_team import key_sets
from cuedeck_team.errors import SignInMisconfigured
from cuedeck_team.key_sets import UrlKeys, check_url
from cuedeck_team.settings import TeamSettings
from cuedeck_team.signin import JwtSignIn
from tests.team.test_signin import AUDIENCE, ISSUER, Provider, reason

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


class KeyServer:
    """An identity provider's jwks_uri on a loopback port: what it serves, how often it was
    asked, and the Cache-Control it sends."""

    def __init__(self, provider: Provider) -> None:
        self.document: dict[str, Any] = json.loads(provider.jwks.read_text())
        self.fetches = 0
        self.cache_control = ""
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                served.fetches += 1
                body = json.dumps(served.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if served.cache_control:
                    self.send_header("Cache-Control", served.cache_control)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add_key(self, key: Any, kid: str) -> None:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
        self.document = {"keys": [*self.document["keys"], {**public, "kid": kid}]}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class Clock:
    """Time the key set reads, moved by the test (the fetch floor is 30 s)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def provider(tmp_path: Path) -> Provider:
    return Provider(tmp_path)


@pytest.fixture
def keys_at(provider: Provider) -> Iterator[KeyServer]:
    server = KeyServer(provider)
    yield server
    server.stop()


def test_a_token_is_checked_against_the_providers_url(
    provider: Provider, keys_at: KeyServer, tmp_path: Path
) -> None:
    settings = TeamSettings(jwt_issuer=ISSUER, jwt_audience=AUDIENCE, jwks_url=keys_at.url)
    signin = JwtSignIn(settings, tmp_path)
    assert signin.verify(provider.token()).name == "dana"
    assert signin.verify(provider.token(sub="eve")).name == "eve"
    assert keys_at.fetches == 1  # fetched once, then used
    assert reason(signin, provider.token(kid="k9", signer=provider.other)) == "unknown_key"


def test_a_rotated_key_is_fetched_but_no_more_often_than_the_floor(
    provider: Provider, keys_at: KeyServer
) -> None:
    clock = Clock()
    source = UrlKeys(keys_at.url, clock=clock)
    assert set(source.keys()) == {"k1"}
    keys_at.add_key(provider.other, "k2")
    clock.now += 5  # within the floor: a token naming k2 (or made-up ids) fetches nothing
    for kid in ("k2", "made-up-1", "made-up-2"):
        assert "k2" not in source.keys(wanted=kid)
    assert keys_at.fetches == 1
    clock.now += key_sets.REFETCH_FLOOR
    assert set(source.keys(wanted="k2")) == {"k1", "k2"}
    assert keys_at.fetches == 2
    clock.now += key_sets.REFETCH_FLOOR
    assert set(source.keys(wanted="k1")) == {"k1", "k2"}  # known: no fetch
    assert keys_at.fetches == 2


def test_max_age_bounds_how_long_a_copy_is_used(provider: Provider, keys_at: KeyServer) -> None:
    clock = Clock()
    keys_at.cache_control = "public, max-age=120"
    source = UrlKeys(keys_at.url, clock=clock)
    source.keys()
    clock.now += 119
    source.keys()
    assert keys_at.fetches == 1
    clock.now += 2
    source.keys()
    assert keys_at.fetches == 2


def test_a_provider_that_goes_away_leaves_the_last_copy(
    provider: Provider, keys_at: KeyServer
) -> None:
    clock = Clock()
    source = UrlKeys(keys_at.url, clock=clock)
    assert set(source.keys()) == {"k1"}
    keys_at.stop()
    clock.now += key_sets.MAX_AGE + 1
    assert set(source.keys()) == {"k1"}  # stale, but the provider cannot be reached
    never = UrlKeys(keys_at.url, clock=clock)
    with pytest.raises(SignInMisconfigured) as broken:
        never.keys()
    assert broken.value.code == 1411 and broken.value.data["path"] == keys_at.url


@pytest.mark.parametrize(
    "url",
    ["http://id.example.org/jwks", "file:///etc/jwks.json", "ftp://127.0.0.1/jwks", "https:///x"],
)
def test_only_https_or_loopback_http_is_fetched(url: str) -> None:
    with pytest.raises(SignInMisconfigured, match="jwks_url"):
        check_url(url)
    assert check_url("https://id.example.org/.well-known/jwks.json")
    assert check_url("http://localhost:8080/jwks")


def test_a_file_and_a_url_together_are_refused(provider: Provider, tmp_path: Path) -> None:
    settings = TeamSettings(
        jwt_issuer=ISSUER,
        jwt_audience=AUDIENCE,
        jwks_file=str(provider.jwks),
        jwks_url="https://id.example.org/jwks",
    )
    with pytest.raises(SignInMisconfigured, match="both"):
        JwtSignIn(settings, tmp_path)
