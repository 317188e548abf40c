"""The reference graph: resolution of every syntax, dead references, section-level cycles."""

from __future__ import annotations

from cuedeck import open_workspace
from tests.conftest import MakeWorkspace

CARD = ".cuedeck/cards/abc123.md"


def test_every_syntax_resolves(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            CARD: (
                "---\nrefs: [doc/deploy]\ndepends_on: [def456]\n---\n# Card\n"
                "@src/notes.md and @doc/api#login and @card/def456\n"
                "[guide](../docs/guide.md#Setup) [[glossary]] [[api#Login]]\n"
            ),
            ".cuedeck/cards/def456.md": "# Other card\n",
            ".cuedeck/docs/api.md": "# API\n## Login\n",
            ".cuedeck/docs/guide.md": "# Guide\n## Setup\n",
            ".cuedeck/docs/deploy.md": "# Deploy\n",
            "src/notes.md": "# Notes\n",
            "handbook/glossary.md": "# Glossary\n",
        }
    )
    graph = open_workspace(root).graph
    assert graph.problems == []
    links = [(link.target, link.anchor, link.reference.kind) for link in graph.targets(CARD)]
    assert links == [
        (".cuedeck/docs/deploy.md", None, "frontmatter"),
        (".cuedeck/cards/def456.md", None, "depends_on"),
        ("src/notes.md", None, "at"),
        (".cuedeck/docs/api.md", "login", "at"),
        (".cuedeck/cards/def456.md", None, "at"),
    ]
    see_also = [(link.target, link.anchor, link.reference.kind) for link in graph.see_also(CARD)]
    assert see_also == [
        (".cuedeck/docs/guide.md", "Setup", "markdown"),
        ("handbook/glossary.md", None, "wiki"),
        (".cuedeck/docs/api.md", "Login", "wiki"),
    ]
    depths = graph.depths(CARD)
    assert depths[CARD] == 0
    assert depths[".cuedeck/docs/api.md#login"] == 1
    assert graph.referrers(".cuedeck/docs/api.md") == [CARD]


def test_dead_references_and_anchors_have_did_you_mean(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            CARD: "# Card\n\nSee @doc/apu and @doc/api#Logon and [[gloss]].\n",
            ".cuedeck/docs/api.md": "# API\n## Login\n## Logout\n",
            ".cuedeck/docs/glossary.md": "# Glossary\n",
        }
    )
    problems = {(p.line, p.message, p.help) for p in open_workspace(root).graph.problems}
    assert problems == {
        (
            3,
            "reference '@doc/apu' points at .cuedeck/docs/apu.md, which does not exist",
            "Did you mean '.cuedeck/docs/api.md'?",
        ),
        (
            3,
            "reference '@doc/api#Logon': .cuedeck/docs/api.md has no heading 'Logon'",
            "Did you mean 'Login'?",
        ),
        (
            3,
            "reference '[[gloss]]' points at gloss, which does not exist",
            "Did you mean 'glossary'?",
        ),
    }


def test_file_level_cycle_is_found(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            CARD: "# Card\n@doc/api\n",
            ".cuedeck/docs/api.md": "# API\nsee @doc/auth\n",
            ".cuedeck/docs/auth.md": "# Auth\nback to @card/abc123\n",
        }
    )
    graph = open_workspace(root).graph
    assert graph.find_cycle(CARD) == [
        CARD,
        ".cuedeck/docs/api.md",
        ".cuedeck/docs/auth.md",
        CARD,
    ]
    assert len(graph.cycles) == 1


def test_section_references_in_both_directions_are_not_a_cycle(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(
        {
            ".cuedeck/docs/api.md": "# API\n## Login\nSessions: [[auth#Sessions]]\n## Other\n",
            ".cuedeck/docs/auth.md": "# Auth\nLogin is @doc/api#Login\n## Sessions\ntext\n",
        }
    )
    graph = open_workspace(root).graph
    assert graph.cycles == []
    # From the whole auth file: auth -> api#login -> auth#sessions, which refers to nothing.
    assert graph.find_cycle(".cuedeck/docs/auth.md") is None


def test_section_cycle_is_found(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            ".cuedeck/docs/api.md": "# API\n## Login\nsee @doc/auth#Sessions\n",
            ".cuedeck/docs/auth.md": "# Auth\n## Sessions\nsee @doc/api#Login\n",
        }
    )
    graph = open_workspace(root).graph
    login, sessions = ".cuedeck/docs/api.md#login", ".cuedeck/docs/auth.md#sessions"
    assert graph.cycles == [[login, sessions, login]]


def test_markdown_and_wiki_links_never_make_a_cycle(make_workspace: MakeWorkspace) -> None:
    files = {
        "docs/a.md": "# A\n[b](b.md)\n",
        "docs/b.md": "# B\n[a](a.md) and [[c]]\n",
        ".cuedeck/docs/c.md": "# C\n[[a]] and [b](../../docs/b.md)\n",
    }
    graph = open_workspace(make_workspace(files)).graph
    assert graph.cycles == []
    assert graph.targets("docs/a.md") == []
    assert [link.target for link in graph.see_also("docs/a.md")] == ["docs/b.md"]
    assert graph.problems == []


def test_dead_project_links_are_still_reported(make_workspace: MakeWorkspace) -> None:
    graph = open_workspace(make_workspace({"docs/a.md": "# A\n[gone](gone.md)\n"})).graph
    assert [p.message for p in graph.problems] == [
        "reference '[gone](gone.md)' points at docs/gone.md, which does not exist"
    ]


def test_a_dead_reference_suggests_a_close_file_of_its_kind_only(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(
        {
            ".cuedeck/cards/abc123.md": "---\ntitle: Card\n---\n# Card\n",
            ".cuedeck/docs/notes.md": "# Notes\n\nSee @doc/nothing, @doc/sceme and @card/abc124.\n",
            ".cuedeck/docs/schema.md": "# Schema\n",
        }
    )
    problems = {p.message.split("'")[1]: p.help for p in open_workspace(root).graph.problems}
    assert problems == {
        "@doc/nothing": "create the file or fix the reference",  # no card, not notes.md itself
        "@doc/sceme": "Did you mean '.cuedeck/docs/schema.md'?",
        "@card/abc124": "Did you mean '.cuedeck/cards/abc123.md'?",
    }
