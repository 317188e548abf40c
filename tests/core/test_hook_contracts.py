"""The hook contract, end to end: a plugin's pruner in a real scene, a pruner that breaks
its contract, and hook implementations that raise."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest

from cuedeck import hookimpl, open_workspace
from cuedeck.errors import CueError
from cuedeck.models import Placement
from cuedeck.plugins.host import get_maskers, make_plugin_host
from cuedeck.scene import build_scene
from cuedeck.scene.pruners import outlines

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck.models import SceneItem
    from tests.conftest import MakeWorkspace

FILES = {
    ".cuedeck/cards/abc123.md": (
        "---\nid: abc123\ntitle: Login\nstatus: active\n---\n# Login\n\n"
        "Read [auth](../docs/auth.md) first.\n"
    ),
    ".cuedeck/docs/auth.md": (
        "# Auth\n\nSessions last a day and refresh silently.\n\n"
        "## Tokens\n\nBearer tokens, signed, fifteen minutes.\n\n"
        "## History\n\n" + "The first version kept sessions in memory. " * 200 + "\n"
    ),
}


class HeadingsOnly:
    """Keep the card; every other item as its headings alone."""

    def prune(
        self, items: Sequence[SceneItem], budget: int, count: Callable[[str], int]
    ) -> list[Placement]:
        card, *rest = items
        placements = [Placement(card, "whole", card.text, card.tokens)]
        for item in rest:
            headings = outlines(item.text)[1]
            placements.append(Placement(item, "outline", headings, count(headings), "headings"))
        return placements


class LosesItems:
    """Returns the card only, whatever it is given."""

    def prune(self, items: Sequence[SceneItem], budget: int, count: Any) -> list[Placement]:
        return [Placement(items[0], "whole", items[0].text, items[0].tokens)]


class IgnoresBudget:
    """Keeps everything whole and says it costs nothing."""

    def prune(self, items: Sequence[SceneItem], budget: int, count: Any) -> list[Placement]:
        return [Placement(item, "whole", item.text, 0) for item in items]


class PrunerPlugin:
    @hookimpl
    def register_pruners(self, register: Any) -> None:
        register("headings", HeadingsOnly())
        register("loses-items", LosesItems())
        register("ignores-budget", IgnoresBudget())


def _workspace(make_workspace: MakeWorkspace, config: str) -> Any:
    plugins = make_plugin_host(entry_points=False)
    plugins.register(PrunerPlugin(), name="pruner-plugin")
    return open_workspace(make_workspace(FILES, config=config), plugins=plugins)


def test_a_plugin_pruner_chosen_by_config_builds_the_scene(
    make_workspace: MakeWorkspace,
) -> None:
    workspace = _workspace(make_workspace, '[scene]\npruner = "headings"\n')
    scene = build_scene(workspace)
    assert scene.manifest["pruner"] == "headings"
    placed = {c["path"]: c["placed"] for c in scene.manifest["candidates"]}
    assert placed == {".cuedeck/cards/abc123.md": "whole", ".cuedeck/docs/auth.md": "outline"}
    assert "## Tokens" in scene.text
    assert "fifteen minutes" not in scene.text  # the body was left out, as the pruner chose


@pytest.mark.parametrize(
    ("pruner", "broken"),
    [
        ("loses-items", "returned 1 placements for 2 items"),
        ("ignores-budget", "over its budget of"),
    ],
)
def test_a_pruner_that_breaks_its_contract_is_a_clear_error(
    make_workspace: MakeWorkspace, pruner: str, broken: str
) -> None:
    workspace = _workspace(make_workspace, f'[scene]\npruner = "{pruner}"\n')
    # Room for the card and the scene's header, not for the whole doc as well.
    assert workspace.document(".cuedeck/docs/auth.md").tokens > 1000
    with pytest.raises(CueError, match=f"pruner '{pruner}' broke its contract") as caught:
        build_scene(workspace, token_limit=600)
    assert broken in str(caught.value)
    assert caught.value.data["pruner"] == pruner


class Exploding:
    @hookimpl
    def register_maskers(self, register: Any) -> None:
        raise RuntimeError("masker plugin exploded")

    @hookimpl
    def register_tools(self, register: Any) -> None:
        raise RuntimeError("tool plugin exploded")


def test_a_hook_implementation_that_raises_is_logged_and_skipped(
    make_workspace: MakeWorkspace, caplog: pytest.LogCaptureFixture
) -> None:
    plugins = make_plugin_host(entry_points=False)
    plugins.register(Exploding(), name="exploding")
    workspace = open_workspace(make_workspace(FILES), plugins=plugins)
    with caplog.at_level(logging.WARNING, logger="cuedeck"):
        assert set(get_maskers(plugins)) == {"builtin"}
        assert {"build_scene", "read_doc"} <= set(plugins.tools())
    assert "masker plugin exploded" in caplog.text
    assert "tool plugin exploded" in caplog.text
    failures = {(f.name, f.error) for f in plugins.failures}
    assert failures == {
        ("exploding", "RuntimeError: masker plugin exploded"),
        ("exploding", "RuntimeError: tool plugin exploded"),
    }
    # CueDeck keeps working: core's masker still masks, the scene still builds.
    token = "ghp_kNwpQ5mdlHsFzGlSOGWn7Xr7ZVFsIOwoiS94"
    assert token not in workspace.mask(f"token {token}")
    assert build_scene(workspace).manifest["card"] == "abc123"
