"""``cue upgrade`` and ``cue plugins``: what is installed, and bringing it up to date."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

from cuedeck.errors import CueError
from cuedeck.system import spawn
from cuedeck_cli.context import current_state
from cuedeck_cli.output import console, emit_json


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
