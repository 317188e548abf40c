"""Core ``cue`` commands: init, index, doctor, status, clean, upgrade and plugins."""

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
from cuedeck.system import spawn
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
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def index(rebuild: bool, semantic: bool, scip: bool, as_json: bool) -> None:
    """Refresh the index; report files seen, parsed, reused and the time taken.

    With --rebuild, everything search uses is rebuilt too (its saved keyword postings).
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
    graph = _code_graph(workspace, scip=scip, quiet=as_json)
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
    if graph is not None and (graph["files"] or "scip" in graph):  # a workspace of code
        click.echo(
            f"code graph: {counted(graph['files'], 'file')}, "
            f"{counted(graph['edges'], 'edge')} ({graph['read']} read in {graph['seconds']}s)"
        )
        for entry in graph.get("scip", []):
            note = f": {entry['note']}" if entry.get("note") else ""
            click.echo(f"  {entry['name']}: {entry['state']}{note}")


def _code_graph(workspace: Any, *, scip: bool, quiet: bool) -> dict[str, Any] | None:
    """Bring the code graph (the ``code_intel`` service) in step, and run the SCIP
    indexers when asked; what it holds. None without a code plugin."""
    if "code_intel" not in get_services(workspace.plugins):
        if scip:
            workspace.service("code_intel")  # a MissingExtra (1008) without cuedeck-code
        return None
    intel = workspace.service("code_intel")
    stats = intel.sync()
    edges = intel.store.query("SELECT COUNT(*) FROM edges")[0][0]
    found: dict[str, Any] = {"files": stats.files, "read": stats.read, "edges": edges,
                             "seconds": round(stats.seconds, 3)}  # fmt: skip
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


def installed_requirement() -> str:
    """``cuedeck`` with the extras whose distributions are all installed here
    (``cuedeck[all]`` when every one is): what an upgrade must ask for, or the extras'
    packages would stay behind at the old version (the distributions pin each other)."""
    import re
    from importlib.metadata import PackageNotFoundError, distribution
    from importlib.metadata import metadata as read_metadata

    try:
        meta = read_metadata("cuedeck")
    except PackageNotFoundError:
        return "cuedeck"
    needs: dict[str, list[str]] = {extra: [] for extra in meta.get_all("Provides-Extra") or []}
    for line in meta.get_all("Requires-Dist") or []:
        # The meta-distribution's own lines: `cuedeck-search==0.1.0; extra == 'search'`.
        extra = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", line)
        if extra and extra.group(1) in needs:
            needs[extra.group(1)].append(re.split(r"[\[=<>!~;\s]", line, maxsplit=1)[0])

    def present(name: str) -> bool:
        try:
            distribution(name)
        except PackageNotFoundError:
            return False
        return True

    have = [extra for extra, names in needs.items() if names and all(map(present, names))]
    if "all" in have:
        return "cuedeck[all]"
    return f"cuedeck[{','.join(sorted(have))}]" if have else "cuedeck"


def upgrade_command() -> list[str]:
    """The command that upgrades CueDeck the way it was installed (uv tool, pipx, pip),
    with the extras installed (uv tool and pipx remember them themselves)."""
    prefix = Path(sys.prefix)
    parts = prefix.parts
    if "uv" in parts and "tools" in parts:
        return ["uv", "tool", "upgrade", "cuedeck"]
    if "pipx" in parts and "venvs" in parts:
        return ["pipx", "upgrade", "cuedeck"]
    wanted = installed_requirement()
    cfg = prefix / "pyvenv.cfg"
    uv_venv = cfg.exists() and "uv =" in cfg.read_text(encoding="utf-8", errors="replace")
    if uv_venv and shutil.which("uv"):
        return ["uv", "pip", "install", "--upgrade", "--python", sys.executable, wanted]
    return spawn.python_command("pip", "install", "--upgrade", wanted)


_NETWORK_HINTS = (
    "connection",
    "network",
    "resolve",
    "timed out",
    "unreachable",
    "failed to fetch",
    "max retries",
    "could not find a version",
    "no matching distribution",
)


@click.command()
@click.option("--dry-run", is_flag=True, help="Print the upgrade command without running it.")
def upgrade(dry_run: bool) -> None:
    """Upgrade CueDeck with the tool that installed it (uv tool, pipx or pip)."""
    import shlex

    command = upgrade_command()
    shown = shlex.join(command)  # as a shell takes it: `cuedeck[all]` quoted
    if dry_run:
        click.echo(shown)
        return
    click.echo(f"running: {shown}", err=True)
    try:
        result = spawn.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise CueError(
            f"cannot run {command[0]!r}: it is not installed", help=f"install {command[0]}"
        ) from None
    if result.returncode == 0:
        click.echo(result.stdout.strip() or "CueDeck is up to date")
        return
    output = (result.stderr or result.stdout).strip()
    last = output.splitlines()[-1] if output else "no output"
    if any(hint in output.lower() for hint in _NETWORK_HINTS):
        raise CueError(
            f"upgrade failed: the package index cannot be reached ({last})",
            help="check your network or proxy settings and try again",
            command=shown,
        )
    raise CueError(f"upgrade failed: {shown} exited {result.returncode}: {last}", command=shown)


def _wrapped(label: str, names: list[str], width: int) -> list[str]:
    """``  label a, b, c`` in lines of at most ``width`` columns (a name longer than a
    line stands alone on its line, whole), continuations under the first name."""
    import textwrap

    indent = "  "
    return textwrap.wrap(
        ", ".join(names),
        width=width,
        initial_indent=indent + label,
        subsequent_indent=indent + " " * len(label),
        break_long_words=False,
        break_on_hyphens=False,
    )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the plugin list as JSON.")
def plugins(as_json: bool) -> None:
    """List loaded plugins, their versions, hooks and what they register."""
    from cuedeck.plugins.host import hook_names

    host = current_state().plugins
    infos = host.infos()
    host.checked_tools()  # imports every tool: one that does not load is listed as a failure
    # Every collector hook of the contract, and who registered what through it (commands
    # too); a question hook (resolve_baseline) registers nothing.
    registered = {
        hook.removeprefix("register_"): {
            name: entry.plugin for name, entry in host.collect(hook).items()
        }
        for hook in hook_names()
        if hook.startswith("register_")
    }
    failures = host.failures
    if as_json:
        emit_json(
            {
                "plugins": [
                    {
                        "name": i.name,
                        "distribution": i.distribution,
                        "version": i.version,
                        "hooks": list(i.hooks),
                        "markers": {hook: list(marks) for hook, marks in i.markers.items()},
                        "errors": host.errors_of(i.name),
                    }
                    for i in infos
                ],
                "failures": [
                    {"name": f.name, "distribution": f.distribution, "error": f.error}
                    for f in failures
                ],
                "registered": registered,
                "rate_limits": {
                    name: {"per_minute": tool.rate_limit.per_minute, "burst": tool.rate_limit.burst}
                    for name, tool in host.tools().items()
                    if tool.rate_limit is not None
                },
            }
        )
        return
    # A counter registered as None cannot work on this machine (o200k without its file).
    idle = {n for n, e in host.collect("register_token_counters").items() if e.item is None}
    # A listing rather than a table: plugin and tool names are long, and a terminal 80
    # columns wide cut them (`cuedeck.default_plu…`). Lines wrap between names only.
    width = max(40, shutil.get_terminal_size().columns)
    lines = ["CueDeck plugins"]
    for info in infos:
        lines.append(f"{info.name}  {info.distribution or '-'} {info.version or '-'}")
        for kind, names in registered.items():
            mine = [
                name + (" (unavailable here)" if name in idle else "")
                for name, owner in names.items()
                if owner == info.name
            ]
            if mine:
                lines.extend(_wrapped(f"{kind}: ", mine, width))
    out = console()
    for line in lines:
        out.print(line, markup=False, highlight=False)
    for failure in failures:
        out.print(f"[yellow]failed:[/] {failure.name}: {failure.error}")
