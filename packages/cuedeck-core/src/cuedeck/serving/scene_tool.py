"""The ``build_scene`` tool: a scene as MCP clients and the Python API receive it.

The whole reply fits ``token_limit`` (:func:`cuedeck.serving.calls.reply.fit_reply`): the
scene is fitted to what it costs inside the reply, not to its text alone. The JSON
manifest says nothing the scene's own manifest table does not say to a model, so it is
sent only when asked for, beyond the budget (a program such as the board asks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from cuedeck.layout import CARD_ID_PATTERN
from cuedeck.scene.build import build_scene, header_card_id

# Evaluated at run time: a tool's annotations build its schema.
from cuedeck.scene.shapes import Format, SceneReply  # noqa: TC001

if TYPE_CHECKING:
    import pydantic

    from cuedeck.scene.shapes import Scene
    from cuedeck.watch.reflects import Reflects
    from cuedeck.workspace import Workspace
else:
    # The tool's annotations name pydantic; ``cue --help`` imports this module without
    # ever evaluating them, so pydantic loads on first use.
    from cuedeck.plugins.tools import lazy_pydantic as pydantic


def build_scene_tool(
    workspace: Workspace,
    card_id: Annotated[
        str | None,
        pydantic.Field(
            description="Default: the active card",
            pattern=CARD_ID_PATTERN,
        ),
    ] = None,
    token_limit: Annotated[
        int | None,
        pydantic.Field(description="Budget of the whole reply; default [scene] token_limit", ge=1),
    ] = None,
    format: Annotated[
        Format | None,
        pydantic.Field(description="Default: [scene] format"),
    ] = None,
    since: Annotated[
        str | None,
        pydantic.Field(
            description="Git ref or snapshot id: add what changed since", max_length=256
        ),
    ] = None,
    stack: Annotated[
        str | None,
        pydantic.Field(description="A traceback or failing test output", max_length=200_000),
    ] = None,
    manifest: Annotated[
        bool, pydantic.Field(description="Add the JSON manifest, beyond token_limit")
    ] = False,
) -> SceneReply:
    """Build the scene: the active card and what it references, fitted to the token budget.

    The whole reply fits token_limit. Secrets are masked. Code it cites is labelled fresh,
    moved, drifted or orphaned; related code the card needs comes within [scene]
    code_share. The scene ends with its manifest: every candidate with its priority,
    tokens and how it was placed (and why). It writes only the first record of a code
    reference; `cue scene` writes .cuedeck/SCENE.md.
    """
    from cuedeck.scene.selection import find_card
    from cuedeck.serving.reply import fit_reply, reply_size
    from cuedeck.watch.reflects import reflects

    limit = token_limit or workspace.config.scene.token_limit
    card = header_card_id(find_card(workspace, card_id).path)
    built: list[Scene] = []
    state = reflects(workspace)

    def sent(text: str) -> int:
        tokens = workspace.count_tokens(text)
        return reply_size(
            scene_reply(text, card, tokens, limit, True, state), workspace.count_tokens
        )

    def make(budget: int) -> SceneReply:
        scene = build_scene(
            workspace, card, budget, format=format, since=since, stack=stack, measure=sent
        )
        built.append(scene)
        return scene_reply(
            scene.text, card, scene.tokens, limit, scene.manifest["truncated"], state
        )

    reply = fit_reply(workspace, limit, make)
    if manifest:
        reply["manifest"] = built[-1].manifest
    return reply


def scene_reply(
    text: str, card: str, tokens: int, limit: int, truncated: bool, state: Reflects
) -> SceneReply:
    """The reply of a scene: its text, card, tokens, the reply's budget, whether
    anything was outlined or dropped, and what its files reflect."""
    return {
        "text": text,
        "card": card,
        "tokens": tokens,
        "token_limit": limit,
        "truncated": truncated,
        "reflects": state,
    }
