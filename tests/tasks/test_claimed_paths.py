"""Files tied to a claim: other agents' file and git tools on them are refused with the
holder named (1501) unless forced, which is recorded; the scene of a claimed card names
the other cards on the same files."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from cuedeck.errors import InvalidInput
from cuedeck.plugins.claims import acting
from cuedeck.workspace import Workspace, open_workspace
from cuedeck.writes import sha256_bytes
from cuedeck_tasks.claims import ClaimStore
from cuedeck_tasks.errors import PathsClaimed
from tests.conftest import MakeWorkspace, needs
from tests.tasks.conftest import card_text


def call(workspace: Workspace, name: str, **arguments: Any) -> Any:
    return workspace.plugins.tools()[name].call(workspace, arguments)


@pytest.fixture
def shop(make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """Two cards and some code; ann claims k1k1k1 with src/cart.py and src/auth/."""
    root = make_workspace(
        {
            ".cuedeck/cards/k1k1k1.md": card_text("k1k1k1", "Cart totals"),
            ".cuedeck/cards/k2k2k2.md": card_text("k2k2k2", "Coupons"),
            ".cuedeck/cards/k3k3k3.md": card_text("k3k3k3", "Docs"),
            "src/cart.py": "def total(items):\n    return sum(items)\n",
            "src/auth/login.py": "def login():\n    pass\n",
            "src/free.py": "x = 1\n",
        }
    )
    workspace = open_workspace(root)
    call(workspace, "claim_task", id="k1k1k1", agent="ann", paths=["src/cart.py#total", "src/auth"])
    monkeypatch.setenv("CUEDECK_AGENT", "bob")  # the calls below are bob's
    return workspace


def _edit(workspace: Workspace, path: str, **more: Any) -> Any:
    data = (workspace.root / path).read_bytes()
    return call(
        workspace,
        "edit_file",
        file_path=path,
        old_string=data.decode().splitlines()[0],
        new_string="# edited\n" + data.decode().splitlines()[0],
        content_hash=sha256_bytes(data),
        **more,
    )


def test_an_edit_of_a_claimed_file_is_refused_naming_the_holder(shop: Workspace) -> None:
    before = (shop.root / "src/cart.py").read_bytes()
    with pytest.raises(PathsClaimed) as refused:
        _edit(shop, "src/cart.py")
    error = refused.value
    assert error.code == 1501
    assert "ann" in error.message and "k1k1k1" in error.message and "until" in error.message
    assert error.data["holders"][0]["agent"] == "ann"
    assert error.data["holders"][0]["card"] == "k1k1k1"
    assert error.data["holders"][0]["paths"] == ["src/cart.py#total"]
    assert error.data["agent"] == "bob" and error.data["tool"] == "edit_file"
    assert "force" in error.data["help"]
    assert (shop.root / "src/cart.py").read_bytes() == before


def test_force_writes_and_is_recorded(shop: Workspace) -> None:
    edited = _edit(shop, "src/cart.py", force=True)
    assert edited["success"]
    assert (shop.root / "src/cart.py").read_text().startswith("# edited")
    forced = shop.service("claims", ClaimStore).events()[-1]
    assert (forced.event, forced.agent, forced.previous, forced.card) == (
        "force",
        "bob",
        "ann",
        "k1k1k1",
    )
    assert "edit_file wrote src/cart.py" in (forced.detail or "")


def test_the_holder_and_free_files_are_not_refused(
    shop: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _edit(shop, "src/free.py")["success"]  # nobody claims it
    monkeypatch.setenv("CUEDECK_AGENT", "ann")
    assert _edit(shop, "src/cart.py")["success"]  # ann's own claim


def test_a_claimed_folder_holds_its_files_for_every_file_tool(shop: Workspace) -> None:
    with pytest.raises(PathsClaimed):
        _edit(shop, "src/auth/login.py")
    with pytest.raises(PathsClaimed):
        call(shop, "create_file", file_path="src/auth/new.py", content="y = 2\n")
    with pytest.raises(PathsClaimed):
        call(shop, "delete_file", file_path="src/auth/login.py")
    assert not (shop.root / "src/auth/new.py").exists()
    assert (shop.root / "src/auth/login.py").exists()


def test_a_link_to_a_claimed_file_is_refused_too(shop: Workspace) -> None:
    (shop.root / "src/alias.py").symlink_to("cart.py")
    with pytest.raises(PathsClaimed):
        _edit(shop, "src/alias.py")


@needs("cuedeck_git")
def test_git_tools_on_claimed_paths_are_refused(shop: Workspace) -> None:
    root = shop.root
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                 "commit", "-qm", "start"]):  # fmt: skip
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    (root / "src/cart.py").write_text("changed by ann\n")
    with pytest.raises(PathsClaimed):
        call(shop, "git_stage", file_paths=["src/cart.py"])
    with pytest.raises(PathsClaimed):  # no paths: every file, ann's included
        call(shop, "git_stage")
    with pytest.raises(PathsClaimed):
        call(shop, "git_checkout_file", file_path="src")
    staged = call(shop, "git_stage", file_paths=["src/free.py"])
    assert staged["success"]


def test_a_token_member_acts_as_itself_whatever_agent_it_names(shop: Workspace) -> None:
    with acting("ann", verified=True):  # as the MCP server does for a token named ann
        assert _edit(shop, "src/cart.py")["success"]
        with pytest.raises(InvalidInput) as refused:
            call(shop, "claim_task", id="k2k2k2", agent="bob")
        assert refused.value.data["field"] == "agent"
        taken = call(shop, "claim_task", id="k2k2k2")
    assert taken["agent"] == "ann"
    with acting("local", verified=False):  # no token: the name given counts
        assert call(shop, "claim_task", id="k3k3k3", agent="cid")["agent"] == "cid"


def test_the_scene_of_a_claimed_card_names_cards_on_the_same_files(shop: Workspace) -> None:
    call(shop, "claim_task", id="k2k2k2", agent="cid", paths=["src/cart.py#discount"])
    call(shop, "claim_task", id="k3k3k3", agent="dee", paths=["docs/"])
    from cuedeck.scene import build_scene

    scene = build_scene(shop, card_id="k2k2k2").text
    assert "Card k2k2k2 is held by cid" in scene
    assert "card k1k1k1, held by ann until" in scene and "src/cart.py#total" in scene
    assert "k3k3k3" not in scene.split("Other cards hold overlapping files")[1].split("\n\n")[0]
