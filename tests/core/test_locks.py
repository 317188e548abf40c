"""CueDeck's one lock helper (cuedeck.writes): waiting for a lock, holding one without
waiting, and asking whether another process holds it, across real processes."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from cuedeck.errors import LockError
from cuedeck.writes import holding, is_locked, locked

if TYPE_CHECKING:
    from pathlib import Path

HOLDER = """
import sys
from pathlib import Path
from cuedeck.writes import holding
with holding(Path(sys.argv[1])) as mine:
    print("held" if mine else "taken", flush=True)
    sys.stdin.readline()
"""


def _holder(lock: Path) -> subprocess.Popen[str]:
    """A process that holds ``lock`` until its stdin closes (it says so first)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "held"
    return process


def test_one_holder_at_a_time_across_processes(tmp_path: Path) -> None:
    lock = tmp_path / "sub" / "one.lock"
    assert not is_locked(lock)
    process = _holder(lock)
    try:
        assert is_locked(lock)
        with holding(lock) as mine:
            assert mine is False
        with pytest.raises(LockError) as waited, locked(lock, timeout=0.2, display="one.lock"):
            pass
        assert waited.value.code == 1007
        assert waited.value.data["holder_pid"] == process.pid
        assert waited.value.data["lock_file"] == "one.lock"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(30)
        assert process.stdout is not None
        process.stdout.close()
    assert not is_locked(lock)
    with holding(lock) as mine:
        assert mine is True
        assert (tmp_path / "sub" / "one.lock.pid").read_text() != ""
    with locked(lock, timeout=0):
        pass


def test_an_error_in_the_block_releases_the_lock(tmp_path: Path) -> None:
    lock = tmp_path / "two.lock"

    def fail_while_holding() -> None:
        with holding(lock) as mine:
            assert mine
            raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        fail_while_holding()
    assert not is_locked(lock)
