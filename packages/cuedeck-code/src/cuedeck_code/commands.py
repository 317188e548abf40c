"""``cue map`` and ``cue find``: the repository map (``repo_map``) and definitions by name
(``find_symbol``), for people.

Loaded by ``cue --help``, so only click is imported at module level.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from click.core import ParameterSource

TOKEN_LIMIT = click.IntRange(min=64, max=200_000)


@click.command("map")
@click.argument("folder", required=False)
@click.option(
    "-t",
    "--token-limit",
    "token_limit",
    type=TOKEN_LIMIT,
    default=1024,
    show_default=True,
    help="Most tokens of the map (by the workspace's counter).",
)
# The option's first name, kept working: `cue scene` and the tools say token_limit.
@click.option("--tokens", "old_token_limit", type=TOKEN_LIMIT, hidden=True)
@click.option("-c", "--card", "card_id", help="Rank for this card: its text and cited code.")
@click.option("-q", "--query", help="Rank for these words or identifiers.")
@click.option("--json", "as_json", is_flag=True, help="Print the reply as JSON (docs/code.md).")
def map_command(
    folder: str | None,
    token_limit: int,
    old_token_limit: int | None,
    card_id: str | None,
    query: str | None,
    as_json: bool,
) -> None:
    """Print the repository's most important definitions within a token budget.

    FOLDER limits the map to one folder. Without --card or --query the ranking is the
    reference graph's and recent changes'; with them, what the card or query needs.
    """
    context = click.get_current_context()
    if old_token_limit is not None:
        if context.get_parameter_source("token_limit") != ParameterSource.DEFAULT:
            raise click.UsageError("give --token-limit once (--tokens is its old name)")
        token_limit = old_token_limit
    workspace = context.obj.workspace
    arguments: dict[str, Any] = {"token_limit": token_limit}
    for key, value in (("folder", folder), ("card_id", card_id), ("query", query)):
        if value is not None:
            arguments[key] = value
    reply = workspace.plugins.tools()["repo_map"].call(workspace, arguments)
    if as_json:
        click.echo(json.dumps(reply, indent=2, ensure_ascii=False))
        return
    sys.stdout.write(reply["text"])
    left_out = ""
    if reply["left_out"]:
        from cuedeck.scene.render import left_out_text

        left_out = f"; left out: {left_out_text(sorted(reply['left_out'].items()))}"
    click.echo(
        f"{reply['symbols']} definitions in {reply['files']} files, "
        f"{reply['tokens']}/{token_limit} tokens{left_out}",
        err=True,
    )


@click.command("find")
@click.argument("name")
@click.option("--fuzzy", is_flag=True, help="Also other cases, prefixes, abbreviations, typos.")
@click.option("--kind", help="Only this kind: class, function, method, struct...")
@click.option("--path", "glob", help="Only files matching this glob, e.g. 'src/**'.")
@click.option("--lang", "language", help="Only this language, e.g. python.")
@click.option("-n", "--limit", type=click.IntRange(1, 100), default=20, show_default=True)
@click.option("--offset", type=click.IntRange(0, 10_000), default=0, help="Skip this many.")
@click.option("--json", "as_json", is_flag=True, help="Print the reply as JSON (docs/code.md).")
def find_command(
    name: str,
    fuzzy: bool,
    kind: str | None,
    glob: str | None,
    language: str | None,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """Find definitions by name or qualified name: Text.wrap, wrap, http.Client.Do.

    Exact by default (the qualified name's last parts, case included); --fuzzy also
    finds other cases, prefixes, substrings, abbreviations and typos. Sources come
    before tests.
    """
    workspace = click.get_current_context().obj.workspace
    arguments: dict[str, Any] = {
        "name": name,
        "match": "fuzzy" if fuzzy else "exact",
        "limit": limit,
        "offset": offset,
    }
    for key, value in (("kind", kind), ("path", glob), ("language", language)):
        if value is not None:
            arguments[key] = value
    reply = workspace.plugins.tools()["find_symbol"].call(workspace, arguments)
    if as_json:
        click.echo(json.dumps(reply, indent=2, ensure_ascii=False))
        return
    for hit in reply["results"]:
        signature = " ".join(hit["signature"].split()) or hit["kind"]
        click.echo(f"{hit['path']}:{hit['line']}  {hit['kind']}  {hit['symbol']}  {signature}")
    if reply["hint"]:
        click.echo(reply["hint"], err=True)
    elif reply["has_more"]:
        shown = offset + len(reply["results"])
        click.echo(
            f"{shown} of {reply['total']} shown: --offset {reply['next_offset']} for more",
            err=True,
        )
