"""``repo_map`` and ``cue map``: the repository's most important definitions, as
signatures with their lines, fitted to a token budget.

What an agent reads first in a repository it has never seen. The definitions are
ranked by the workspace's code ranker (``[scene] code_ranker``, importance by default):
over the whole repository (the reference graph and recent changes), or personalised on
a card (its words and the code it cites) or a query. The map holds as many of the best
as fit the budget by the workspace's token counter, never more: files in the order of
their best definition, each definition on one line with its line range, nested under
the definition it belongs to.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput, MissingExtra, TokenLimitExceeded
from cuedeck.serving.reply import fit_reply
from cuedeck.watch.reflects import Reflects, reflects

if TYPE_CHECKING:
    import pydantic

    from cuedeck.masking.session import MaskSession
    from cuedeck.models import RankedSymbol
    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

#: Definitions ranked before the budget decides how many are shown.
RANKED = 2000
#: Longest signature shown, in characters.
SIGNATURE_CHARS = 160


class RepoMap(TypedDict):
    """What ``repo_map`` returns."""

    text: str
    tokens: int
    files: int
    symbols: int
    personalised_on: list[str]
    reflects: Reflects
    #: Definitions left out by rule, per reason: ``tests`` (unless the card or query asks
    #: for them, or the folder holds tests) and ``generated`` (generated files, data tables).
    left_out: dict[str, int]


def repo_map(
    workspace: Workspace,
    token_limit: Annotated[int, pydantic.Field(ge=64, le=200_000)] = 1024,
    folder: Annotated[str | None, pydantic.Field(max_length=1000)] = None,
    card_id: Annotated[
        str | None, pydantic.Field(description="Rank for this card", pattern=r"^[a-z0-9]{6}$")
    ] = None,
    query: Annotated[
        str | None, pydantic.Field(description="Rank for these words", max_length=1000)
    ] = None,
) -> RepoMap:
    """Map the repository: its most important definitions as signatures, within a budget.

    Ranked by the reference graph and recent changes, or for a card or a query; each
    line is a definition with its lines (an anchor for read_doc). Tests and generated
    files are left out (counted in left_out) unless the card or query asks for tests or
    the folder holds them. Nothing is written.
    """
    from cuedeck.models import CodeQuery, left_out_of
    from cuedeck.scene.related import card_query, code_ranker

    ranker = code_ranker(workspace)
    if ranker is None:
        raise MissingExtra.needs("no code ranker is installed", "code")
    scope = _folder(workspace, folder)
    reasons: list[str] = []
    code = CodeQuery(folder=scope, limit=RANKED)
    if card_id is not None:
        from cuedeck.scene import find_card

        card = find_card(workspace, card_id)
        code = card_query(workspace, card, folder=scope, limit=RANKED)
        reasons.append(f"card {card_id}")
    if query:
        code = CodeQuery(
            text=f"{code.text}\n\n{query}".strip(), cited=code.cited, folder=scope, limit=RANKED
        )
        reasons.append("query")
    ranked = ranker.rank(workspace, code)
    session = workspace.mask_session()
    header = _header(scope, reasons)

    state = reflects(workspace)

    def reply(budget: int) -> RepoMap:
        text, tokens, shown = fit_map(workspace, ranked, budget, header, session)
        return {
            "text": text,
            "tokens": tokens,
            "files": len({entry.path for entry in shown}),
            "symbols": len(shown),
            "personalised_on": reasons,
            "left_out": left_out_of(ranked),
            "reflects": state,
        }

    return fit_reply(workspace, token_limit, reply)


def _folder(workspace: Workspace, folder: str | None) -> str | None:
    if folder is None or folder.strip() in ("", ".", "./"):
        return None
    rel = workspace.relative_path(folder, field="folder").rstrip("/")
    prefix = rel + "/"
    if not any(path.startswith(prefix) for path in workspace.fresh_index().paths):
        raise InvalidInput(f"no indexed file under {rel}/", field="folder", path=rel)
    return rel


def _header(folder: str | None, reasons: list[str]) -> str:
    where = f"{folder}/" if folder else "the repository"
    why = (
        f", ranked for {' and '.join(reasons)}"
        if reasons
        else ", ranked by references and recent changes"
    )
    return f"# Map of {where}{why}"


def render(entries: list[RankedSymbol], header: str) -> str:
    """The map of ``entries`` (best first): files by their best entry, definitions by line."""
    files: dict[str, list[RankedSymbol]] = {}
    for entry in entries:
        files.setdefault(entry.path, []).append(entry)
    out = [header, ""]
    for path, found in files.items():
        out.append(f"{path}:")
        shown = {entry.name for entry in found}
        for entry in sorted(found, key=lambda e: (e.line, -e.end_line)):
            # A module is named by its file's stem, which may hold dots (jquery.min).
            parts = [entry.name] if entry.kind == "module" else entry.name.split(".")
            depth = len(parts)
            # A method shown without its class says whose it is: a line naming each
            # enclosing definition not shown (once, before its first member).
            for level in range(1, len(parts)):
                enclosing = ".".join(parts[:level])
                if enclosing not in shown:
                    shown.add(enclosing)
                    out.append(f"{'  ' * level}⋮ {parts[level - 1]}")
            span = (
                f"L{entry.line}-{entry.end_line}"
                if entry.end_line > entry.line
                else f"L{entry.line}"
            )
            out.append(f"{'  ' * depth}{span} {_signature(entry)}")
    return "\n".join(out) + "\n"


def _signature(entry: RankedSymbol) -> str:
    text = entry.signature or f"{entry.kind} {entry.name.rpartition('.')[2]}"
    if entry.kind == "module":
        text = f"module {posixpath.basename(entry.path)}"
    if len(text) > SIGNATURE_CHARS:
        text = text[: SIGNATURE_CHARS - 1] + "…"
    return text


def fit_map(
    workspace: Workspace,
    ranked: list[RankedSymbol],
    token_limit: int,
    header: str,
    session: MaskSession,
) -> tuple[str, int, list[RankedSymbol]]:
    """The largest map of the best ``ranked`` entries within ``token_limit`` tokens
    (masked, counted as written); TokenLimitExceeded when not even its header fits."""
    count = workspace.count_tokens

    def made(size: int) -> tuple[str, int]:
        text = session.mask(render(ranked[:size], header))
        return text, count(text)

    low_text, low_tokens = made(0)
    if low_tokens > token_limit:
        raise TokenLimitExceeded(
            f"a map needs at least {low_tokens} tokens; the budget is {token_limit}",
            current_size=low_tokens,
            limit=token_limit,
            action=f"ask for a token_limit of at least {low_tokens}",
        )
    low, high = 0, len(ranked) + 1
    best = (low_text, low_tokens, 0)
    while high - low > 1:
        middle = (low + high) // 2
        text, tokens = made(middle)
        if tokens <= token_limit:
            low, best = middle, (text, tokens, middle)
        else:
            high = middle
    return best[0], best[1], ranked[: best[2]]
