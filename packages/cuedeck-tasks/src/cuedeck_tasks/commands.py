"""``cue card ...`` and ``cue open``: the task commands.

Loaded by ``cue --help``, so only click is imported at module level. Every command
takes ``--json`` where it prints data; the shapes are documented in docs/tasks.md.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from cuedeck_tasks import card_cli

# Spelled out here (not imported from cuedeck_tasks.cards) to keep `cue --help` light;
# tests/tasks/test_commands.py checks they agree.
STATUS_CHOICES = ("todo", "active", "done", "archived")
PRIORITY_CHOICES = ("low", "medium", "high", "critical")
FORMAT_CHOICES = ("mermaid", "dot", "json")

json_option = card_cli.json_option
_context = card_cli.context
_workspace = card_cli.workspace
_store = card_cli.card_store
_call = card_cli.call
_emit_json = card_cli.emit_json


def _table(*columns: str, wrap: str | None = None, clip: tuple[str, ...] = ()) -> Any:
    """A borderless table: only ``wrap`` wraps when space runs out, ``clip`` columns are
    cut short with an ellipsis, the others keep their full width."""
    from rich.table import Table

    table = Table(
        box=None,
        padding=(0, 2, 0, 0),
        pad_edge=False,
        show_edge=False,
        header_style="bold",
        expand=False,
    )
    for column in columns:
        if column == wrap:
            table.add_column(column, overflow="fold", min_width=12)
        elif column in clip:
            table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=18)
        else:
            table.add_column(column, no_wrap=True)
    return table


def _console() -> Any:
    """The CLI console; when piped, wide enough that table rows stay on one line each."""
    from cuedeck_tasks.columns import PIPED_WIDTH

    out = _context().console()
    if not out.is_terminal:
        out.width = PIPED_WIDTH
    return out


def _print(renderable: Any) -> None:
    """Print a rich renderable without the padding rich leaves at the end of lines."""
    out = _console()
    with out.capture() as captured:
        out.print(renderable)
    sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


# --- the group ---------------------------------------------------------------------------


@click.group("card")
def card() -> None:
    """Task cards: create, list, show, update, activate; dependencies and their graph.

    Cards are .cuedeck/cards/<id>.md files. IDs may be shortened to any unique prefix.
    """


@card.command("new")
@click.argument("title")
@click.option("-p", "--priority", type=click.Choice(PRIORITY_CHOICES), help="Priority.")
@click.option("-t", "--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("-a", "--assignee", help="Who works on it.")
@click.option("-d", "--depends-on", "depends_on", multiple=True, help="A card it waits for.")
@click.option("--body", help="Markdown added under the title heading.")
@json_option
def new(
    title: str,
    priority: str | None,
    tags: tuple[str, ...],
    assignee: str | None,
    depends_on: tuple[str, ...],
    body: str | None,
    as_json: bool,
) -> None:
    """Create a card and print its id."""
    store = _store()
    reply = _call(
        "create_task",
        title=title,
        priority=priority,
        assignee=assignee,
        tags=list(tags) or None,
        depends_on=[store.resolve(dep) for dep in depends_on] or None,
        body=body,
    )
    created = store.get(reply["id"])
    if as_json:
        _emit_json(created.to_record())
    else:
        click.echo(created.id)


@card.command("list")
@click.option(
    "-s", "--status", multiple=True, type=click.Choice(STATUS_CHOICES), help="Status (repeatable)."
)
@click.option(
    "-p",
    "--priority",
    multiple=True,
    type=click.Choice(PRIORITY_CHOICES),
    help="Priority (repeatable).",
)
@click.option("-a", "--assignee", help="Assignee (case-insensitive, leading @ ignored).")
@click.option("-t", "--tag", "tags", multiple=True, help="Cards with any of these tags.")
@click.option("--created", help="2024-01-01, >2024-01-01, <2w, >3d (units d, w, m, y).")
@click.option("--updated", help="Same forms as --created.")
@click.option(
    "--claimed/--unclaimed",
    default=None,
    help="Only cards an agent holds, or only cards nobody holds.",
)
@json_option
def list_cards(
    status: tuple[str, ...],
    priority: tuple[str, ...],
    assignee: str | None,
    tags: tuple[str, ...],
    created: str | None,
    updated: str | None,
    claimed: bool | None,
    as_json: bool,
) -> None:
    """List cards, filtered (filters combine); broken ones (conflict markers) say so."""
    summaries = _call(
        "list_tasks",
        status=list(status) or None,
        priority=list(priority) or None,
        assignee=assignee,
        tags=list(tags) or None,
        created=created,
        updated=updated,
        claimed=claimed,
    )
    from cuedeck_tasks.columns import print_cards, warn_problems

    store = _store()
    cards = [store.get(item["id"]) for item in summaries]
    held = {item["id"]: item["claim"] for item in summaries if item["claim"]}
    if as_json:
        _emit_json([{**c.to_record(), "claim": held.get(c.id)} for c in cards])
    else:
        print_cards(cards, empty="no cards match", holders=_holders(held))
    warn_problems(cards)  # a broken card read with defaults must not pass for a healthy one


def _holders(held: dict[str, Any]) -> dict[str, str]:
    """``agent`` by card, for the HELD BY column."""
    return {card: claim["agent"] for card, claim in held.items()}


def _held() -> dict[str, Any]:
    """The live claims by card, as JSON records (``{agent, since, until, paths}``)."""
    from cuedeck_tasks.claims import ClaimStore

    live = _workspace().service("claims", ClaimStore).live()
    return {card: claim.hold().to_record() for card, claim in live.items()}


@card.command("show")
@click.argument("card_id", metavar="ID")
@json_option
def show(card_id: str, as_json: bool) -> None:
    """Show a card: its fields, dependents and body (secrets masked)."""
    from cuedeck.markdown.frontmatter import body_start
    from cuedeck.text import split_lines

    store = _store()
    found = store.get(store.resolve(card_id))
    text = store.text(found.id)
    lines = split_lines(text)
    masking = _workspace().mask_session()  # one session: a secret keeps one number
    title = masking.mask(found.title, path=found.path)
    body = masking.mask("\n".join(lines[body_start(lines) :]).strip("\n"), path=found.path)
    dependents = store.graph().dependents(found.id)
    claim = _held().get(found.id)
    if as_json:
        _emit_json(
            {
                **found.to_record(),
                "title": title,
                "claim": claim,
                "dependents": dependents,
                "problems": list(found.problems),
                "body": body,
            }
        )
        return
    from rich.markup import escape

    table = _table("", "")
    table.show_header = False
    rows = [
        ("id", found.id),
        ("title", title),
        ("status", "broken (merge conflict)" if found.conflicted else found.status),
        ("priority", found.priority),
        ("assignee", found.assignee or "-"),
        ("tags", ", ".join(found.tags) or "-"),
        ("depends on", ", ".join(found.depends_on) or "-"),
        ("dependents", ", ".join(dependents) or "-"),
        ("created", found.created or "-"),
        ("updated", found.updated or "-"),
        ("path", found.path),
    ]
    if claim is not None:
        held_by = f"{claim['agent']} since {claim['since']}, until {claim['until']}"
        rows.insert(3, ("held by", held_by))
        if claim["paths"]:
            rows.insert(4, ("claimed paths", ", ".join(claim["paths"])))
    for name, value in rows:
        table.add_row(f"[bold]{name}[/]", escape(value))
    _print(table)
    from cuedeck_tasks.columns import warn_problems

    warn_problems([found])
    if body:
        click.echo()
        click.echo(body)


@card.command("update")
@click.argument("card_id", metavar="ID")
@click.option("-s", "--status", type=click.Choice(STATUS_CHOICES), help="New status.")
@click.option("-p", "--priority", type=click.Choice(PRIORITY_CHOICES), help="New priority.")
@click.option("-a", "--assignee", help='New assignee ("" unassigns).')
@click.option("--title", help="New title.")
@click.option("-n", "--note", help="Append a timestamped note to the ## Notes section.")
@click.option("-t", "--tag", "tags", multiple=True, help="Add a tag (repeatable).")
@click.option("--untag", multiple=True, help="Remove a tag (repeatable).")
@click.option("-d", "--depends-on", "depends_on", multiple=True, help="Add a dependency.")
@click.option("--no-depends-on", "no_depends_on", multiple=True, help="Remove a dependency.")
@click.option(
    "-r",
    "--ref",
    "refs",
    multiple=True,
    help="Add a reference (doc/NAME, code/PATH#Symbol, code/PATH#L10-L40); a code one "
    "is recorded, again if it is there already (repeatable).",
)
@click.option("--no-ref", "no_refs", multiple=True, help="Remove a reference (repeatable).")
@json_option
def update(
    card_id: str,
    status: str | None,
    priority: str | None,
    assignee: str | None,
    title: str | None,
    note: str | None,
    tags: tuple[str, ...],
    untag: tuple[str, ...],
    depends_on: tuple[str, ...],
    no_depends_on: tuple[str, ...],
    refs: tuple[str, ...],
    no_refs: tuple[str, ...],
    as_json: bool,
) -> None:
    """Change a card; only the named fields change, the rest of the file stays as it is."""
    store = _store()
    target = store.resolve(card_id)
    updates = {
        "title": title,
        "status": status,
        "priority": priority,
        "assignee": assignee,
        "notes": note,
        "add_tags": list(tags),
        "remove_tags": list(untag),
        "add_depends_on": [store.resolve(dep) for dep in depends_on],
        "remove_depends_on": [dep.strip().lower() for dep in no_depends_on],
        "add_refs": list(refs),
        "remove_refs": list(no_refs),
    }
    given = {field: value for field, value in updates.items() if value not in (None, [])}
    reply = _call("update_task", id=target, updates=given)
    fields, recorded = reply["updated_fields"], reply["recorded"]
    if as_json:
        _emit_json(
            {**store.get(target).to_record(), "updated_fields": fields, "recorded": recorded}
        )
        return
    if fields:
        click.echo(f"{target}: updated {', '.join(fields)}")
    elif not recorded:
        click.echo(f"{target}: nothing changed")
    for key in recorded:
        click.echo(f"{target}: recorded code/{key}")


@card.command("activate")
@click.argument("card_id", metavar="ID", required=False)
@click.option("--clear", is_flag=True, help="Clear the active card instead.")
@json_option
def activate(card_id: str | None, clear: bool, as_json: bool) -> None:
    """Make a card the active one (what `cue scene` packs); a todo card becomes active."""
    from cuedeck.state import set_active_card

    workspace = _workspace()
    if clear or card_id is None:
        if not clear:
            raise click.UsageError("give a card ID, or --clear")
        set_active_card(workspace.root, None)
        if as_json:
            _emit_json({"active_card": None})
        else:
            click.echo("no active card")
        return
    store = _store()
    found = store.activate(store.resolve(card_id))
    if as_json:
        _emit_json({"active_card": found.id, "card": found.to_record()})
    else:
        click.echo(f"active card: {found.id} {' '.join(found.title.split())}")


@card.command("deps")
@click.argument("card_id", metavar="ID")
@click.option("-r", "--reverse", is_flag=True, help="Cards that depend on it instead.")
@json_option
def deps(card_id: str, reverse: bool, as_json: bool) -> None:
    """The cards a card depends on (or, with --reverse, its dependents)."""
    from rich.markup import escape

    store = _store()
    report = _call("get_task_dependencies", id=store.resolve(card_id), reverse=reverse)
    if as_json:
        _emit_json(report)
        return
    if not report["tasks"]:
        what = "no card depends on" if reverse else "no dependencies for"
        click.echo(f"{what} {report['task_id']}", err=True)
        return
    table = _table("ID", "STATUS", "TITLE", wrap="TITLE")
    for task in report["tasks"]:
        table.add_row(task["id"], task["status"], escape(" ".join(task["title"].split())))
    _print(table)


@card.command("ready")
@click.option("--unclaimed", is_flag=True, help="Leave out the cards an agent holds.")
@json_option
def ready(unclaimed: bool, as_json: bool) -> None:
    """Todo and active cards whose dependencies are all done, most urgent first."""
    held = _held()
    cards = [c for c in _store().graph().ready() if not (unclaimed and c.id in held)]
    if as_json:
        _emit_json([{**c.to_record(), "claim": held.get(c.id)} for c in cards])
    else:
        from cuedeck_tasks.columns import print_cards

        print_cards(cards, empty="no card is ready", holders=_holders(held))


@card.command("validate")
@click.argument("card_id", metavar="[ID]", required=False)
@json_option
def validate(card_id: str | None, as_json: bool) -> None:
    """Check dependencies for cycles and missing cards; exit 1 when there are any."""
    store = _store()
    report = _call("validate_task_graph", id=store.resolve(card_id) if card_id else None)
    if as_json:
        _emit_json(report)
    else:
        from cuedeck_tasks.columns import warn_problems

        warn_problems(store.all().values() if card_id is None else [store.get(report["task_id"])])
        if report["valid"]:
            click.echo(report["message"])
        else:
            cycles = report.get("cycles") or (
                [report["cycle_path"]] if "cycle_path" in report else []
            )
            for cycle in cycles:
                click.secho(
                    f"error[1002]: circular dependency: {' → '.join(cycle)}", err=True, fg="red"
                )
            for item in report.get("missing", []):
                click.secho(
                    f"error[1001]: {item['card']} depends on {item['depends_on']}, "
                    "which does not exist",
                    err=True,
                    fg="red",
                )
    if not report["valid"]:
        click.get_current_context().exit(1)


@card.command("graph")
@click.option(
    "-f", "--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="mermaid", show_default=True
)
def graph(fmt: str) -> None:
    """Print the dependency graph (arrows go from a dependency to the card waiting for it)."""
    sys.stdout.write(_store().graph().export(fmt))


# --- cue open ----------------------------------------------------------------------------


@click.command("open")
@click.argument("query", nargs=-1)
@click.option("--print", "print_only", is_flag=True, help="Print path:line instead of opening.")
def open_command(query: tuple[str, ...], print_only: bool) -> None:
    """Fuzzy-find a card, doc or heading and open it in $EDITOR.

    Type to filter, arrows to move, Enter to open (at the heading's line), Esc to quit.
    Without a terminal, prints a numbered list and reads the choice from stdin; with
    --print and no terminal, prints the best match's path:line (for scripts and agents).
    """
    from cuedeck.errors import FileNotFound, InvalidInput
    from cuedeck_tasks.finder import (
        Entry,
        entries_of,
        numbered_choice,
        open_in_editor,
        pick,
        rank,
    )

    workspace = _workspace()
    text = " ".join(query)
    entries = entries_of(workspace.documents)
    best = rank(entries, text, limit=1)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if print_only and not interactive:
        if not best:
            raise InvalidInput(f"nothing in the workspace matches {text!r}", field="query")
        path = workspace.root / best[0].path
        click.echo(f"{path}:{best[0].line or 1}")  # a whole file opens at its first line
        return
    if text and not best:
        raise FileNotFound(f"nothing in the workspace matches {text!r}", query=text)
    chosen: Entry | None
    if interactive:
        chosen = pick(entries, text)
    else:
        chosen = numbered_choice(entries, text, stdin=sys.stdin, out=sys.stdout)
    if chosen is None:
        return
    path = workspace.root / chosen.path
    if print_only:
        click.echo(f"{path}:{chosen.line or 1}")
        return
    open_in_editor(path, chosen.line)


def _add_claim_commands() -> None:
    from cuedeck_tasks.claim_commands import COMMANDS
    from cuedeck_tasks.merge_driver import merge_driver

    for command in (*COMMANDS, merge_driver):
        card.add_command(command)


_add_claim_commands()
