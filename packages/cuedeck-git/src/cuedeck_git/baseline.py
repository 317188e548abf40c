"""The ``git`` baseline: what the workspace's files were at a commit, branch or tag.

``cue scene --since HEAD~3`` (and ``build_scene(since=...)``) ask it: the files that
differ between that commit and the working tree (committed, staged or not, and files
git does not track yet), each with its text at the commit. Read-only git, through
:class:`~cuedeck_git.runner.Repo`; files ``[files] deny`` hides are left out.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cuedeck.models import Baseline, BaselineFile
from cuedeck_git.runner import Repo, decode, exclusions

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace

_REVISION = re.compile(r"^[^-\s\x00-\x1f\x7f][^\s\x00-\x1f\x7f]*$")


def git_baseline(workspace: Workspace, since: str) -> Baseline | None:
    """The baseline at commit ``since``; None when git does not know that name (or the
    workspace is not in a git repository)."""
    if not _REVISION.match(since):
        return None
    repo = Repo(workspace, read_only=True)
    found = repo.run(
        "rev-parse", "--verify", "--quiet", "--end-of-options", f"{since}^{{commit}}", check=False
    )
    if found.returncode != 0:
        return None
    commit = decode(found.stdout).strip()
    deny = exclusions(workspace)
    listed = repo.run(
        "diff", "--name-status", "-z", "--no-renames", "--relative", "--no-ext-diff",
        "--end-of-options", commit, "--", ".", *deny,
    ).stdout  # fmt: skip
    fields = decode(listed).split("\0")
    status: dict[str, str] = {}
    for code, path in zip(fields[::2], fields[1::2], strict=False):
        if code and path:
            status[path] = code[0]
    untracked = repo.run(
        "ls-files", "--others", "--exclude-standard", "-z", "--", ".", *deny
    ).stdout
    for path in decode(untracked).split("\0"):
        if path:
            status.setdefault(path, "A")
    older = [path for path, code in status.items() if code != "A"]
    texts = _blobs(repo, commit, older)
    files = {
        path: BaselineFile(None if code == "A" else texts.get(path))
        for path, code in sorted(status.items())
    }
    return Baseline(label=f"{since} ({commit[:12]})", files=files, commit=commit)


def _blobs(repo: Repo, commit: str, paths: list[str]) -> dict[str, str]:
    """The text of each of ``paths`` at ``commit`` (relative to the workspace), in one
    ``cat-file --batch`` run."""
    if not paths:
        return {}
    request = "".join(f"{commit}:./{path}\n" for path in paths).encode("utf-8")
    output = repo.run("cat-file", "--batch", input=request).stdout
    found: dict[str, str] = {}
    position = 0
    for path in paths:
        end = output.index(b"\n", position)
        header = output[position:end].split()
        position = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # "missing": not a file at that commit
        size = int(header[2])
        found[path] = output[position : position + size].decode("utf-8-sig", errors="replace")
        position += size + 1
    return found
