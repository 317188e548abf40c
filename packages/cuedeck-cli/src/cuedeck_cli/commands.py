"""Core ``cue`` commands on a workspace: init, index, doctor, status and clean (``cue
upgrade`` and ``cue plugins``, about the installation, are in :mod:`cuedeck_cli.installation`)."""

from __future__ import annotations

import logging
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import click

from cuedeck.errors import CueError
from cuedeck.layout import (
    CACHE_DIR,
    CARDS_DIR,
    DOCS_DIR,
    WORKSPACE_DIR,
    user_cache_dir,
)
from cuedeck.plugins.host import get_places, get_services
from cuedeck.serving.background import background_processes, describe, process_json
from cuedeck.text import counted
from cuedeck_cli.context import CliState, current_state
from cuedeck_cli.output import console, emit_json, render_problem


class InitCommand(click.Command):
    """``cue init``, with ``--NAME/--no-NAME`` for each step a plugin registers
    (``register_init_steps``)."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        from cuedeck.plugins.host import get_init_steps

        params = super().get_params(ctx)
        state = ctx.find_object(CliState)
        if state is None:
            return params
        steps = [
            click.Option(
                [f"--{name}/--no-{name}"],
                default=None,
                help=f"{step.question} (asked when not given)",
            )
            for name, step in sorted(get_init_steps(state.plugins).items())
        ]
        return [*params[:-1], *steps, params[-1]]  # --help stays last


@click.command(cls=InitCommand)
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Rewrite config.toml (the old one is kept as .bak).")
def init(directory: Path | None, force: bool, **steps: bool | None) -> None:
    """Create .cuedeck/ (cards, docs, cache, config.toml) and update .gitignore.

    In DIRECTORY (made if missing, as `git init DIR` does), else in -C DIR or here.
    """
    from cuedeck.config import CONFIG_PATH, render_default_config
    from cuedeck.writes import write_file

    state = current_state()
    root = (directory or state.target_directory).expanduser().resolve()
    if directory is not None and not root.exists():
        try:
            root.mkdir(parents=True)
        except OSError as exc:
            raise CueError(f"cannot create {root}: {exc.strerror or exc}", path=str(root)) from None
    if not root.is_dir():
        raise CueError(f"{root} is not a directory", path=str(root))
    created = []
    for sub in (CARDS_DIR, DOCS_DIR, CACHE_DIR):
        folder = root / sub
        if not folder.is_dir():
            folder.mkdir(parents=True)
            created.append(f"{sub}/")
    config = root / CONFIG_PATH
    if config.exists() and force:
        backup = config.with_name(f"config.toml.{time.strftime('%Y%m%d-%H%M%S')}.bak")
        shutil.copy2(config, backup)
        write_file(root, config, render_default_config(state.plugins))
        created.append(f"{CONFIG_PATH} (old one kept as {WORKSPACE_DIR}/{backup.name})")
    elif not config.exists():
        write_file(root, config, render_default_config(state.plugins))
        created.append(CONFIG_PATH)
    gitignore = root / ".gitignore"
    existing = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
    present = {line.strip() for line in existing.splitlines()}
    missing = [line for line in get_places(state.plugins).gitignore if line not in present]
    if missing:
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        block = prefix + "# CueDeck cache and generated scene\n" + "\n".join(missing) + "\n"
        write_file(root, gitignore, existing + block)
        created.append(".gitignore entries")
    created = [f"created {item}" for item in created]
    done, left = _init_steps(state, root, steps)
    if created or done:
        click.echo(f"Initialised CueDeck workspace in {root}")
        for item in [*created, *done]:
            click.echo(f"  {item}")
    else:
        click.echo(f"CueDeck workspace already initialised in {root} (nothing changed)")
    for name, question in left:
        click.echo(f"  not asked without a terminal: {question} (`cue init --{name}`)")


def _init_steps(
    state: CliState, root: Path, wanted: dict[str, bool | None]
) -> tuple[list[str], list[tuple[str, str]]]:
    """Run the plugins' init steps, each as its option says, else asked (at a terminal,
    when needed): what was done, and the steps (name, question) left unasked."""
    from cuedeck.plugins.host import get_init_steps

    done: list[str] = []
    left: list[tuple[str, str]] = []
    for name, step in sorted(get_init_steps(state.plugins).items()):
        chosen = wanted.get(name.replace("-", "_"))
        if chosen is None:
            if not step.needed(root):
                continue
            if not (sys.stdin.isatty() and sys.stdout.isatty()):
                left.append((name, step.question))
                continue
            chosen = click.confirm(step.question, default=True)
        if chosen:
            done.extend(step.run(root))
    return done, left


@click.command()
@click.option("--rebuild", is_flag=True, help="Discard the cache and parse every file again.")
@click.option(
    "--semantic",
    is_flag=True,
    help="Also embed every section not embedded yet (cuedeck-search), with progress.",
)
@click.option(
    "--scip",
    is_flag=True,
    help="Also run the installed SCIP indexers (scip-python, scip-typescript...) and load "
    "their precise code graph (cuedeck-code), with progress.",
)
@click.option(
    "--graph-wait",
    is_flag=True,
    help="Build the code graph here, with progress, however many files it reads (by "
    "default a big build runs in the background; --scip implies this).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def index(rebuild: bool, semantic: bool, scip: bool, graph_wait: bool, as_json: bool) -> None:
    """Refresh the index; report files seen, parsed, reused and the time taken.

    With --rebuild, everything search uses is rebuilt too (its saved keyword postings).
    When the code graph has many files to read, it is built by a background process
    (`cue status` shows it) unless --graph-wait.
    """
    from cuedeck.plugins.services import SearchService

    workspace = current_state().workspace
    engine = None
    if "search" in get_services(workspace.plugins):
        # Built first, the engine follows the refresh (cuedeck_after_refresh): the
        # keyword postings are written too, so searches start warm.
        engine = workspace.service(SearchService)
    elif semantic:  # a MissingExtra (1008) without cuedeck-search
        workspace.service(SearchService)
    stats = workspace.refresh(rebuild=rebuild)  # progress is reported (cuedeck.progress)
    graph = _code_graph(workspace, scip=scip, wait=graph_wait or scip, quiet=as_json)
    embedded = None
    if engine is not None and semantic:
        engine.background = False
        embedded = engine.embed_all()
    result = {
        "seen": stats.seen,
        "parsed": stats.parsed,
        "reused": stats.reused,
        "removed": stats.removed,
        "rebuilt": stats.rebuilt,
        "seconds": round(stats.seconds, 4),
        "counter": workspace.token_counter.name,
        "embedded": embedded,
        **workspace.index.summary(),
    }
    if graph is not None:
        result["code_graph"] = graph
    if as_json:
        emit_json(result)
        return
    click.echo(
        f"indexed {counted(stats.seen, 'file')}: {stats.parsed} parsed, {stats.reused} reused, "
        f"{stats.removed} removed in {stats.seconds:.3f}s"
    )
    for line in _summary_lines(workspace.index.summary(), workspace):
        click.echo(line)
    if embedded is not None:
        click.echo(f"embedded {counted(embedded, 'section')} (every section has a vector now)")
    building = graph.get("background") if graph is not None else None
    if building is not None:
        click.echo(
            f"code graph: building {counted(building['pending'], 'file')} in the background "
            f"(pid {building['pid']}); `cue status` shows it"
        )
    elif graph is not None and (graph["files"] or "scip" in graph):  # a workspace of code
        click.echo(
            f"code graph: {counted(graph['files'], 'file')}, "
            f"{counted(graph['edges'], 'edge')} ({graph['read']} read in {graph['seconds']}s)"
        )
        for entry in graph.get("scip", []):
            note = f": {entry['note']}" if entry.get("note") else ""
            click.echo(f"  {entry['name']}: {entry['state']}{note}")


def _code_graph(workspace: Any, *, scip: bool, wait: bool, quiet: bool) -> dict[str, Any] | None:
    """Bring the code graph (the ``code_intel`` service) in step, and run the SCIP
    indexers when asked; what it holds. A big build (unless ``wait``) is left to the
    detached builder: ``background`` says so (its pid and files). None without a code
    plugin."""
    if "code_intel" not in get_services(workspace.plugins):
        if scip:
            workspace.service("code_intel")  # a MissingExtra (1008) without cuedeck-code
        return None
    intel = workspace.service("code_intel")
    began = time.perf_counter()
    started = None if wait else intel.detach()
    if started is not None:  # seconds: what weighing and starting the build took here
        edges = intel.store.query("SELECT COUNT(*) FROM edges")[0][0]
        seconds = round(time.perf_counter() - began, 3)
        return {"files": started["files"], "read": 0, "edges": edges, "seconds": seconds,
                "background": {"pid": started["pid"], "pending": started["pending"]}}  # fmt: skip
    stats = intel.sync()
    edges = intel.store.query("SELECT COUNT(*) FROM edges")[0][0]
    found: dict[str, Any] = {"files": stats.files, "read": stats.read, "edges": edges,
                             "seconds": round(stats.seconds, 3), "background": None}  # fmt: skip
    if scip:

        def told(status: dict[str, Any]) -> None:
            if quiet:
                return
            running = [e["name"] for e in status["indexers"] if e["state"] == "running"]
            if running:
                click.echo(f"running {', '.join(running)}...", err=True)

        found["scip"] = intel.run_scip(wait=True, progress=told)["indexers"]
        found["edges"] = intel.store.query("SELECT COUNT(*) FROM edges")[0][0]
    return found


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
def doctor(as_json: bool, strict: bool) -> None:
    """Check config, frontmatter, references, anchors and cycles; exit 1 on errors."""
    from cuedeck.doctor import diagnose

    workspace = current_state().workspace
    logger = logging.getLogger("cuedeck")
    # The report lists the config's warnings itself: they are not logged a second time.
    quiet = _ConfigWarningFilter()
    logger.addFilter(quiet)
    try:
        problems = diagnose(workspace)
    finally:
        logger.removeFilter(quiet)
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    failed = errors > 0 or (strict and warnings > 0)
    counter = _counter_info(workspace)
    running = background_processes(workspace)
    if as_json:
        emit_json(
            {
                "healthy": not failed,
                "problems": [
                    {
                        "severity": p.severity,
                        "code": p.code,
                        "path": p.path,
                        "line": p.line,
                        "message": p.message,
                        "help": p.help,
                    }
                    for p in problems
                ],
                "token_counter": counter,
                "index": _index_summary(workspace),
                "background": [process_json(process) for process in running],
            }
        )
    else:
        out = console()
        for problem in problems:
            out.print(render_problem(problem))
        exact = "exact" if counter.get("exact") else "estimate"
        out.print(f"token counter: {counter.get('name')} ({exact})")
        for line in _summary_lines(_index_summary(workspace), workspace):
            out.print(line, markup=False, highlight=False)
        for process in running:
            out.print(f"background: {describe(process)}", markup=False, highlight=False)
        summary = f"{counted(errors, 'error')}, {counted(warnings, 'warning')}"
        if failed:
            out.print(f"[bold red]unhealthy:[/] {summary}")
        else:
            out.print(f"[bold green]healthy:[/] {summary}")
    if failed:
        raise SystemExit(1)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """List what runs in the background for this workspace: pid, age and how it ends.

    The workspace's watcher (started by `cue search`), resident MCP servers (`cue mcp`
    over stdio) and the detached embedder (semantic search), as each installed plugin
    reports them; docs/freshness.md says what each is for and its idle limit.
    """
    workspace = current_state().workspace
    running = background_processes(workspace)  # printed masked, as everything `cue` prints
    if as_json:
        emit_json({"processes": [process_json(process) for process in running]})
        return
    for process in running:
        click.echo(describe(process))
    if not running:
        click.echo("nothing runs in the background for this workspace")


def _index_summary(workspace: Any) -> dict[str, dict[str, int]]:
    """Files indexed per language, and what was not indexed and why (empty when the
    index failed)."""
    if "index" not in workspace.__dict__:
        return {"languages": {}, "passed_over": {}, "not_indexed": {}}
    summary: dict[str, dict[str, int]] = workspace.index.summary()
    return summary


#: How ``cue index`` and ``cue doctor`` name each reason a file was not indexed.
_REASON_WORDS = {
    "no parser": "no parser",
    "ignored": "ignored by .gitignore",
    "excluded": "left out by [index] include or exclude",
    "too large": "over [index] max_file_mb",
    "outside the workspace": "symlink out of the workspace",
    "protected": "symlink into .git or CueDeck's private files",
    "hard-linked": "several hard links",
    "binary": "binary",
    "unreadable": "unreadable",
    "parser failed": "parser failed",
    # what cuedeck-code's selector passes over ([code] exclude, skip_generated...)
    "generated": "generated code",
    "vendored": "vendored code",
    "minified": "minified code",
}
#: File kinds ``no parser`` lists by name before it counts the rest.
_KINDS_SHOWN = 6
#: A reason that passed over this many files or fewer names them.
NAMED_FILES = 3


def _summary_lines(summary: dict[str, dict[str, int]], workspace: Any) -> list[str]:
    """``languages: markdown 35, python 120``, then what was not indexed, one reason a
    line (``  322 .rst files: no parser reads them``); a reason with few files whose
    paths the index kept names them (``  1 file: minified (static/app.js)``)."""
    lines = []
    if summary.get("languages"):
        parts = ", ".join(f"{name} {count}" for name, count in summary["languages"].items())
        lines.append(f"languages: {parts}")
    left = summary.get("not_indexed") or {}
    passed: dict[str, list[str]] = workspace.index.passed_over if left else {}
    folders = summary.get("folders_not_entered") or {}
    if left or folders:
        lines.append("not indexed:")
    for reason, count in left.items():
        words = _REASON_WORDS.get(reason, f"passed over ({reason})")
        if reason == "no parser":
            kinds = list((summary.get("no_parser") or {}).items())
            shown = ", ".join(f"{n} {kind}" for kind, n in kinds[:_KINDS_SHOWN])
            rest = sum(n for _, n in kinds[_KINDS_SHOWN:])
            more = f", {rest} of {counted(len(kinds) - _KINDS_SHOWN, 'other kind')}" if rest else ""
            lines.append(f"  {counted(count, 'file')}: {words} ({shown}{more})")
        else:
            paths = sorted(passed.get(reason, []))
            which = f" ({', '.join(paths)})" if 0 < len(paths) <= NAMED_FILES else ""
            lines.append(f"  {counted(count, 'file')}: {words}{which}")
    for reason, count in folders.items():
        lines.append(f"  {counted(count, 'folder')}: {_REASON_WORDS.get(reason, reason)}")
    return lines


class _ConfigWarningFilter(logging.Filter):
    """Drops the config warnings :func:`cuedeck.config.report_warnings` logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "config_warning", False)


def _counter_info(workspace: Any) -> dict[str, Any]:
    try:
        counter = workspace.token_counter
    except CueError as exc:
        return {"name": None, "exact": False, "error": exc.message}
    return {"name": counter.name, "exact": counter.exact}


@click.command()
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Also empty the user cache shared by every workspace (embedded sections).",
)
def clean(everything: bool) -> None:
    """Remove .cuedeck/.cache/ (the index is rebuilt on next use).

    Embeddings live in the user cache, shared by every workspace, and survive: nothing
    embedded before is embedded again. --all removes them too.
    """
    root = current_state().workspace.root
    cache = root / CACHE_DIR
    if cache.exists():
        shutil.rmtree(cache)
        click.echo(f"removed {CACHE_DIR}/")
    else:
        click.echo(f"{CACHE_DIR}/ does not exist; nothing to remove")
    if everything:
        shared = Path(user_cache_dir())
        if shared.exists():
            # Another process may hold the database open: SQLite files removed under it
            # only leave that process working on its own copy until it closes.
            shutil.rmtree(shared)
            click.echo(f"removed the user cache {shared}")
        else:
            click.echo(f"the user cache {shared} does not exist; nothing to remove")
