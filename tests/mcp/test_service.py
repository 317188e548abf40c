"""Health, readiness and access logs of the served application."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import httpx2
import pytest

from cuedeck_mcp import access
from cuedeck_mcp.asgi import Deployment, build_app
from tests.conftest import needs

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Access lines go to a file for the test, and nowhere after it."""
    path = tmp_path / "access.log"
    yield path  # type: ignore[misc]
    access.configure("off")


async def _get(app: object, path: str, **headers: str) -> httpx2.Response:
    transport = httpx2.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        return await http.get(path, headers=headers)


async def test_health_and_readiness_of_workspaces(demo: Path, log: Path) -> None:
    app = build_app(Deployment(workspaces={"demo": demo}, access_log=str(log)))
    health = await _get(app, "/healthz")
    ready = await _get(app, "/readyz")
    (demo / ".cuedeck" / "access.toml").write_text("[[token", encoding="utf-8")
    broken = await _get(app, "/readyz", Host="10.0.0.7:9999")  # probes come by address
    other = await _get(app, "/mcp/s3cr3t-path", Authorization="Bearer cdk_secret_token")
    assert other.status_code == 404
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    assert broken.status_code == 503
    assert broken.json() == {
        "status": "not ready",
        "problems": ["workspace demo: access.toml cannot be read (error 1015)"],
    }
    assert str(demo) not in broken.text  # no path is given away
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(line["path"], line["status"]) for line in lines] == [
        ("/healthz", 200),
        ("/readyz", 200),
        ("/readyz", 503),
        ("(other)", 404),  # an unknown path is not logged as sent
    ]
    assert all(line["event"] == "http" and line["client"] == "127.0.0.1" for line in lines)
    text = log.read_text(encoding="utf-8")
    assert "s3cr3t" not in text and "cdk_secret_token" not in text


@needs("cuedeck_team")
async def test_readiness_of_a_team(tmp_path: Path, log: Path) -> None:
    home = tmp_path / "home"
    (home / ".cuedeck").mkdir(parents=True)
    app = build_app(Deployment(team=home, access_log=str(log)))
    ready = await _get(app, "/readyz")
    listing = await _get(app, "/mcp/anything")
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    assert listing.status_code == 404 and listing.json()["team"] == "/mcp"
