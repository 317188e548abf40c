"""Shared fixtures: real workspaces in tmp_path and the shared markdown corpora."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]

# Property tests check values, not speed: a machine busy with other work (CI beside
# servers, two cores) must not fail them for slow example generation or a slow example.
settings.register_profile("cuedeck", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("cuedeck")

#: Optional distributions and the test folders that need them: `tox -e core` installs only
#: core and the CLI, and those folders are then not collected.
OPTIONAL = {
    "cuedeck_search": "search",
    "cuedeck_tasks": "tasks",
    "cuedeck_mcp": "mcp",
    "cuedeck_git": "git",
    "cuedeck_memory": "memory",
    "cuedeck_code": "code",
    "cuedeck_team": "team",
}
collect_ignore = [
    folder for module, folder in OPTIONAL.items() if importlib.util.find_spec(module) is None
]


def installed(module: str) -> bool:
    """Whether an optional distribution's package can be imported here."""
    return importlib.util.find_spec(module) is not None


needs_extras = pytest.mark.skipif(
    not all(installed(m) for m in (*OPTIONAL, "cuedeck_example_plugin")),
    reason="needs every CueDeck package and the example plugin (tox -e all)",
)


@contextlib.contextmanager
def interruptible_children() -> Iterator[None]:
    """Children started in this block take Ctrl-C (SIGINT) as a terminal gives it. A run
    started in the background without job control ignores SIGINT, and an ignored
    signal is inherited across exec, so a child would never see the test's Ctrl-C; a
    handled one is reset to the default there."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if previous is signal.SIG_IGN:
            signal.signal(signal.SIGINT, previous)


def run_script(script: str, **env: str) -> Any:
    """Run ``script`` in a fresh interpreter (no thread of pytest's, nothing imported yet)
    with ``env`` added; its last stdout line, as JSON."""
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def raw_http(port: int, data: bytes) -> bytes:
    """Send ``data`` to a loopback port on a new connection; all it answers until it
    closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def endless_chunked_body(port: int, path: str) -> tuple[int, bytes]:
    """POST to ``path`` a chunked body that never ends: how many bytes went out before the
    server stopped it (2 GB if it never did), and its answer (``b"reset"`` if it reset)."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode())
        try:
            while sent < 2_000 << 20:
                sock.sendall(chunk)
                sent += 1 << 20
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            answer = b"".join(iter(lambda: sock.recv(65536), b""))
        except ConnectionResetError:
            answer = b"reset"
    return sent, answer


#: What a client would plant in a workspace to run code in a child Python process started
#: there: CueDeck's packages (with the modules children run), pip, and standard modules
#: every child imports.
SHADOWED = {
    "cuedeck": ("freshness",),
    "cuedeck_cli": ("__main__",),
    "cuedeck_search": ("detached",),
    "cuedeck_mcp": (),
    "pip": ("__main__",),
    "runpy": None,
    "json": None,
    "socket": None,
}


def wait_ended(pid: int, timeout: float = 300) -> None:
    """Wait until the process ``pid`` (started detached: not our child) has ended."""
    import select

    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # ended already
    try:
        assert select.select([handle], [], [], timeout)[0], f"process {pid} still runs"
    finally:
        os.close(handle)


def plant_shadows(folder: Path, marker: Path) -> None:
    """Modules in ``folder`` that shadow :data:`SHADOWED` and, if imported, append their
    name to ``marker`` (a file outside ``folder``) and stop the process."""
    code = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\nraise SystemExit(97)\n"
    for name, inner in SHADOWED.items():
        if inner is None:
            (folder / f"{name}.py").write_text(code, encoding="utf-8")
            continue
        (folder / name).mkdir(exist_ok=True)
        for module in ("__init__", *inner):
            (folder / name / f"{module}.py").write_text(code, encoding="utf-8")


def corpora_dir() -> Path | None:
    """Where the shared corpora live: $CUEDECK_CORPORA, ../shared/corpora, /work/shared."""
    candidates = [
        os.environ.get("CUEDECK_CORPORA"),
        REPO.parent / "shared" / "corpora",
        "/work/shared/corpora",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / "fastapi-docs-en.tar.gz").is_file():
            return Path(candidate)
    return None


def extract_corpus(name: str, destination: Path) -> Path:
    """Extract ``<name>.tar.gz`` into ``destination`` and return the corpus folder."""
    folder = corpora_dir()
    if folder is None:
        pytest.skip("shared corpora not found; set CUEDECK_CORPORA")
    with tarfile.open(folder / f"{name}.tar.gz") as archive:
        archive.extractall(destination, filter="data")
    return destination / name


@pytest.fixture(scope="session")
def fastapi_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fastapi documentation corpus, extracted once per session (read-only use)."""
    return extract_corpus("fastapi-docs-en", tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="session")
def tldr_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tldr pages corpus, extracted once per session (read-only use)."""
    return extract_corpus("tldr-pages-en", tmp_path_factory.mktemp("corpus"))


MakeWorkspace = Callable[..., Path]


@pytest.fixture
def make_workspace(tmp_path: Path) -> MakeWorkspace:
    """Build a workspace: ``make_workspace({"docs/a.md": "# A"}, config="...")`` -> root."""

    def build(files: dict[str, str | bytes] | None = None, *, config: str | None = None) -> Path:
        root = tmp_path / "ws"
        suffix = 1
        while root.exists():
            suffix += 1
            root = tmp_path / f"ws{suffix}"
        for sub in ("cards", "docs"):
            (root / ".cuedeck" / sub).mkdir(parents=True, exist_ok=True)
        if config is not None:
            (root / ".cuedeck" / "config.toml").write_text(config, encoding="utf-8")
        for rel, content in (files or {}).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return root

    return build


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Tests never see the developer's CueDeck environment variables, and never touch
    the real user cache (shared embeddings): each test gets its own."""
    for name in list(os.environ):
        if name.startswith(("CUEDECK_", "CUE_")) and name != "CUEDECK_CORPORA":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CUEDECK_CACHE_DIR", str(tmp_path_factory.mktemp("user-cache")))
    # Watchers that `cue search` starts (cuedeck.watch.watcher) go away soon after a test.
    monkeypatch.setenv("CUEDECK_WATCH_WATCHER_IDLE_SECONDS", "15")
    # Each `cue mcp` a test starts serves in its own process, unless the test is about
    # resident servers (tests/mcp/test_resident.py), which outlive the test otherwise.
    monkeypatch.setenv("CUEDECK_MCP_RESIDENT", "0")
