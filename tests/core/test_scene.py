"""Scenes on real workspaces: resolution, order, anchors, cycles, budgets, formats, staleness."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from cuedeck import open_workspace
from cuedeck.errors import CycleDetected, FileNotFound, InvalidInput, StaleCache, TokenLimitExceeded
from cuedeck.scene import (
    Scene,
    build_scene,
    check_scene,
    read_recorded,
    scene_problems,
    write_scene,
)
from cuedeck.serving.reply import reply_size
from cuedeck.state import set_active_card
from cuedeck.workspace import Workspace
from tests.conftest import MakeWorkspace


def card(
    ident: str,
    body: str,
    *,
    status: str = "todo",
    updated: str = "2026-11-01T10:00:00Z",
    depends_on: str = "[]",
    refs: str = "",
) -> str:
    extra = f"refs:\n{refs}" if refs else ""
    return (
        f"---\nid: {ident}\ntitle: Card {ident}\nstatus: {status}\ndepends_on: {depends_on}\n"
        f"updated: '{updated}'\n{extra}---\n# Card {ident}\n\n{body}\n"
    )


def paragraph(topic: str, sentences: int) -> str:
    return " ".join(
        f"The {topic} rule number {n} keeps the service predictable." for n in range(sentences)
    )


API = f"""# HTTP API

Every endpoint speaks JSON.

## Login

POST /v1/login returns a token. {paragraph("login", 2)}

## Charges

{paragraph("charge", 8)}
"""

AUTH = """# Authentication

Passwords are hashed with argon2id.

## Sessions

