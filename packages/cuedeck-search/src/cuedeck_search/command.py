"""``cue search``: the same search as the Python API and ``read_context``, for people.

Vectors without a flag: a semantic or hybrid search that finds sections without a
vector embeds them first, in the foreground with progress, when that should take under
:data:`~cuedeck_search.detached.FOREGROUND_SECONDS`; otherwise it starts the workspace's
detached embedder (one background process per workspace) and answers at once from the
vectors there are, saying which side answered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cuedeck.models import SearchResult
    from cuedeck_search.results import Answer


@click.command()
@click.argument("query")
@click.option(
    "--mode",
    type=click.Choice(["keyword", "semantic", "hybrid"]),
    default=None,
    help="Search algorithm (default: [search] mode, hybrid).",
)
# 100 is settings.MAX_LIMIT, not imported: cue --help loads this module (a test pins it).
@click.option("--limit", "-n", type=click.IntRange(1, 100), default=None, help="Results wanted.")
@click.option("--tag", "tags", multiple=True, help="Only files tagged T (repeat: any of them).")
@click.option("--priority", default=None, help="Only files of this priority (any case).")
@click.option("--assignee", default=None, help="Only files assigned to A (any case).")
@click.option("--kind", default=None, help="Only code definitions of this kind (method...).")
@click.option("--path", "glob", default=None, help="Only files matching this glob ('src/**').")
@click.option("--lang", "language", default=None, help="Only files of this language (python...).")
@click.option("--wait", is_flag=True, help="Embed everything not embedded yet first, however long.")
@click.option("--no-embed", is_flag=True, help="Answer from the vectors there are; embed nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def search(
    query: str,
    mode: str | None,
    limit: int | None,
    tags: tuple[str, ...],
    priority: str | None,
    assignee: str | None,
    kind: str | None,
    glob: str | None,
    language: str | None,
    wait: bool,
    no_embed: bool,
    as_json: bool,
) -> None:
    """Search docs, cards, markdown and code: best files first, with the matching sections.

    Hybrid (the default) fuses keyword ranking (BM25F, stemmed, headings and file names
    weighted) with semantic similarity (all-MiniLM-L6-v2, run locally). --kind, --path
    and --lang keep code of that kind of definition, path glob or language. Sections not
    embedded yet are embedded first when that takes a few seconds; otherwise a background
    process embeds them (`cue doctor` shows it) and the answer says which side ranked it.
    """
    from cuedeck.models import SearchFilters
    from cuedeck_search.settings import SearchSettings

    workspace = click.get_current_context().obj.workspace
    workspace.index.watch = True  # what changed, from the workspace's watcher: no walk
    filters = SearchFilters(
        tags=tags, priority=priority, assignee=assignee, language=language, path=glob, kind=kind
    )
    chosen = mode or workspace.config.section("search", SearchSettings).mode
    answer = _quick(workspace, query, chosen, limit, filters, counted=as_json)
    if answer is None:
        from cuedeck_search.searchers import answer as search

        started = None  # a bad [search] mode is reported at its config line
        if chosen in ("semantic", "hybrid"):
            engine = workspace.service("search")
            engine.background = False  # this process ends with the answer: no thread
            started = _embed_first(workspace, engine, wait=wait, embed=not no_embed)
        answer = search(workspace, query, mode=mode, limit=limit, filters=filters)
        note = _note(workspace, answer, started)
        if note:
            click.echo(note, err=True)
    if as_json:
        click.get_current_context().obj.emit_json(
            {
                "query": query,
                "mode": answer.mode,
                "answered_by": answer.answered_by,
                "semantic_coverage": answer.semantic_coverage,
                "results": [_json(r) for r in answer.results],
            }
        )
        return
    _print(query, answer)


def _quick(
    workspace: Any, query: str, mode: str, limit: int | None, filters: Any, *, counted: bool
) -> Answer | None:
    """A keyword answer without numpy (:mod:`cuedeck_search.quick`), when it can; exact
    token counts only when ``counted`` (printed lines do not show them)."""
    from cuedeck.models import SearchFilters

    if mode != "keyword" or filters != SearchFilters() or not query.strip():
        return None
    from cuedeck_search.quick import keyword_search
    from cuedeck_search.results import Answer
    from cuedeck_search.settings import SearchSettings

    found = keyword_search(
        workspace,
        query,
        limit or workspace.config.section("search", SearchSettings).limit,
        counted=counted,
    )
    if found is None:
        return None
    import attrs

    return Answer([attrs.evolve(r, answered_by="keyword") for r in found], mode, "keyword", None)


def _embed_first(workspace: Any, engine: Any, *, wait: bool, embed: bool) -> int | None:
    """Embed what is missing now when that is quick (or ``wait``); else start the
    detached embedder. The pid of a started embedder, else None."""
    from cuedeck_search import detached

    if not embed:
        return None
    if wait:
        engine.embed_all()
        return None
    if detached.running(workspace.root):
        return None  # already at work: answer from what there is
    missing = len(engine.missing_hashes())
    if not missing:
        return None
    if engine.estimate(missing).seconds <= detached.FOREGROUND_SECONDS:
        engine.embed_all()
        return None
    return detached.start(workspace.root)


def _note(workspace: Any, answer: Answer, started: int | None) -> str | None:
    """The stderr line saying what answered while coverage is partial."""
    from cuedeck_search import detached

    if not answer.missing:  # only the engine's answers miss vectors
        return None
    where = "by a background process"
    if started is not None:
        where += f" started now (pid {started})"
    elif not detached.running(workspace.root):
        where = "when you search without --no-embed (or run `cue index --semantic`)"
    estimate = workspace.service("search").estimate(answer.missing)
    return detached.embedding_note(answer, estimate, where=where) + (
        "; `cue doctor` shows its progress" if "background" in where else ""
    )


def _json(result: SearchResult) -> dict[str, Any]:
    return {
        "path": result.path,
        "title": result.title,
        "hash": result.hash,
        "tokens": result.tokens,
        "anchors": list(result.anchors),
        "line": result.line,
        "score": result.score,
        "keyword_score": result.keyword_score,
        "semantic_score": result.semantic_score,
        "semantic_coverage": result.semantic_coverage,
        "answered_by": result.answered_by,
        "snippet": result.snippet,
    }


def _print(query: str, answer: Answer) -> None:
    """Results as lines: styled on a terminal, plain when piped (no rich to import)."""
    import sys

    if not sys.stdout.isatty():
        for line in _lines(query, answer, markup=False):
            click.echo(line)
        return
    out = click.get_current_context().obj.console()  # the CLI's CommandContext
    for line in _lines(query, answer, markup=True):
        out.print(line)


def _lines(query: str, answer: Answer, *, markup: bool) -> list[str]:
    """The lines of a result list, with rich markup or without."""

    def quote(text: str) -> str:
        if not markup:
            return text
        from rich.markup import escape

        return escape(text)

    def styled(text: str, style: str) -> str:
        return f"[{style}]{text}[/]" if markup else text

    if not answer.results:
        return [f"no results for {quote(query)!r} ({answer.answered_by})"]
    lines: list[str] = []
    if answer.answered_by != answer.mode:
        lines.append(styled(f"answered by {answer.answered_by} (asked: {answer.mode})", "bold"))
    for rank, result in enumerate(answer.results, start=1):
        where = f"{result.path}:{result.line}" if result.line else result.path
        anchor = "  " + styled(f"§ {quote(result.anchors[0])}", "cyan") if result.anchors else ""
        detail = ""
        if result.keyword_score is not None and result.semantic_score is not None:
            parts = f"kw {result.keyword_score:.3f} + sem {result.semantic_score:.3f}"
            detail = " " + styled(f"({parts})", "dim")
        lines.append(
            f"{styled(f'{rank:>2}.', 'bold')} {styled(quote(where), 'green')}{anchor}  "
            f"{styled(f'{result.score:.3f}', 'yellow')}{detail}"
        )
        if result.snippet:
            lines.append("    " + styled(quote(result.snippet), "dim"))
    return lines
