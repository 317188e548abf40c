"""``cue search``: the same search as the Python API and ``read_context``, for people."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cuedeck.models import SearchResult


@click.command()
@click.argument("query")
@click.option(
    "--mode",
    type=click.Choice(["keyword", "semantic", "hybrid"]),
    default=None,
    help="Search algorithm (default: [search] mode, hybrid).",
)
@click.option("--limit", "-n", type=click.IntRange(1, 50), default=None, help="Results wanted.")
@click.option("--tag", "tags", multiple=True, help="Only files tagged T (repeat: any of them).")
@click.option("--priority", default=None, help="Only files of this priority (any case).")
@click.option("--assignee", default=None, help="Only files assigned to A (any case).")
@click.option(
    "--wait", is_flag=True, help="Embed what is not embedded yet first (semantic, hybrid)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def search(
    query: str,
    mode: str | None,
    limit: int | None,
    tags: tuple[str, ...],
    priority: str | None,
    assignee: str | None,
    wait: bool,
    as_json: bool,
) -> None:
    """Search docs, cards and markdown files: best files first, with the matching sections.

    Hybrid (the default) fuses keyword ranking (BM25, stemmed, headings and file names
    weighted) with semantic similarity (all-MiniLM-L6-v2, run locally). Sections not
    embedded yet are ranked by keyword alone (the coverage is printed): `cue index
    --semantic` embeds them once, `--wait` first, and the MCP server in the background.
    """
    from cuedeck.models import SearchFilters

    workspace = click.get_current_context().obj.workspace
    filters = SearchFilters(tags=tags, priority=priority, assignee=assignee)
    chosen = mode or workspace.config.search.mode
    if chosen != "keyword":
        engine = workspace.service("search")
        engine.background = False  # this process ends with the answer: no thread
        if wait:
            engine.embed_all()
    results = workspace.search(query, mode=mode, limit=limit, filters=filters)
    coverage = results[0].semantic_coverage if results else None
    if coverage is not None and coverage < 1:
        click.echo(
            f"semantic coverage {coverage:.0%}: sections not embedded yet were ranked by "
            "keyword; run `cue index --semantic` once (or search with --wait)",
            err=True,
        )
    if as_json:
        click.get_current_context().obj.emit_json(
            {
                "query": query,
                "mode": chosen,
                "semantic_coverage": coverage,
                "results": [_json(r) for r in results],
            }
        )
        return
    _print(query, chosen, results)


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
        "snippet": result.snippet,
    }


def _print(query: str, mode: str, results: list[SearchResult]) -> None:
    """Results as lines: styled on a terminal, plain when piped (no rich to import)."""
    import sys

    if not sys.stdout.isatty():
        for line in _lines(query, mode, results, markup=False):
            click.echo(line)
        return
    out = click.get_current_context().obj.console()  # the CLI's CommandContext
    for line in _lines(query, mode, results, markup=True):
        out.print(line)


def _lines(query: str, mode: str, results: list[SearchResult], *, markup: bool) -> list[str]:
    """The lines of a result list, with rich markup or without."""

    def quote(text: str) -> str:
        if not markup:
            return text
        from rich.markup import escape

        return escape(text)

    def styled(text: str, style: str) -> str:
        return f"[{style}]{text}[/]" if markup else text

    if not results:
        return [f"no results for {quote(query)!r} ({mode})"]
    lines: list[str] = []
    for rank, result in enumerate(results, start=1):
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
