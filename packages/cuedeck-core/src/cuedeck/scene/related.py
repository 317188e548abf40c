"""Related code: what a registered code ranker says a card needs beyond what it cites.

:func:`card_query` turns a card into a :class:`~cuedeck.models.CodeQuery` (its title and
body, the code it includes, an error stack); :func:`code_ranker` is the ranker
``[scene] code_ranker`` names (None when no plugin registers one: no related code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.models import CodeQuery

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.hookspecs import CodeRanker
    from cuedeck.models import Document
    from cuedeck.workspace import Workspace


def card_text(workspace: Workspace, card: Document) -> str:
    """The card's title and body (no frontmatter) as they are on disk."""
    from cuedeck.text import split_lines

    lines = split_lines(workspace.snapshot(card.path).text)
    body = "\n".join(lines[card.body_line - 1 :]).strip()
    return f"{card.title}\n\n{body}" if card.title not in body.split("\n", 1)[0] else body


def card_query(
    workspace: Workspace,
    card: Document,
    *,
    cited: Iterable[tuple[str, str | None]] = (),
    stack: str = "",
    folder: str | None = None,
    limit: int = 50,
) -> CodeQuery:
    """What related code is ranked for: ``card``'s text, personalised on ``cited`` (the
    code the scene includes) and the card's own code references."""
    from cuedeck.refs.drift import code_references

    documents = workspace.documents
    wanted = list(cited)
    for reference in code_references(card):
        if reference.target in documents:
            wanted.append((reference.target, reference.anchor))
    code = [(p, a) for p, a in dict.fromkeys(wanted) if not documents[p].prose]
    return CodeQuery(
        text=card_text(workspace, card),
        cited=tuple(code),
        stack=stack,
        folder=folder,
        limit=limit,
    )


def code_ranker(workspace: Workspace) -> CodeRanker | None:
    """The code ranker ``[scene] code_ranker`` names; None when none is registered."""
    from cuedeck.plugins.host import get_code_rankers

    rankers = get_code_rankers(workspace.plugins)
    if not rankers:
        return None
    wanted = workspace.config.scene.code_ranker
    if wanted not in rankers:
        raise workspace.config.unavailable("scene.code_ranker", wanted, list(rankers))
    return rankers[wanted]
