"""The ``build_scene`` tool: a scene as MCP clients and the Python API receive it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from cuedeck.layout import CARD_ID_PATTERN
from cuedeck.scene.build import build_scene

# Evaluated at run time: a tool's annotations build its schema.
from cuedeck.scene.shapes import Format, SceneReply  # noqa: TC001

if TYPE_CHECKING:
    import pydantic

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
        pydantic.Field(description="Default: [scene] token_limit", ge=1),
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
) -> SceneReply:
    """Build the scene: the active card and what it references, fitted to the token budget.

    Secrets are masked. Code it cites is labelled fresh, moved, drifted or orphaned; related
    code the card needs comes within [scene] code_share. The manifest lists every
    candidate with its priority, tokens and how it was placed (and why). It writes only
    the first record of a code reference; `cue scene` writes .cuedeck/SCENE.md.
    """
    from cuedeck.watch.reflects import reflects

    scene = build_scene(workspace, card_id, token_limit, format=format, since=since, stack=stack)
    return {"text": scene.text, "manifest": scene.manifest, "reflects": reflects(workspace)}
