"""A PostgreSQL cluster of its own for a test session: ``initdb`` and ``pg_ctl`` on a
loopback port in a temporary folder (as ``nobody`` when the tests run as root: PostgreSQL
refuses to run as root). Skipped with a reason when the binaries are absent, unless
``CUEDECK_REQUIRE_POSTGRES`` is set (CI sets it: there, absent binaries fail)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.mcp.conftest import free_port

REQUIRE_ENV = "CUEDECK_REQUIRE_POSTGRES"
SUPERUSER = "cuedeck"


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else Debian's newest version."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: p.parts)
    return versions[-1].parent if versions else None


class Cluster:
    """A running cluster: :meth:`url` of a fresh database, :meth:`restart` and :meth:`stop`."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.folder = Path(tempfile.mkdtemp(prefix="cuedeck-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self._databases = 0
        self._as_nobody = os.geteuid() == 0
        if self._as_nobody:
            os.chmod(self.folder, 0o755)
            shutil.chown(self.folder, "nobody", "nogroup")
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--locale=C")  # fmt: skip
        self.start()

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bin_dir / program), *args]
        if self._as_nobody:
            command = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=self.folder)
        assert done.returncode == 0, f"{program} failed: {done.stdout}{done.stderr}"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.folder}"
            " -c fsync=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l",
                  str(self.folder / "log"), "-w", "-t", "60", "start")  # fmt: skip

    def stop(self) -> None:
        """Stop the server (fast: open connections are cut)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        """Stop and start again (every connection is cut)."""
        self.stop()
        self.start()

    def url(self) -> str:
        """A new, empty database's URL."""
        import psycopg

        self._databases += 1
        name = f"team{self._databases}"
        with psycopg.connect(self._url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}".encode())
        return self._url(name)

    def _url(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def remove(self) -> None:
        """Stop the server and delete its files."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def start_cluster() -> Cluster:
    """A new cluster; skip (or fail, under CUEDECK_REQUIRE_POSTGRES) without PostgreSQL."""
    bin_dir = binaries()
    if bin_dir is None:
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set but initdb and pg_ctl are not installed")
        pytest.skip("PostgreSQL is not installed (initdb, pg_ctl): apt-get install postgresql")
    pytest.importorskip("psycopg_pool")
    return Cluster(bin_dir)
