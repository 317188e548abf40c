"""``cue graph``: the code-intelligence tools for people (docs/code.md).

Each command runs its ``scip_*`` tool and prints its compact lines (``--json``: the
whole reply). Loaded by ``cue --help``, so only click is imported at module level.
"""

from __future__ import annotations

import json
from typing import Any

import click

DEPTH = click.IntRange(min=1, max=10)


def _run(tool: str, arguments: dict[str, Any], as_json: bool) -> None:
    workspace = click.get_current_context().obj.workspace
    reply = workspace.plugins.tools()[tool].call(workspace, arguments)
    if as_json:
        click.echo(json.dumps(reply, indent=2, ensure_ascii=False))
    else:
        click.echo(reply["text"])


_json = click.option("--json", "as_json", is_flag=True, help="Print the whole reply as JSON.")
_exact = click.option("--exact", is_flag=True, help="Only this exact name.")


@click.group("graph")
def graph_group() -> None:
    """Code intelligence: definitions, references, callers, callees, impact, call chains.

    A SYMBOL is a name (send), a qualified name (Client.send), path#Name or
    module/Class#method(). Answers come from the code graph: precise SCIP edges where
    `cue index --scip` ran, syntactic ones elsewhere.
    """


@graph_group.command("def")
@click.argument("symbol")
@_exact
@_json
def definition(symbol: str, exact: bool, as_json: bool) -> None:
    """Where SYMBOL is defined."""
    _run("scip_definition", {"symbol": symbol, "exact": exact}, as_json)


@graph_group.command("refs")
@click.argument("symbol")
@click.option("-n", "--limit", type=click.IntRange(1, 500), default=100, show_default=True)
@_exact
@_json
def references(symbol: str, limit: int, exact: bool, as_json: bool) -> None:
    """Every place SYMBOL is used."""
    _run("scip_references", {"symbol": symbol, "limit": limit, "exact": exact}, as_json)


@graph_group.command("callers")
@click.argument("symbol")
@click.option("--depth", type=DEPTH, default=1, show_default=True)
@_exact
@_json
def callers(symbol: str, depth: int, exact: bool, as_json: bool) -> None:
    """The definitions that call or use SYMBOL."""
    _run("scip_dependents", {"symbol": symbol, "depth": depth, "exact": exact}, as_json)


@graph_group.command("callees")
@click.argument("symbol")
@click.option("--depth", type=DEPTH, default=1, show_default=True)
@_exact
@_json
def callees(symbol: str, depth: int, exact: bool, as_json: bool) -> None:
    """What SYMBOL calls or uses."""
    _run("scip_dependencies", {"symbol": symbol, "depth": depth, "exact": exact}, as_json)


@graph_group.command("impact")
@click.argument("symbol")
@click.option("--depth", type=DEPTH, default=3, show_default=True)
@_exact
@_json
def impact(symbol: str, depth: int, exact: bool, as_json: bool) -> None:
    """What a change to SYMBOL reaches: its dependents, theirs, by file."""
    _run("scip_impact", {"symbol": symbol, "depth": depth, "exact": exact}, as_json)


@graph_group.command("chain")
@click.argument("source")
@click.argument("target")
@click.option("--max-depth", type=DEPTH, default=10, show_default=True)
@_exact
@_json
def chain(source: str, target: str, max_depth: int, exact: bool, as_json: bool) -> None:
    """The shortest call chains from SOURCE to TARGET."""
    arguments = {"from_symbol": source, "to_symbol": target, "max_depth": max_depth, "exact": exact}
    _run("scip_callchain", arguments, as_json)


@graph_group.command("status")
@_json
def status(as_json: bool) -> None:
    """What the code graph holds, and the SCIP indexers."""
    _run("scip_status", {}, as_json)
