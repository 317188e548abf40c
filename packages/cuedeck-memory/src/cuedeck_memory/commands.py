"""``cue memory ...``: context memory from the command line.

Every subcommand calls the registered tool (the code path MCP clients use) and takes
``--json``; ``--project`` defaults to the workspace's (``[memory] project``). Loaded by
``cue --help``, so only click is imported at module level.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, cast

import click

from cuedeck.text import counted

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace
    from cuedeck_memory.store import MemoryStore

json_option = click.option("--json", "as_json", is_flag=True, help="Print the reply as JSON.")
project_option = click.option(
    "-p", "--project", help="Project id (default: [memory] project, default)."
)
cursor_option = click.option("--cursor", help="next_cursor of the previous page.")
tokens_option = click.option("--max-tokens", type=int, help="Reply budget in tokens.")


def _store(workspace: Workspace) -> MemoryStore:
    return cast("MemoryStore", workspace.service("context"))


def _workspace() -> Workspace:
    workspace: Workspace = click.get_current_context().obj.workspace
    return workspace


def _project(project: str | None) -> str:
    """``--project``, else the workspace's project (``[memory] project``)."""
    return _store(_workspace()).project(project)


def _call(tool: str, **arguments: Any) -> Any:
    """Run the registered tool exactly as MCP clients do (validation and masking included)."""
    from cuedeck.serving.calls import serve

    workspace = _workspace()
    given = {name: value for name, value in arguments.items() if value is not None}
    if isinstance(given.get("project_id"), str):
        from cuedeck_memory.segments import check_project

        # Its message says what a project id may hold; the tool's names only a pattern.
        check_project(given["project_id"])
    return serve(workspace.plugins.tools()[tool], workspace, given)


def _emit(value: Any, as_json: bool, lines: list[str] | None = None) -> None:
    if as_json:
        click.get_current_context().obj.emit_json(value)  # the CLI's CommandContext
    else:
        click.echo("\n".join(lines) if lines is not None else json.dumps(value, indent=2))


def _segment_line(item: dict[str, Any]) -> str:
    text = " ".join(item["text"].split())
    if item.get("text_truncated"):
        # Cut to fit the reply's budget: say so, and where the whole text is.
        text = f"{text[:50]}... (cut to fit: cue memory show {item['segment_id']})"
    pin = "*" if item["pinned"] else " "
    return f"{item['segment_id']} {pin} {item['type']:<8} {item['tokens']:>6}  {text[:90]}"


def _page_note(page: dict[str, Any]) -> list[str]:
    if page.get("next_cursor"):
        return [
            f"... {page['total'] - page['offset'] - page['returned']} more: "
            f"--cursor {page['next_cursor']}"
        ]
    return []


@click.group()
def memory() -> None:
    """Context memory: capture segments, watch usage, collect garbage, stash, snapshot.

    Segments live in .cuedeck/memory/memory.sqlite3; export and import give them as
    plain files (docs/memory.md).
    """


@memory.command()
@project_option
@click.option("--task", "task_id", help="Task id (default: the current task).")
@click.option("--token-limit", type=int, help="Context window (default [memory] token_limit).")
@json_option
def status(
    project: str | None, task_id: str | None, token_limit: int | None, as_json: bool
) -> None:
    """Usage, health and advice (context_analyze_usage)."""
    reply = _call(
        "context_analyze_usage", project_id=project, task_id=task_id, token_limit=token_limit
    )
    metrics, health = reply["usage_metrics"], reply["health_score"]
    lines = [
        f"project {reply['project_id']}, task {reply['task_id'] or '-'}",
        f"{metrics['total_tokens']:,} of {metrics['token_limit']:,} tokens "
        f"({metrics['usage_percent']}%), {counted(metrics['total_segments'], 'working segment')}, "
        f"{metrics['pinned_segments_count']} pinned",
        f"health {health['score']} ({', '.join(f'{k} {v}' for k, v in health['factors'].items())})",
        *(r["message"] for r in reply["recommendations"]),
    ]
    _emit(reply, as_json, lines)


@memory.command("list")
@project_option
@click.option("--task", "task_id", help="Task id (default: the current task).")
@click.option("--all", "every", is_flag=True, help="Both tiers of the task (context).")
@tokens_option
@cursor_option
@json_option
def list_command(
    project: str | None,
    task_id: str | None,
    every: bool,
    max_tokens: int | None,
    cursor: str | None,
    as_json: bool,
) -> None:
    """The working set (context_get_working_set), or with --all the task's context."""
    tool = "context_get_task_context" if every else "context_get_working_set"
    reply = _call(tool, project_id=project, task_id=task_id, max_tokens=max_tokens, cursor=cursor)
    lines = [_segment_line(item) for item in reply["segments"]] + _page_note(reply["page"])
    _emit(reply, as_json, lines or ["no segments"])


