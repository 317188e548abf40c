"""``cue doctor``: every problem of a workspace, as :class:`~cuedeck.models.Problem` rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import CueError
from cuedeck.models import Problem

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace


def diagnose(workspace: Workspace) -> list[Problem]:
    """Config, frontmatter, dead references and anchors, code references that drifted
    or lost their target, reference cycles, plugins and their tools, and a stale scene."""
    problems: list[Problem] = []
    try:
        config = workspace.config
    except CueError as exc:
        return [_from_error(exc)]
    problems.extend(config.warnings)
    problems.extend(_registered_names(workspace))
    workspace.plugins.checked_tools()  # a tool whose import path does not load is a failure
    for failure in workspace.plugins.failures:
        problems.append(
            _unavailable(
                f"plugin {failure.name!r} failed and was skipped: {failure.error}",
                f"reinstall or remove {failure.distribution or failure.name}",
            )
        )
    try:
        workspace.refresh()
        documents = workspace.documents
        graph = workspace.graph
    except CueError as exc:
        return sorted(dict.fromkeys([*problems, _from_error(exc)]), key=_order)
    problems.extend(workspace.index.left_out)  # links leaving the workspace, binary files
    for document in documents.values():
        problems.extend(document.problems)
    problems.extend(_plugin_checks(workspace))
    from cuedeck.refs.drift import ORPHANED, drift_problems

    drift = drift_problems(workspace)
    # An orphaned reference is a dead one with a history: say it once, with its new home.
    orphans = {(p.path, p.line) for p in drift if p.code == ORPHANED}
    problems.extend(p for p in graph.problems if p.code != 1001 or (p.path, p.line) not in orphans)
    problems.extend(drift)
    for cycle in graph.cycles:
        problems.append(
            Problem(
                "error",
                1002,
                cycle[0],
                None,
                "reference cycle: " + " -> ".join(cycle),
                f"remove the reference from {cycle[-2]} to {cycle[-1]}",
            )
        )
    problems.extend(_not_ignored(workspace))
    from cuedeck.scene import scene_problems

    problems.extend(scene_problems(workspace))  # SCENE.md older than its inputs
    # A config value found wrong by its check may be met again by the refresh.
    return sorted(dict.fromkeys(problems), key=_order)


def _not_ignored(workspace: Workspace) -> list[Problem]:
    """A warning when git would commit CueDeck's per-person files (the cache, the scene,
    state and its lock, and what plugins registered as git-ignored): a workspace made
    before ``cue init`` listed them all."""
    from cuedeck.system.git import Git, GitTimedOut, find_repository

    repository = find_repository(workspace.root)
    if repository is None:  # not a git repository: nothing to commit to
        return []
    # A file inside each ignored folder stands for the folder.
    wanted = {
        line: line + "x" if line.endswith("/") else line for line in workspace.places.gitignore
    }
    try:
        found = Git(repository, cwd=workspace.root, read_only=True).run(
            ["check-ignore", "--no-index", "--stdin"],
            input=("\n".join(wanted.values()) + "\n").encode(),
            timeout=30,
        )
    except (OSError, GitTimedOut):
        return []
    if found.returncode not in (0, 1):
        return []
    ignored = set(found.stdout.decode("utf-8", "replace").splitlines())
    missing = [line for line, probe in wanted.items() if probe not in ignored]
    if not missing:
        return []
    return [
        Problem(
            "warning",
            1052,
            ".gitignore",
            None,
            f"git would commit CueDeck's per-person files: {', '.join(missing)} not ignored",
            "run `cue init`: it adds the missing .gitignore lines and changes nothing else",
        )
    ]


def _plugin_checks(workspace: Workspace) -> list[Problem]:
    """What the checks plugins registered find; a check that fails is itself a warning."""
    from cuedeck.plugins.host import get_checks

    found: list[Problem] = []
    for name, check in get_checks(workspace.plugins).items():
        try:
            found.extend(check(workspace))
        except CueError as exc:
            found.append(_from_error(exc))
        except Exception as exc:  # a plugin's bug must not hide the other checks
            message = f"check {name!r} failed: {type(exc).__name__}: {exc}"
            found.append(Problem("warning", 1000, None, None, message, "report it"))
    return found


def _registered_names(workspace: Workspace) -> list[Problem]:
    """Config values that name something no plugin registered (a pruner, a searcher, a
    counter: keys made with ``setting(names=hook)``), and an exact counter that is
    installed but was refused (its data failed the hash check)."""
    config = workspace.config
    checks = []
    for section, settings in config.sections.items():
        for field in attrs.fields(type(settings)):
            hook = field.metadata.get("names")
            value = getattr(settings, field.name)
            if not hook or value in field.metadata.get("also", ()):
                continue
            entries = workspace.plugins.collect(hook)
            # An item registered as None cannot work here (a counter without its data).
            available = [name for name, entry in entries.items() if entry.item is not None]
            checks.append((f"{section}.{field.name}", value, available))
    from cuedeck.token_counts import O200kCounter

    problems = []
    if O200kCounter.refused:
        problems.append(
            _unavailable(
                f"exact o200k counts are off: {O200kCounter.refused}; counting with the estimate",
                "reinstall the package (pip install --force-reinstall bpe-openai)",
            )
        )
    for key, value, available in checks:
        # Nothing registered at all: the plugin is not installed, nothing to check against.
        if value not in available and available:
            problems.append(_from_error(config.unavailable(key, value, available)))
    return problems


def _unavailable(message: str, help_text: str) -> Problem:
    """A warning (1008) that an installed feature is not working."""
    return Problem("warning", 1008, None, None, message, help_text)


def _from_error(exc: CueError) -> Problem:
    return Problem("error", exc.code, exc.path, exc.line, exc.message, exc.help)


def _order(problem: Problem) -> tuple[int, str, int, str]:
    return (
        0 if problem.severity == "error" else 1,
        problem.path or "",
        problem.line or 0,
        problem.message,
    )