Sessions last fifteen minutes. See @doc/storage for where they live.
"""

STORAGE = f"# Storage\n\n{paragraph('storage', 3)}\n"
STYLE = "---\ntitle: Style\nglobal: true\n---\n# Style\n\nWrite short functions.\n"


def project(**overrides: str) -> dict[str, str]:
    files = {
        ".cuedeck/cards/aaa111.md": card(
            "aaa111",
            "Build refresh tokens. Read @doc/auth#Sessions and @doc/api#Login first.",
            status="active",
            depends_on="[bbb222]",
        ),
        ".cuedeck/cards/bbb222.md": card("bbb222", "Sessions table. See @doc/api#Charges."),
        ".cuedeck/docs/api.md": API,
        ".cuedeck/docs/auth.md": AUTH,
        ".cuedeck/docs/storage.md": STORAGE,
        ".cuedeck/docs/style.md": STYLE,
        ".cuedeck/docs/unrelated.md": "# Unrelated\n\nNothing to see.\n",
    }
    files.update(overrides)
    return files


def build(root: Path, **kwargs: Any) -> Scene:
    return build_scene(open_workspace(root), **kwargs)


def keys(scene: Scene) -> list[tuple[str, int, str]]:
    return [
        (f"{c['path']}#{c['anchor']}" if c["anchor"] else c["path"], c["priority"], c["placed"])
        for c in scene.manifest["candidates"]
    ]


def test_order_anchors_depends_on_and_globals(make_workspace: MakeWorkspace) -> None:
    scene = build(make_workspace(project()))
    assert keys(scene) == [
        (".cuedeck/cards/aaa111.md", 100, "whole"),
        (".cuedeck/cards/bbb222.md", 50, "whole"),  # depends_on comes from the frontmatter
        (".cuedeck/docs/auth.md#sessions", 50, "section"),
        (".cuedeck/docs/api.md#login", 50, "section"),
        # Breadth first: bbb222 was found first, so its reference comes first.
        (".cuedeck/docs/api.md#charges", 25, "section"),
        (".cuedeck/docs/storage.md", 25, "whole"),
        (".cuedeck/docs/style.md", 10, "whole"),
    ]
    roles = [c["role"] for c in scene.manifest["candidates"]]
    assert roles == ["card", "direct", "direct", "direct", "indirect", "indirect", "global"]
    text = scene.text
    assert "Sessions last fifteen minutes" in text
    assert "Passwords are hashed" not in text  # only the Sessions section of auth.md
    assert "POST /v1/login" in text and "Every endpoint speaks JSON" not in text
    assert "Unrelated" not in text


def test_within_a_level_a_reference_comes_before_what_it_refers_to(
    make_workspace: MakeWorkspace,
) -> None:
    files = {
        ".cuedeck/cards/aaa111.md": card(
            "aaa111", "First @doc/later, then @doc/earlier.", status="active"
        ),
        ".cuedeck/docs/later.md": "# Later\n\nPlain.\n",
        ".cuedeck/docs/earlier.md": "# Earlier\n\nIt builds on @doc/later.\n",
    }
    scene = build(make_workspace(files))
    assert [k for k, _, _ in keys(scene)] == [
        ".cuedeck/cards/aaa111.md",
        ".cuedeck/docs/earlier.md",
        ".cuedeck/docs/later.md",
    ]


def test_a_file_referenced_whole_and_by_section_is_included_once(
    make_workspace: MakeWorkspace,
) -> None:
    files = project()
    files[".cuedeck/docs/storage.md"] = f"# Storage\n\n{paragraph('storage', 1)} See @doc/api.\n"
    scene = build(make_workspace(files))
    api = [k for k in keys(scene) if k[0].startswith(".cuedeck/docs/api.md")]
    # api.md#login is a direct reference; the whole file (via storage) takes its priority.
    assert api == [(".cuedeck/docs/api.md", 50, "whole")]
    assert scene.text.count("## Charges") == 1


def test_global_docs_from_config_and_frontmatter(make_workspace: MakeWorkspace) -> None:
    config = '[scene]\nglobal = [".cuedeck/docs/unrelated.md", "README.md#Setup"]\n'
    files = project(
        **{"README.md": "# Readme\n\nIntro.\n\n## Setup\n\nRun it.\n\n## Other\n\nNo.\n"}
    )
    scene = build(make_workspace(files, config=config))
    globals_ = [k for k in keys(scene) if k[1] == 10]
    assert globals_ == [
        (".cuedeck/docs/unrelated.md", 10, "whole"),
        ("README.md#setup", 10, "section"),
        (".cuedeck/docs/style.md", 10, "whole"),
    ]


def test_missing_global_doc_is_a_clear_error(make_workspace: MakeWorkspace) -> None:
    config = '[scene]\nglobal = [".cuedeck/docs/styel.md"]\n'
    with pytest.raises(FileNotFound) as caught:
        build(make_workspace(project(), config=config))
    assert caught.value.data["field"] == "scene.global"
    assert "style.md" in caught.value.data["suggestion"]


def test_see_also_links_are_followed_link_depth_hops_at_a_lower_priority(
    make_workspace: MakeWorkspace,
) -> None:
    files = {
        ".cuedeck/cards/aaa111.md": card("aaa111", "Read @guide.md.", status="active"),
        "guide.md": "# Guide\n\nSee [the appendix](appendix.md) and [[glossary]].\n",
        "appendix.md": "# Appendix\n\nBack to [the guide](guide.md); also [faq](faq.md).\n",
        "glossary.md": "# Glossary\n\nTerms, and [the guide](guide.md).\n",
        "faq.md": "# FAQ\n\nQuestions.\n",
    }
    default = keys(build(make_workspace(files)))
    assert default == [
        (".cuedeck/cards/aaa111.md", 100, "whole"),
        ("guide.md", 50, "whole"),
        ("appendix.md", 20, "whole"),
        ("glossary.md", 20, "whole"),
    ]
    deeper = keys(build(make_workspace(files, config="[scene]\nlink_depth = 2\n")))
    assert [k for k, _, _ in deeper] == [k for k, _, _ in default] + ["faq.md"]
    none = keys(build(make_workspace(files, config="[scene]\nlink_depth = 0\n")))
    assert [k for k, _, _ in none] == [".cuedeck/cards/aaa111.md", "guide.md"]


def test_cycle_fails_with_1002_and_the_path(make_workspace: MakeWorkspace) -> None:
    files = {
        ".cuedeck/cards/aaa111.md": card("aaa111", "Start at @doc/a.", status="active"),
        ".cuedeck/docs/a.md": "# A\n\nThen @doc/b.\n",
        ".cuedeck/docs/b.md": "# B\n\nBack to @card/aaa111.\n",
    }
    with pytest.raises(CycleDetected) as caught:
        build(make_workspace(files))
    error = caught.value
    assert error.code == 1002
    assert error.cycle_path[0] == error.cycle_path[-1]
    assert set(error.cycle_path) == {
        ".cuedeck/cards/aaa111.md",
        ".cuedeck/docs/a.md",
        ".cuedeck/docs/b.md",
    }
    assert " -> " in error.message


def test_cycle_fails_before_anything_is_written(make_workspace: MakeWorkspace) -> None:
    files = {
        ".cuedeck/cards/aaa111.md": card("aaa111", "Start at @doc/a.", status="active"),
        ".cuedeck/docs/a.md": "# A\n\nBack to @card/aaa111.\n",
    }
    root = make_workspace(files)
    with pytest.raises(CycleDetected):
        build(root)
    assert not (root / ".cuedeck" / "SCENE.md").exists()


# --- the active card -------------------------------------------------------------------


def test_card_given_then_activated_then_latest_active(make_workspace: MakeWorkspace) -> None:
    files = {
        ".cuedeck/cards/aaa111.md": card("aaa111", "Old.", status="active", updated="2026-01-01"),
        ".cuedeck/cards/bbb222.md": card(
            "bbb222", "New.", status="active", updated="2026-06-01T08:00:00Z"
        ),
        ".cuedeck/cards/ccc333.md": card("ccc333", "Todo.", updated="2026-12-01T00:00:00Z"),
    }
    root = make_workspace(files)
    assert build(root).card == "bbb222"
    assert build(root, card_id="aaa111").card == "aaa111"
    set_active_card(root, "ccc333")
    assert build(root).card == "ccc333"


def test_no_active_card_says_how_to_pick_one(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({".cuedeck/cards/aaa111.md": card("aaa111", "Todo.")})
    with pytest.raises(FileNotFound) as caught:
        build(root)
    assert "no active card" in caught.value.message
    assert "cue card activate" in (caught.value.help or "")


def test_unknown_and_malformed_card_ids(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(project())
    with pytest.raises(FileNotFound) as missing:
        build(root, card_id="aaa112")
    assert missing.value.data["suggestion"] == "Did you mean 'aaa111'?"
    with pytest.raises(InvalidInput) as bad:
        build(root, card_id="AAA-11")
    assert bad.value.data["field"] == "card_id"


def test_activated_card_that_was_deleted(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(project())
    set_active_card(root, "zzz999")
    with pytest.raises(FileNotFound) as caught:
        build(root)
    assert "zzz999" in caught.value.message


# --- budgets ---------------------------------------------------------------------------


def counted(root: Path, scene: Scene) -> int:
    return open_workspace(root).count_tokens(scene.text)


def smallest_budget(root: Path, **kwargs: Any) -> int:
    """What the card alone needs, as the 1003 error reports it."""
    with pytest.raises(TokenLimitExceeded) as caught:
        build(root, token_limit=1, **kwargs)
    return int(caught.value.data["current_size"])


@pytest.mark.slow
@pytest.mark.parametrize("pruner", ["greedy", "outline"])
@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_never_exceeds_the_budget(make_workspace: MakeWorkspace, pruner: str, fmt: str) -> None:
    root = make_workspace(project())
    full = build(root, format=fmt, pruner=pruner)
    floor = smallest_budget(root, format=fmt, pruner=pruner)
    modes: set[str] = set()
    for limit in range(floor, full.tokens + 30, 17):
        scene = build(root, format=fmt, pruner=pruner, token_limit=limit)
        assert counted(root, scene) == scene.tokens <= limit
        assert scene.manifest["token_limit"] == limit
        modes.update(c["placed"] for c in scene.manifest["candidates"])
    assert {"whole", "section", "dropped"} <= modes
    assert ("outline" in modes) == (pruner == "outline")


def test_exact_fit_and_one_token_over(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(project())
    limit = build(root, pruner="greedy").tokens
    # The header states the budget, so the scene's size moves a little with it.
    for _ in range(5):
        scene = build(root, pruner="greedy", token_limit=limit)
        if scene.tokens == limit:
            break
        limit = scene.tokens
    assert scene.tokens == limit and not scene.manifest["truncated"]
    tight = build(root, pruner="greedy", token_limit=limit - 1)
    assert tight.manifest["truncated"]
    assert counted(root, tight) <= limit - 1
    assert "> [!WARNING]\n> Context truncated" in tight.text


def test_the_card_alone_too_big_fails_with_1003(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(project())
    with pytest.raises(TokenLimitExceeded) as caught:
        build(root, token_limit=50)
    error = caught.value
    assert error.code == 1003
    assert error.data["limit"] == 50
    assert error.data["current_size"] > 50
    assert f"{error.data['current_size'] - 50} over" in error.message
    assert "token_limit" in error.data["action"]


def test_greedy_stops_at_the_first_document_that_does_not_fit(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(project())
    full = build(root, pruner="greedy")
    charges = next(c for c in full.manifest["candidates"] if c["anchor"] == "charges")
    scene = build(root, pruner="greedy", token_limit=full.tokens - charges["tokens"] // 2)
    placed = {k: p for k, _, p in keys(scene)}
    assert placed[".cuedeck/docs/api.md#charges"] == "dropped"
    # style.md is small and would fit, but greedy stopped at charges.
    assert placed[".cuedeck/docs/style.md"] == "dropped"
    reasons = [c["reason"] for c in scene.manifest["candidates"] if c["placed"] == "dropped"]
    assert reasons[-1] == "after the truncation at .cuedeck/docs/api.md#charges"


def test_outline_keeps_headings_and_first_paragraphs_before_dropping(
    make_workspace: MakeWorkspace,
) -> None:
    big = "# Storage\n\nWhere data lives.\n\n" + "\n\n".join(
        f"## Part {n}\n\nFirst words of part {n}.\n\n{paragraph(f'part {n}', 6)}" for n in range(6)
    )
    root = make_workspace(project(**{".cuedeck/docs/storage.md": big + "\n"}))
    full = build(root, pruner="outline")
    storage = next(c for c in full.manifest["candidates"] if c["path"].endswith("storage.md"))
    scene = build(root, pruner="outline", token_limit=full.tokens - storage["tokens"] // 2)
    placed = {k: p for k, _, p in keys(scene)}
    assert placed[".cuedeck/docs/storage.md"] == "outline"
    assert placed[".cuedeck/docs/style.md"] == "whole"  # later and small: still whole
    assert "## Part 5\nFirst words of part 5." in scene.text
    assert "rule number 3" not in scene.text.split("storage.md · outline")[1].split("## .")[0]
    reason = next(c["reason"] for c in scene.manifest["candidates"] if c["placed"] == "outline")
    assert str(reason).startswith("outline: the full text needs")


def test_same_input_same_bytes(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(project())
    for fmt in ("markdown", "xml", "json"):
        first = build(root, format=fmt, token_limit=900)
        second = build(root, format=fmt, token_limit=900)
        assert first.text == second.text
        assert first.manifest == second.manifest


# --- masking and formats ---------------------------------------------------------------

STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"


def test_secrets_are_masked_and_counted(make_workspace: MakeWorkspace) -> None:
    files = project(
        **{".cuedeck/docs/storage.md": f"# Storage\n\n    STRIPE_SECRET_KEY={STRIPE}\n"}
    )
    scene = build(make_workspace(files))
    assert STRIPE not in scene.text
    assert "STRIPE_SECRET_KEY=[REDACTED:stripe-secret-key#1]" in scene.text
    assert scene.manifest["secrets"] == {"stripe-secret-key": 1}
    assert "Secrets masked: stripe-secret-key 1" in scene.text


def test_xml_format_is_well_formed(make_workspace: MakeWorkspace) -> None:
    files = project(**{".cuedeck/docs/style.md": STYLE + "\nNever write ]]> or <tags> & so.\n"})
    scene = build(make_workspace(files), format="xml")
    root = ElementTree.fromstring(scene.text)
    assert root.tag == "scene" and root.get("card") == "aaa111"
    documents = root.findall("document")
    assert documents[0].get("path") == ".cuedeck/cards/aaa111.md"
    style = next(d for d in documents if d.get("path") == ".cuedeck/docs/style.md")
    assert "Never write ]]> or <tags> & so." in (style.text or "")
    assert len(root.find("manifest").findall("candidate")) == 7  # type: ignore[union-attr]


def test_json_format_has_documents_and_manifest(make_workspace: MakeWorkspace) -> None:
    scene = build(make_workspace(project()), format="json")
    value = json.loads(scene.text)
    assert value["scene"]["card"] == "aaa111"
    assert value["scene"]["used"] == scene.tokens
    assert value["documents"][0]["path"] == ".cuedeck/cards/aaa111.md"
    assert len(value["manifest"]["candidates"]) == 7


def test_manifest_records_every_input(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(project(), config="[scene]\ntoken_limit = 20000\n")
    scene = build(root)
    inputs = scene.manifest["inputs"]
    assert ".cuedeck/config.toml" in inputs
    assert ".cuedeck/docs/api.md" in inputs
    assert all(len(digest) == 64 for digest in inputs.values())
    workspace = open_workspace(root)
    assert read_recorded(workspace) is None  # nothing written yet
    write_scene(workspace, scene)
    recorded = read_recorded(workspace)
    assert recorded is not None
    assert recorded.inputs == inputs  # as data, full hashes: nothing parsed from the text
    assert recorded.card == scene.manifest["card_path"]


def test_a_scene_without_a_record_is_stale_not_a_crash(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(project())
    workspace = open_workspace(root)
    scene = build_scene(workspace)
    output = root / ".cuedeck" / "SCENE.md"
    output.write_text(scene.text.replace("# Scene", "# An older scene"), encoding="utf-8")
    with pytest.raises(StaleCache) as caught:
        check_scene(workspace, scene)
    assert "has no record of what it was built from" in caught.value.message
    write_scene(workspace, scene)
    check_scene(workspace, scene)
    output.write_text(scene.text + "edited by hand\n", encoding="utf-8")
    assert read_recorded(workspace) is None  # the record is of the text CueDeck wrote


# --- staleness -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_check_names_the_input_that_changed(make_workspace: MakeWorkspace, fmt: str) -> None:
    root = make_workspace(project(), config=f'[scene]\nformat = "{fmt}"\n')
    workspace = open_workspace(root)
    scene = build_scene(workspace)
    assert write_scene(workspace, scene) is True
    assert write_scene(workspace, scene) is False  # unchanged: not rewritten
    check_scene(open_workspace(root), build_scene(open_workspace(root)))
    assert scene_problems(open_workspace(root)) == []
    api = root / ".cuedeck" / "docs" / "api.md"
    api.write_text(API.replace("returns a token", "returns two tokens"), encoding="utf-8")
    fresh = open_workspace(root)
    with pytest.raises(StaleCache) as caught:
        check_scene(fresh, build_scene(fresh))
    assert caught.value.code == 1006
    assert ".cuedeck/docs/api.md changed" in caught.value.message
    assert caught.value.data["changed"] == [".cuedeck/docs/api.md"]
    [problem] = scene_problems(open_workspace(root))
    assert problem.code == 1006 and ".cuedeck/docs/api.md" in problem.message


def test_check_without_a_scene_file(make_workspace: MakeWorkspace) -> None:
    workspace = open_workspace(make_workspace(project()))
    with pytest.raises(StaleCache, match="does not exist"):
        check_scene(workspace, build_scene(workspace))


def test_check_notices_another_active_card(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(project())
    workspace = open_workspace(root)
    write_scene(workspace, build_scene(workspace))
    set_active_card(root, "bbb222")
    fresh = open_workspace(root)
    with pytest.raises(StaleCache, match=r"is for \.cuedeck/cards/aaa111\.md"):
        check_scene(fresh, build_scene(fresh))


# --- the tool --------------------------------------------------------------------------


def test_build_scene_tool(make_workspace: MakeWorkspace) -> None:
    workspace: Workspace = open_workspace(make_workspace(project()))
    tool = workspace.plugins.tools()["build_scene"]
    assert tool.read_only and tool.idempotent
    schema = tool.input_schema()
    assert set(schema["properties"]) == {
        *("card_id", "token_limit", "format", "since", "stack", "manifest")
    }
    reply = tool.call(workspace, {"card_id": "bbb222", "format": "xml", "token_limit": 900})
    assert reply["text"].startswith('<scene card="bbb222"')
    assert (reply["card"], reply["token_limit"]) == ("bbb222", 900)
    assert reply["tokens"] == workspace.count_tokens(reply["text"])
    assert "manifest" not in reply  # the scene's own manifest says it; JSON when asked
    assert reply_size(reply, workspace.count_tokens) <= 900  # the whole reply
    asked = tool.call(workspace, {"card_id": "bbb222", "token_limit": 900, "manifest": True})
    assert asked["manifest"]["card"] == "bbb222"
    assert asked["manifest"]["tokens"] == asked["tokens"]
    # The manifest comes beyond the budget: the scene is the one made without it.
    plain = tool.call(workspace, {"card_id": "bbb222", "token_limit": 900})
    assert asked["text"] == plain["text"] and "manifest" not in plain
    assert tool.output_schema() is not None
    with pytest.raises(InvalidInput) as caught:
        tool.call(workspace, {"card_id": "not a card"})
    assert caught.value.data["field"] == "card_id"
    with pytest.raises(InvalidInput):
        tool.call(workspace, {"token_limit": 0})
    assert not (workspace.root / ".cuedeck" / "SCENE.md").exists()


def test_dead_references_are_listed_in_the_manifest(make_workspace: MakeWorkspace) -> None:
    files = {
        ".cuedeck/cards/aaa111.md": card(
            "aaa111", "Read @doc/api#Logon and @doc/gone.", status="active"
        ),
        ".cuedeck/docs/api.md": "# API\n\n## Login\n\nPOST /login, see [[nowhere]].\n",
    }
    root = make_workspace(files)
    scene = build(root)
    missing = scene.manifest["missing"]
    assert [(m["path"], m["line"]) for m in missing] == [
        (".cuedeck/cards/aaa111.md", 10),
        (".cuedeck/cards/aaa111.md", 10),
    ]
    assert {m["message"].split("'")[1] for m in missing} == {"@doc/api#Logon", "@doc/gone"}
    assert "Missing (references that lead nowhere" in scene.text
    assert "- `.cuedeck/cards/aaa111.md:10` reference '@doc/gone'" in scene.text
    xml = build(root, format="xml").text
    assert '<missing path=".cuedeck/cards/aaa111.md" line="10">' in xml
    as_json = json.loads(build(root, format="json").text)
    assert len(as_json["manifest"]["missing"]) == 2