@memory.command()
@click.argument("segment_id")
@project_option
@json_option
def show(segment_id: str, project: str | None, as_json: bool) -> None:
    """One segment, whole."""
    from cuedeck_memory.listing import segment_items

    store = _store(_workspace())
    item = dict(segment_items(store, [store.segment(_project(project), segment_id)])[0])
    meta = [f"{k}: {json.dumps(v)}" for k, v in item.items() if k != "text"]
    _emit(item, as_json, [*meta, "", str(item["text"])])


@memory.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@project_option
@click.option("-t", "--type", "kind", default="note", show_default=True, help="Segment type.")
@click.option("--task", "task_id", help="Task id (default: the current task).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--topic", "topic_id", help="Topic id.")
@click.option("--ref", "refs", multiple=True, help="A segment, card or doc it refers to.")
@click.option("--pin", is_flag=True, help="Pin what is captured.")
@json_option
def capture(
    files: tuple[str, ...],
    project: str | None,
    kind: str,
    task_id: str | None,
    tags: tuple[str, ...],
    topic_id: str | None,
    refs: tuple[str, ...],
    pin: bool,
    as_json: bool,
) -> None:
    """Capture text from stdin, or one segment per FILE (its path as file_path)."""
    sources: list[tuple[str, str | None]] = []
    if files:
        for name in files:
            with open(name, encoding="utf-8", errors="replace") as handle:
                sources.append((handle.read(), name))
    else:
        sources.append((sys.stdin.read(), None))
    segments = [
        {
            "text": text,
            "type": kind,
            "tags": list(tags),
            "topic_id": topic_id,
            "refs": list(refs),
            "pinned": pin,
            **({"file_path": path} if path else {}),
        }
        for text, path in sources
        if text.strip()
    ]
    if not segments:
        raise click.UsageError("nothing to capture: stdin and the files are empty")
    reply = _call("context_capture", project_id=project, segments=segments, task_id=task_id)
    lines = [*reply["segment_ids"], *(w["message"] for w in reply["warnings"])]
    _emit(reply, as_json, lines)


