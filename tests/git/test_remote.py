"""git_fetch, git_pull and git_push against a local bare remote; prompts never hang."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cuedeck.errors import InvalidInput
from cuedeck.workspace import open_workspace
from cuedeck_git.errors import GitFailed, GitTimeout
from tests.git.conftest import Call, git


@pytest.fixture
def teammate(tmp_path: Path, remote: Path, repo: Path) -> Path:
    """A second clone of the remote, where someone else works."""
    other = tmp_path / "teammate"
    git(tmp_path, "clone", "--quiet", str(remote), str(other))
    return other


def test_push_fetch_and_pull(repo: Path, teammate: Path, call: Call) -> None:
    (repo / "README.md").write_text("# Pushed\n", encoding="utf-8")
    call("git_stage", file_paths=["README.md"])
    call("git_commit", message="pushed by the agent")
    pushed = call("git_push")
    assert pushed == {"success": True, "remote": "origin", "branch": "main", "commits_pushed": 1}
    git(teammate, "pull", "--quiet")
    assert (teammate / "README.md").read_text(encoding="utf-8") == "# Pushed\n"

    (teammate / "src" / "app.py").write_text("def main():\n    return 5\n", encoding="utf-8")
    git(teammate, "commit", "--quiet", "-am", "teammate one")
    git(teammate, "commit", "--quiet", "--allow-empty", "-m", "teammate two")
    git(teammate, "push", "--quiet")
    fetched = call("git_fetch")
    assert fetched["refs_fetched"] == ["origin/main"]
    assert call("git_status")["behind"] == 2
    pulled = call("git_pull")
    assert pulled["commits_pulled"] == 2 and pulled["files_changed"] == ["src/app.py"]
    assert "return 5" in (repo / "src" / "app.py").read_text(encoding="utf-8")


def test_push_of_a_new_branch_sets_its_upstream(repo: Path, remote: Path, call: Call) -> None:
    call("git_branch_create", branch_name="topic")
    call("git_branch_switch", branch_name="topic")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "on topic")
    assert call("git_push")["commits_pushed"] == 1
    assert "topic" in git(remote, "branch")
    assert call("git_status")["upstream"] == "origin/topic"


def test_a_rejected_push_and_a_diverged_pull_say_what_to_do(
    repo: Path, teammate: Path, call: Call
) -> None:
    git(teammate, "commit", "--quiet", "--allow-empty", "-m", "theirs")
    git(teammate, "push", "--quiet")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "ours")
    with pytest.raises(GitFailed) as rejected:
        call("git_push")
    assert rejected.value.data["reason"] == "rejected"
    with pytest.raises(GitFailed) as diverged:
        call("git_pull")
    assert diverged.value.data["reason"] == "diverged"
    merged = call("git_pull", mode="merge")
    assert merged["commits_pulled"] == 2  # theirs, and the merge commit
    assert call("git_push")["success"]


def test_unknown_remote_is_named(repo: Path, call: Call) -> None:
    with pytest.raises(InvalidInput) as unknown:
        call("git_fetch", remote="orign")
    assert unknown.value.data["suggestion"] == "Did you mean 'origin'?"
    with pytest.raises(InvalidInput):
        call("git_push", remote="--upload-pack=touch /tmp/pwned")


class _AskForPassword(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def password_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AskForPassword)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/private.git"
    finally:
        server.shutdown()
        server.server_close()


def test_a_credential_prompt_fails_at_once(repo: Path, password_server: str) -> None:
    git(repo, "remote", "add", "private", password_server)
    # A long deadline: the call must fail because nobody may be asked, not by timing out.
    (repo / ".cuedeck" / "config.toml").write_text(
        "[git]\nnetwork_timeout = 600\n", encoding="utf-8"
    )
    workspace = open_workspace(repo)
    with pytest.raises(GitFailed) as failed:
        workspace.plugins.tools()["git_fetch"].call(workspace, {"remote": "private"})
    assert failed.value.data["reason"] == "credentials"
    assert "never prompts" in failed.value.data["help"]


@pytest.mark.slow
def test_a_hanging_remote_is_stopped_with_its_helpers(repo: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    helper = tmp_path / "slow-ssh"
    helper.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 300\n", encoding="utf-8")
    helper.chmod(0o755)
    git(repo, "config", "core.sshCommand", str(helper))
    git(repo, "remote", "add", "slow", "ssh://localhost/never.git")
    (repo / ".cuedeck" / "config.toml").write_text("[git]\nnetwork_timeout = 2\n", encoding="utf-8")
    workspace = open_workspace(repo)
    with pytest.raises(GitTimeout) as stopped:
        workspace.plugins.tools()["git_fetch"].call(workspace, {"remote": "slow"})
    assert stopped.value.data["timeout_seconds"] == 2
    pid = int(pid_file.read_text(encoding="utf-8"))
    deadline = time.monotonic() + 10  # SIGKILL was sent; wait for it to land
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _running(pid)  # the helper died with git's process group


def _running(pid: int) -> bool:
    """Whether ``pid`` is alive (a zombie waiting for a parent to reap it is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