def _ids_command(name: str, tool: str, key: str, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("segment_ids", nargs=-1, required=True)
    @project_option
    @json_option
    def command(segment_ids: tuple[str, ...], project: str | None, as_json: bool) -> None:
        reply = _call(tool, project_id=project, segment_ids=list(segment_ids))
        lines = [f"{name}ned {i}" for i in reply[key]] + [
            f"error {e['segment_id']}: {e['message']}" for e in reply["errors"]
        ]
        _emit(reply, as_json, lines)

    return command


memory.add_command(_ids_command("pin", "context_gc_pin", "pinned_segments", "Pin segments."))
memory.add_command(
    _ids_command("unpin", "context_gc_unpin", "unpinned_segments", "Unpin segments.")
)


@memory.command()
@click.argument("query", required=False)
@project_option
@click.option("--filters", help="JSON filters: file_path, task_id, tags, type, created_*.")
@click.option("--ids", "segment_ids", multiple=True, help="Stash these segments instead.")
@json_option
def stash(
    query: str | None,
    project: str | None,
    filters: str | None,
    segment_ids: tuple[str, ...],
    as_json: bool,
) -> None:
    """Stash working segments by query and filters (context_stash), or by --ids."""
    if segment_ids:
        reply = _call(
            "context_gc_prune", project_id=project, segment_ids=list(segment_ids), action="stash"
        )
        reply = {"stashed_segments": reply["pruned_segments"], **reply}
    else:
        reply = _call("context_stash", project_id=project, query=query, filters=filters)
    _emit(reply, as_json, [f"stashed {counted(len(reply['stashed_segments']), 'segment')}"])


@memory.command()
@click.argument("query", required=False)
@project_option
@click.option("--filters", help="JSON filters: file_path, task_id, tags, type, created_*.")
@click.option("--move", is_flag=True, help="Move what is found back to the working set.")
@tokens_option
@cursor_option
@json_option
def retrieve(
    query: str | None,
    project: str | None,
    filters: str | None,
    move: bool,
    max_tokens: int | None,
    cursor: str | None,
    as_json: bool,
) -> None:
    """Search the stash (ranked), and with --move bring the hits back."""
    reply = _call(
        "context_retrieve_stashed",
        project_id=project,
        query=query,
        filters=filters,
        move_to_active=move,
        max_tokens=max_tokens,
        cursor=cursor,
    )
    lines = [_segment_line(i) for i in reply["retrieved_segments"]] + _page_note(reply["page"])
    _emit(reply, as_json, lines or ["nothing found"])


@memory.command()
@project_option
@click.option("--target", type=int, help="Tokens to free: plan for them.")
@click.option("--apply", is_flag=True, help="Stash the plan (or every candidate).")
@click.option("--task", "task_id", help="Task id (default: the current task).")
@json_option
def gc(
    project: str | None, target: int | None, apply: bool, task_id: str | None, as_json: bool
) -> None:
    """Pruning candidates, a plan with --target, stashed with --apply."""
    arguments: dict[str, Any] = {"project_id": project, "task_id": task_id, "target_tokens": target}
    reply = _call("context_gc_analyze", **arguments)
    plan = reply.get("pruning_plan")
    lines = [
        f"{c['segment_id']} {c['score']:.3f} {c['tokens']:>6}  {c['reason']}"
        for c in reply["pruning_candidates"][:50]
    ]
    if plan:
        lines.append(plan["reason"])
    if apply:
        # The plan is its first candidates_count candidates: read the pages that hold them.
        wanted = plan["candidates_count"] if plan else reply["total_candidates"]
        chosen = [c["segment_id"] for c in reply["pruning_candidates"]]
        cursor = reply["page"]["next_cursor"]
        while len(chosen) < wanted and cursor is not None:
            more = _call("context_gc_analyze", **arguments, cursor=cursor)
            chosen += [c["segment_id"] for c in more["pruning_candidates"]]
            cursor = more["page"]["next_cursor"]
        chosen = chosen[:wanted]
        applied: dict[str, Any] = {"pruned_segments": [], "tokens_freed": 0, "errors": []}
        for start in range(0, len(chosen), 10_000):
            done = _call(
                "context_gc_prune",
                project_id=project,
                segment_ids=chosen[start : start + 10_000],
                action="stash",
            )
            applied["pruned_segments"] += done["pruned_segments"]
            applied["tokens_freed"] += done["tokens_freed"]
            applied["errors"] += done["errors"]
            applied["action"] = done["action"]
        if chosen:
            reply["applied"] = applied
            lines.append(f"stashed {counted(len(applied['pruned_segments']), 'segment')}")
    _emit(reply, as_json, lines or ["no candidates"])


@memory.command()
@click.argument("name", required=False)
@project_option
@click.option("--task", "task_id", help="Task id (default: the current task).")
@click.option("--list", "listing", is_flag=True, help="List the project's snapshots instead.")
@json_option
def snapshot(
    name: str | None, project: str | None, task_id: str | None, listing: bool, as_json: bool
) -> None:
    """Snapshot the task (context_create_task_snapshot), or --list the snapshots."""
    if listing:
        from cuedeck_memory.task_state import list_snapshots

        found = list_snapshots(_store(_workspace()), _project(project))
        lines = [
            f"{s['snapshot_id']}  {s['name']}  {counted(s['segments_snapshot'], 'segment')}"
            for s in found
        ]
        _emit({"snapshots": found}, as_json, lines or ["no snapshots"])
        return
    reply = _call("context_create_task_snapshot", project_id=project, task_id=task_id, name=name)
    _emit(
        reply,
        as_json,
        [
            f"{reply['snapshot_id']} {reply['name']}: "
            f"{counted(reply['segments_snapshot'], 'segment')}"
        ],
    )


@memory.command()
@project_option
@click.option("--task", "task_id", help="Task id (default: the current task).")
@tokens_option
@json_option
def restore(
    project: str | None, task_id: str | None, max_tokens: int | None, as_json: bool
) -> None:
    """Pins, working set and latest snapshot, fitted to a budget (context_restore)."""
    reply = _call("context_restore", project_id=project, task_id=task_id, max_tokens=max_tokens)
    lines = [_segment_line(i) for i in reply["segments"]] + _page_note(reply["page"])
    _emit(reply, as_json, lines or ["nothing to restore"])


@memory.command()
@json_option
def projects(as_json: bool) -> None:
    """Projects with memory (context_list_projects)."""
    reply = _call("context_list_projects")
    _emit(reply, as_json, reply["projects"] or ["no projects"])


@memory.command("export")
@project_option
@json_option
def export_command(project: str | None, as_json: bool) -> None:
    """Write every segment as a plain file under .cuedeck/memory/export/<project>/."""
    from cuedeck_memory.archive import export_project

    workspace = _workspace()
    project_id = _project(project)
    folder = export_project(_store(workspace), project_id)
    where = folder.relative_to(workspace.root).as_posix()
    _emit({"project_id": project_id, "folder": where}, as_json, [f"exported to {where}"])


@memory.command("import")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@project_option
@json_option
def import_command(folder: str, project: str | None, as_json: bool) -> None:
    """Read segment files back (an export you edited): known ids are updated, new added."""
    from pathlib import Path

    from cuedeck.errors import InvalidInput
    from cuedeck_memory.archive import import_project

    workspace = _workspace()
    path = Path(folder).resolve()
    if not path.is_relative_to(workspace.root.resolve()):
        raise InvalidInput(f"{folder} is outside the workspace", field="folder")
    reply = import_project(_store(workspace), _project(project), path)
    lines = [
        f"updated {len(reply['updated'])} segments, added {len(reply['added'])}",  # type: ignore[arg-type]
        *(f"{p['path']}:{p['line']}: {p['message']}" for p in reply["problems"]),  # type: ignore[attr-defined]
    ]
    _emit(reply, as_json, lines)
