"""One test per hook of the plugin contract, each through a real plugin object."""

from __future__ import annotations

import hashlib
from typing import Any

import attrs
import click
import pytest
from click.testing import CliRunner

from cuedeck import hookimpl, open_workspace
from cuedeck.errors import CueError, InvalidInput, MissingExtra
from cuedeck.index.parsers import ParseContext, SkipFile
from cuedeck.layout import CORE_PLACES, protection
from cuedeck.masking.spans import SecretSpan
from cuedeck.models import Document, Heading, Placement, SceneItem, SearchFilters, SearchResult
from cuedeck.plugins.host import (
    get_maskers,
    get_places,
    get_searchers,
    get_token_counters,
    make_plugin_host,
)
from cuedeck.scene.pruners import get_pruners
from cuedeck.settings import setting
from cuedeck_cli.app import make_cli
from cuedeck_cli.context import pass_workspace
from tests.conftest import MakeWorkspace


class TitleSearcher:
    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace

    def search(
        self, query: str, *, limit: int | None, filters: SearchFilters
    ) -> list[SearchResult]:
        return [
            SearchResult(path=d.path, title=d.title, hash=d.sha256, tokens=d.tokens, score=1.0)
            for d in self.workspace.documents.values()
            if query.lower() in d.title.lower() and filters.accepts(d.frontmatter)
        ][: limit or 10]


class FirstOnly:
    def prune(self, items: Any, budget: int, count: Any) -> list[Placement]:
        return [
            Placement(item, "whole" if n == 0 else "dropped", item.text if n == 0 else "", 0)
            for n, item in enumerate(items)
        ]


class AcmeMasker:
    def find_secrets(self, text: str) -> list[SecretSpan]:
        start = text.find("acme_")
        return [] if start < 0 else [SecretSpan(start, start + 15, "acme-key")]


class WordCounter:
    name = "words"
    exact = False

    def count(self, text: str) -> int:
        return len(text.split())


def parse_ini(path: str, data: bytes, context: ParseContext) -> Document:
    """``[section]`` lines are headings; a file starting with ``; generated`` is skipped."""
    text = data.decode("utf-8")
    if text.startswith("; generated"):
        raise SkipFile("generated", "says it is generated")
    if text.startswith("; broken"):
        raise ValueError("cannot read this one")
    lines = text.splitlines()
    starts = [(n, line.strip("[] ")) for n, line in enumerate(lines, 1) if line.startswith("[")]
    ends = [n - 1 for n, _ in starts[1:]] + [len(lines)]
    headings = tuple(
        Heading(level=1, text=name, slug=name.lower(), line=n, end_line=end)
        for (n, name), end in zip(starts, ends, strict=True)
    )
    return Document(
        path=path,
        kind="file",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        line_count=len(lines),
        tokens=context.count_tokens(text),
        title=path,
        headings=headings,
        language="ini",
    )


def shout(workspace: Any, text: str) -> str:
    """Upper-case a text."""
    return text.upper()


class Plugin:
    @hookimpl
    def register_searchers(self, register: Any) -> None:
        register("title", TitleSearcher)

    @hookimpl
    def register_pruners(self, register: Any) -> None:
        register("first-only", FirstOnly())

    @hookimpl
    def register_maskers(self, register: Any) -> None:
        register("acme", AcmeMasker())

    @hookimpl
    def register_token_counters(self, register: Any) -> None:
        register("words", WordCounter())

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(shout, category="text", read_only=True)

    @hookimpl
    def register_parsers(self, register: Any) -> None:
        register("ini", parse_ini, patterns=["*.ini", "config/*.cfg"])

    @hookimpl
    def register_services(self, register: Any) -> None:
        register("greeter", lambda workspace: f"hello from {workspace.root.name}")

    @hookimpl
    def register_commands(self, register: Any) -> None:
        @click.command("hello")
        @pass_workspace
        def hello(workspace: Any) -> None:
            """Say hello."""
            click.echo(f"hello {len(workspace.documents)} documents")

        register(hello)


@pytest.fixture
def plugins() -> Any:
    pm = make_plugin_host(entry_points=False)
    pm.register(Plugin(), name="test-plugin")
    return pm


FILES = {
    ".cuedeck/docs/api.md": "---\ntags: [api]\n---\n# HTTP API\nkey acme_0123456789 here\n",
    ".cuedeck/docs/ops.md": "# Operations\n",
}


def test_hook_register_searchers(make_workspace: MakeWorkspace, plugins: Any) -> None:
    workspace = open_workspace(make_workspace(FILES), plugins=plugins)
    assert "title" in get_searchers(plugins)
    results = workspace.search("api", mode="title")
    assert [r.path for r in results] == [".cuedeck/docs/api.md"]
    assert workspace.search("api", mode="title", filters=SearchFilters(tags=("ops",))) == []


@attrs.frozen
class TitleSettings:
    """``[titles]``: the title searcher's plugin."""

    mode: str = setting("title", "Default search mode.", names="register_searchers")


class TitleDefault:
    """Makes its searcher the default mode through a setting of its own section."""

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register("titles", TitleSettings)

    @hookimpl
    def register_searchers(self, register: Any) -> None:
        register("title-by-default", TitleSearcher, default_setting="titles.mode")


def test_the_default_search_mode_is_a_registered_setting(make_workspace: MakeWorkspace) -> None:
    host = make_plugin_host(entry_points=False)
    host.register(Plugin(), name="test-plugin")
    root = make_workspace(FILES)
    with pytest.raises(InvalidInput, match="no installed plugin names a default search mode"):
        open_workspace(root, plugins=host).search("api")  # "title" names no default
    host.register(TitleDefault(), name="titles")
    workspace = open_workspace(root, plugins=host)
    assert workspace.default_search_mode() == "title"
    assert [r.path for r in workspace.search("api")] == [".cuedeck/docs/api.md"]
    root = make_workspace(FILES, config='[titles]\nmode = "title-by-default"\n')
    assert open_workspace(root, plugins=host).default_search_mode() == "title-by-default"

    class Rival:
        @hookimpl
        def register_searchers(self, register: Any) -> None:
            register("rival", TitleSearcher, default_setting="scene.pruner")

    host.register(Rival(), name="rival")
    with pytest.raises(InvalidInput, match="several settings") as caught:
        open_workspace(root, plugins=host).search("api")
    assert "scene.pruner (rival)" in caught.value.message
    assert "titles.mode (titles)" in caught.value.message


def test_hook_register_pruners(plugins: Any) -> None:
    pruner = get_pruners(plugins)["first-only"]
    items = [SceneItem(f"d{n}.md", None, 50, 1, "text", 1, "0" * 64) for n in range(3)]
    modes = [p.mode for p in pruner.prune(items, 10, len)]
    assert modes == ["whole", "dropped", "dropped"]
    assert plugins.source_of("register_pruners", "first-only") == "test-plugin"


def test_hook_register_maskers(make_workspace: MakeWorkspace, plugins: Any) -> None:
    assert "acme" in get_maskers(plugins)
    workspace = open_workspace(make_workspace(FILES), plugins=plugins)
    masked = workspace.mask("key acme_0123456789 here")
    assert "acme_0123456789" not in masked
    assert "[REDACTED:acme-key#1]" in masked


def test_hook_register_token_counters(make_workspace: MakeWorkspace, plugins: Any) -> None:
    assert "words" in get_token_counters(plugins)
    root = make_workspace(FILES, config='[tokens]\ncounter = "words"\n')
    workspace = open_workspace(root, plugins=plugins)
    assert workspace.token_counter.name == "words"
    assert workspace.document(".cuedeck/docs/ops.md").tokens == 2


def test_hook_register_tools(make_workspace: MakeWorkspace, plugins: Any) -> None:
    tool = plugins.tools()["shout"]
    assert (tool.category, tool.read_only, tool.plugin) == ("text", True, "test-plugin")
    assert tool.summary == "Upper-case a text."
    workspace = open_workspace(make_workspace(FILES), plugins=plugins)
    assert tool.call(workspace, {"text": "hi"}) == "HI"


def test_hook_register_parsers(make_workspace: MakeWorkspace, plugins: Any) -> None:
    files = {
        **FILES,
        "setup.ini": "[server]\nport = 80\n\n[client]\nretries = 3\n",
        "config/app.cfg": "[app]\nname = x\n",
        "other/app.cfg": "[app]\n",  # the path pattern names config/ only
        "gen.ini": "; generated by a tool\n[x]\n",
        "bad.ini": "; broken\n",
    }
    workspace = open_workspace(make_workspace(files), plugins=plugins)
    stats = workspace.refresh()
    assert stats.parsed == 4  # two markdown docs, setup.ini and config/app.cfg
    document = workspace.document("setup.ini")
    assert document.language == "ini"
    assert [(h.text, h.line, h.end_line) for h in document.headings] == [
        ("server", 1, 3),
        ("client", 4, 5),
    ]
    assert workspace.document("config/app.cfg").anchors == ["app"]
    assert "other/app.cfg" not in workspace.index
    assert workspace.index.summary() == {
        "languages": {"ini": 2, "markdown": 2},
        "passed_over": {"generated": 1},
        # other/app.cfg: no parser; gen.ini: the parser's SkipFile; bad.ini: it raised
        "not_indexed": {"generated": 1, "no parser": 1, "parser failed": 1},
        "no_parser": {".cfg": 1},
        "folders_not_entered": {},
    }
    (problem,) = [p for p in workspace.index.left_out if p.path == "bad.ini"]
    assert (problem.code, problem.severity) == (1011, "warning")
    assert "parser 'ini' failed on it (ValueError: cannot read this one)" in problem.message
    # The skipped file is remembered: an unchanged one is not read again.
    again = open_workspace(workspace.root, plugins=plugins)
    assert again.refresh().parsed == 0
    assert again.index.passed_over == {"generated": ["gen.ini"]}
    assert [p.path for p in again.index.left_out] == ["bad.ini"]  # tried again, fails again


class CalcRevision:
    """The calc parser at a given revision (what a plugin says its output depends on)."""

    def __init__(self, revision: str) -> None:
        self.revision = revision

    @hookimpl
    def register_parsers(self, register: Any) -> None:
        register("calc", parse_calc, patterns=["*.calc"], revision=self.revision)


def test_a_parsers_new_revision_parses_its_files_again(make_workspace: MakeWorkspace) -> None:
    def host(revision: str) -> Any:
        pm = make_plugin_host(entry_points=False)
        pm.register(CalcRevision(revision), name="calc")
        return pm

    root = make_workspace({**FILES, "a.calc": "def a\n", "b.calc": "def b\n"})
    first = open_workspace(root, plugins=host("1"))
    assert first.refresh().parsed == 4
    key = first.index.parsers.key()
    assert open_workspace(root, plugins=host("1")).refresh().parsed == 0
    again = open_workspace(root, plugins=host("2"))
    assert again.refresh().parsed == 4  # the cache was made by another revision
    # Caches made from parsed documents (search's sections, the code graph) key on it.
    assert again.index.parsers.key() != key
    assert "calc=*.calc@calc#2" in again.index.parsers.fingerprint()


def test_a_parser_without_patterns_is_refused(make_workspace: MakeWorkspace) -> None:
    class NoPatterns:
        @hookimpl
        def register_parsers(self, register: Any) -> None:
            register("nothing", parse_ini)

    pm = make_plugin_host(entry_points=False)
    pm.register(NoPatterns(), name="no-patterns")
    with pytest.raises(InvalidInput, match="registered 'nothing' without patterns"):
        open_workspace(make_workspace(FILES), plugins=pm).refresh()


def test_hook_register_services(make_workspace: MakeWorkspace, plugins: Any) -> None:
    workspace = open_workspace(make_workspace(FILES), plugins=plugins)
    assert workspace.service("greeter") == f"hello from {workspace.root.name}"
    assert workspace.service("greeter", str) is workspace.service("greeter")  # typed
    assert not hasattr(workspace, "greeter")  # a service is asked for, not an attribute
    with pytest.raises(InvalidInput, match="the 'greeter' service is a str, not a int"):
        workspace.service("greeter", int)
    with pytest.raises(MissingExtra) as missing:
        workspace.service("nothing-registers-this")
    assert missing.value.help == 'pip install "cuedeck[all]"'


def test_hook_register_commands(make_workspace: MakeWorkspace, plugins: Any) -> None:
    root = make_workspace(FILES)
    result = CliRunner().invoke(make_cli(plugins), ["-C", str(root), "hello"])
    assert result.exit_code == 0, result.output
    assert result.output == "hello 2 documents\n"


class Checks:
    @hookimpl
    def register_checks(self, register: Any) -> None:
        from cuedeck.models import Problem

        def short_docs(workspace: Any) -> list[Problem]:
            return [
                Problem("warning", 1004, path, 1, "fewer than 3 words", "write more")
                for path, document in workspace.documents.items()
                if len(workspace.snapshot(path).text.split()) < 3
            ]

        def broken(workspace: Any) -> list[Any]:
            raise ZeroDivisionError("a bug in a check")

        register("short-docs", short_docs)
        register("broken", broken)


def test_hook_register_checks(make_workspace: MakeWorkspace) -> None:
    from cuedeck.doctor import diagnose

    pm = make_plugin_host(entry_points=False)
    pm.register(Checks(), name="checks")
    root = make_workspace(
        {"docs/long.md": "# Long\n\nplenty of words here\n", "docs/a.md": "# A\n"}
    )
    problems = diagnose(open_workspace(root, plugins=pm))
    found = {(p.code, p.path, p.message) for p in problems}
    assert (1004, "docs/a.md", "fewer than 3 words") in found
    assert not any(p.path == "docs/long.md" for p in problems)
    failed = [p for p in problems if p.code == 1000]
    assert [p.message for p in failed] == [
        "check 'broken' failed: ZeroDivisionError: a bug in a check"
    ]


class Notes:
    @hookimpl
    def register_scene_sources(self, register: Any) -> None:
        import hashlib

        from cuedeck.models import SceneExtra

        def notes(workspace: Any, card_id: str) -> list[SceneExtra]:
            data = (workspace.root / "notes.txt").read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            return [SceneExtra("notes.txt", f"Notes of {card_id}", data.decode(), digest)]

        register("notes", notes)


def test_hook_register_scene_sources(make_workspace: MakeWorkspace) -> None:
    from cuedeck.scene import build_scene

    pm = make_plugin_host(entry_points=False)
    pm.register(Notes(), name="notes")
    root = make_workspace(
        {
            ".cuedeck/cards/abc123.md": "---\nstatus: active\n---\n# Card\n\n@.cuedeck/docs/a.md\n",
            ".cuedeck/docs/a.md": "# A\n\nsee @.cuedeck/docs/b.md\n",
            ".cuedeck/docs/b.md": "# B\n\nindirect\n",
            "notes.txt": "remember the key "
            "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx\n",
        }
    )
    scene = build_scene(open_workspace(root, plugins=pm), "abc123")
    roles = [(c["path"], c["role"], c["priority"]) for c in scene.manifest["candidates"]]
    assert roles == [
        (".cuedeck/cards/abc123.md", "card", 100),
        (".cuedeck/docs/a.md", "direct", 50),
        ("notes.txt", "extra", 40),
        (".cuedeck/docs/b.md", "indirect", 25),
    ]
    assert "remember the key [REDACTED:" in scene.text
    assert "sk_live_4eC39" not in scene.text
    assert "notes.txt" in scene.manifest["inputs"]


@attrs.frozen
class NotesSettings:
    """``[notes]``: the notes of a card."""

    folder: str = setting("notes", "Where notes are kept, relative to the root.")
    max_notes: int = setting(50, "Notes listed per card.", minimum=1)
    pruner: str = setting("outline", "Pruner of the notes.", names="register_pruners")


class NotesPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register("notes", NotesSettings)


def test_hook_register_settings(
    make_workspace: MakeWorkspace, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import tomllib

    pm = make_plugin_host()  # cue's own commands are a plugin too
    pm.register(NotesPlugin(), name="notes-plugin")
    # cue init writes the section, commented out at its defaults, like core's.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert CliRunner().invoke(make_cli(pm), ["-C", str(fresh), "init"]).exit_code == 0
    template = (fresh / ".cuedeck" / "config.toml").read_text(encoding="utf-8")
    assert "# The notes of a card.\n# [notes]\n# Where notes are kept" in template
    assert "notes" not in tomllib.loads(template)  # every line commented out
    assert pm.source_of("register_settings", "notes") == "notes-plugin"

    # Values from the file and the environment, read typed.
    root = make_workspace(FILES, config='[notes]\nfolder = "memos"\n')
    monkeypatch.setenv("CUEDECK_NOTES_MAX_NOTES", "7")
    settings = open_workspace(root, plugins=pm).config.section("notes", NotesSettings)
    assert (settings.folder, settings.max_notes) == ("memos", 7)
    monkeypatch.delenv("CUEDECK_NOTES_MAX_NOTES")

    # Checked like core's: a bad value is 1004 at its line, an unknown key a warning,
    # a name nothing registered a doctor error.
    def doctor(config: str) -> list[tuple[int, int | None, str]]:
        root = make_workspace(FILES, config=config)
        result = CliRunner().invoke(make_cli(pm), ["-C", str(root), "doctor", "--json"])
        report = json.loads(result.output)
        return [(p["code"], p["line"], p["message"]) for p in report["problems"]]

    assert doctor("[scene]\n\n[notes]\nmax_notes = 0\n") == [
        (1004, 4, "config key 'notes.max_notes' has a bad value 0: must be at least 1")
    ]
    assert (1004, 2, "unknown config key 'notes.colour' (ignored)") in doctor(
        '[notes]\ncolour = "red"\n'
    )
    assert doctor('[notes]\npruner = "squeeze"\n')[0][:2] == (1004, 2)


class LargestSections:
    """Ranks every heading of the docs by its length: a code ranker of the contract."""

    @hookimpl
    def register_code_rankers(self, register: Any) -> None:
        from cuedeck.models import RankedSymbol

        class Ranker:
            def rank(self, workspace: Any, query: Any) -> list[RankedSymbol]:
                found = [
                    RankedSymbol(
                        path,
                        heading.slug,
                        "heading",
                        heading.line,
                        heading.end_line,
                        0,
                        float(heading.end_line - heading.line),
                        parts=(("size", float(heading.end_line - heading.line)),),
                    )
                    for path, document in workspace.documents.items()
                    if document.kind == "doc"
                    for heading in document.headings
                ]
                return sorted(found, key=lambda r: (-r.score, r.path))[: query.limit]

        register("sections", Ranker())


def test_hook_register_code_rankers(make_workspace: MakeWorkspace) -> None:
    from cuedeck.scene import build_scene

    pm = make_plugin_host(entry_points=False)
    pm.register(LargestSections(), name="sections")
    root = make_workspace(
        {
            ".cuedeck/cards/abc123.md": "---\nstatus: active\n---\n# Card\n\n@.cuedeck/docs/a.md\n",
            ".cuedeck/docs/a.md": "# A\n\nshort\n",
            ".cuedeck/docs/b.md": "# B\n\none\n\ntwo\n\nthree\n\n## B2\n\nfour\n",
        },
        config='[scene]\ncode_ranker = "sections"\ncode_share = 0.5\n',
    )
    scene = build_scene(open_workspace(root, plugins=pm), "abc123", 2000, record=False)
    related = [
        (c["path"], c["anchor"], c["role"], c["priority"], c["note"])
        for c in scene.manifest["candidates"]
        if c["role"] == "related"
    ]
    # b.md#b holds b2: one of them comes, and why.
    assert related == [(".cuedeck/docs/b.md", "b", "related", 22, "related: size 10.00")]
    # A name no plugin registers is a config error at its line.
    bad = make_workspace(
        {".cuedeck/cards/abc123.md": "---\nstatus: active\n---\n# C\n"},
        config='[scene]\ncode_ranker = "nope"\n',
    )
    with pytest.raises(InvalidInput) as caught:
        build_scene(open_workspace(bad, plugins=pm), "abc123", 2000, record=False)
    assert caught.value.data["field"] == "scene.code_ranker"


class Backup:
    """The files of ``backup/`` are the baseline ``backup``."""

    @hookimpl
    def resolve_baseline(self, workspace: Any, since: str) -> Any:
        from cuedeck.models import Baseline, BaselineFile

        if since != "backup":
            return None
        folder = workspace.root / "backup"
        files = {
            p.relative_to(folder).as_posix(): BaselineFile(p.read_text(encoding="utf-8"))
            for p in sorted(folder.rglob("*.md"))
        }
        return Baseline("the backup", files)


@attrs.define
class Asked:
    """Answers nothing; records what it was asked."""

    asked: list[str] = attrs.field(factory=list)

    @hookimpl
    def resolve_baseline(self, workspace: Any, since: str) -> None:
        self.asked.append(since)


def test_hook_resolve_baseline(make_workspace: MakeWorkspace) -> None:
    from cuedeck.refs.delta import UnknownBaseline
    from cuedeck.scene import build_scene

    pm = make_plugin_host(entry_points=False)
    asked = Asked()
    pm.register(asked, name="asked")  # registered first, so asked after the backup
    pm.register(Backup(), name="backup")
    root = make_workspace(
        {
            ".cuedeck/cards/abc123.md": "---\nstatus: active\n---\n# Card\n",
            "notes.md": "# Notes\n\none\ntwo\nthree\n",
            "backup/notes.md": "# Notes\n\none\n2\nthree\n",
        }
    )
    workspace = open_workspace(root, plugins=pm)
    scene = build_scene(workspace, "abc123", 2000, since="backup", record=False)
    (delta,) = [p for p in scene.placements if p.item.role == "delta"]
    assert (delta.item.path, delta.item.priority, delta.mode) == ("notes.md", 45, "delta")
    assert delta.text == (
        "@@ notes.md L2-L5: +1 -1\n"
        "     2 | \n"
        "     3 | one\n"
        "-    4 | 2\n"
        "+    4 | two\n"
        "     5 | three"
    )
    assert scene.manifest["since"] == "the backup"
    assert asked.asked == []  # one answer wins: the plugins after it are not asked
    with pytest.raises(UnknownBaseline) as caught:
        build_scene(workspace, "abc123", 2000, since="yesterday", record=False)
    assert caught.value.code == 1143
    assert caught.value.data["resolvers"] == ["backup", "asked"]
    assert asked.asked == ["yesterday"]


class NotesPlaces:
    @hookimpl
    def register_paths(self, register: Any) -> None:
        register("notes/", "control", gitignore=True)
        register("Notes.DB", "private")


def test_hook_register_paths(make_workspace: MakeWorkspace) -> None:
    pm = make_plugin_host(entry_points=False)
    pm.register(NotesPlaces(), name="notes")
    places = get_places(pm)
    assert places is get_places(pm), "built once per host"
    assert places.control == CORE_PLACES.control | {"notes"}
    assert places.private == CORE_PLACES.private | {"notes.db"}
    assert places.gitignore == (*CORE_PLACES.gitignore, ".cuedeck/notes/")
    root = make_workspace(
        {
            ".cuedeck/notes/today.md": "# Today\n",
            ".cuedeck/Notes.DB": "rows\n",
            "sub/.cuedeck/notes.db/x.md": "# Nested\n",
        }
    )
    workspace = open_workspace(root, plugins=pm)
    assert workspace.places == places
    assert workspace.relative_path(".cuedeck/notes/today.md") == ".cuedeck/notes/today.md"
    with pytest.raises(CueError) as caught:  # control: read, never written
        workspace.relative_path(".cuedeck/notes/today.md", write=True)
    assert caught.value.code == 1013 and caught.value.data["reason"] == "control"
    with pytest.raises(CueError) as caught:  # private: not even read, any case
        workspace.read_text(".cuedeck/notes.db")
    assert caught.value.data["reason"] == "private"
    assert "sub/.cuedeck/notes.db/x.md" not in workspace.documents  # nested: left out too
    # Core's own stay protected with no plugin loaded; the plugin's are then plain paths.
    assert protection(".cuedeck/.cache/index.sqlite3", write=False) == "private"
    assert protection(".cuedeck/notes.db", write=False) is None
    assert protection(".cuedeck/notes.db", write=False, places=places) == "private"


class BadPlace:
    @hookimpl
    def register_paths(self, register: Any) -> None:
        register("a/b", "private")


def test_a_place_that_is_not_one_entry_is_refused() -> None:
    pm = make_plugin_host(entry_points=False)
    pm.register(BadPlace(), name="bad")
    with pytest.raises(InvalidInput, match=r"plugin 'bad' registered 'a/b'"):
        get_places(pm)


class Processes:
    @hookimpl
    def register_processes(self, register: Any) -> None:
        from cuedeck.models import BackgroundProcess

        def indexers(workspace: Any) -> list[BackgroundProcess]:
            ends = f"when {len(workspace.documents)} documents are indexed"
            return [BackgroundProcess("indexer", 4242, 1_000.0, ends, "reads files", "x.log")]

        def broken(workspace: Any) -> list[Any]:
            raise ZeroDivisionError("a bug in a lister")

        register("indexer", indexers)
        register("broken", broken)


def test_hook_register_processes(
    make_workspace: MakeWorkspace, caplog: pytest.LogCaptureFixture
) -> None:
    from cuedeck.serving.background import background_processes, describe, process_json

    pm = make_plugin_host(entry_points=False)
    pm.register(Processes(), name="processes")
    workspace = open_workspace(make_workspace(FILES), plugins=pm)
    with caplog.at_level("WARNING", logger="cuedeck"):
        found = background_processes(workspace)  # core's watcher: none runs for this one
    assert [describe(p, now=1_180.0) for p in found] == [
        "indexer (pid 4242, 3 min old): ends when 2 documents are indexed; reads files"
    ]
    assert process_json(found[0], now=1_010.0) == {
        "kind": "indexer", "pid": 4242, "age_seconds": 10.0,
        "ends": "when 2 documents are indexed", "detail": "reads files", "log": "x.log",
    }  # fmt: skip
    assert "listing broken processes failed: ZeroDivisionError: a bug in a lister" in caplog.text


class IndexReports:
    @hookimpl
    def register_index_reports(self, register: Any) -> None:
        def tags(workspace: Any) -> dict[str, Any]:
            count = len(workspace.documents)
            return {"name": "tags", "ready": True, "summary": f"{count} tags", "details": {}}

        def broken(workspace: Any) -> None:
            raise ZeroDivisionError("a bug in a reporter")

        register("tags", tags)
        register("broken", broken)
        register("none here", lambda workspace: None)


def test_hook_register_index_reports(
    make_workspace: MakeWorkspace, caplog: pytest.LogCaptureFixture
) -> None:
    from cuedeck.serving.indexes import index_reports

    pm = make_plugin_host(entry_points=False)
    pm.register(IndexReports(), name="reports")
    workspace = open_workspace(make_workspace(FILES), plugins=pm)
    with caplog.at_level("WARNING", logger="cuedeck"):
        found = index_reports(workspace)
    # Core's document index first, then each plugin's by name; None is no index there.
    assert [(r["name"], r["summary"]) for r in found] == [
        ("documents", "2 files (markdown 2)"),
        ("tags", "2 tags"),
    ]
    assert found[0]["details"] == {"files": 2, "languages": {"markdown": 2}}
    assert "reporting broken's index failed: ZeroDivisionError: a bug in a reporter" in caplog.text


def parse_calc(path: str, data: bytes, context: ParseContext) -> Document:
    text = data.decode()
    return Document(
        path,
        "file",
        hashlib.sha256(data).hexdigest(),
        len(data),
        text.count("\n"),
        context.count_tokens(text),
        path,
        language="calc",
    )


class CalcExtractor:
    """A language the code graph did not know: ``def name`` defines, ``call name`` calls."""

    label = "syntactic"
    languages = frozenset({"calc"})

    def facts(self, path: str, data: bytes, paths: Any) -> dict[str, Any]:
        found: dict[str, Any] = {"ns": "calc:", "defs": [], "binds": [], "vars": [], "refs": []}
        owner = ""
        for number, line in enumerate(data.decode().splitlines(), start=1):
            word, _, name = line.strip().partition(" ")
            if word == "def":
                owner = name
                found["defs"].append([name, "function", number, number + 1, {}])
            elif word == "call":
                found["refs"].append(
                    [owner, owner, "reference", [[name, number, 9], ["()", number, 9]]]
                )
        return found


class CalcLanguage:
    @hookimpl
    def register_parsers(self, register: Any) -> None:
        register("calc", parse_calc, patterns=["*.calc"])

    @hookimpl
    def register_code_indexers(self, register: Any) -> None:
        register("calc-graph", CalcExtractor())


def test_hook_register_code_indexers(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("cuedeck_code")
    from cuedeck.plugins.host import get_code_indexers

    pm = make_plugin_host()  # the installed plugins (the code graph), and one language more
    pm.register(CalcLanguage(), name="calc")
    assert {"syntactic", "scip-python", "calc-graph"} <= set(get_code_indexers(pm))
    root = make_workspace({"a.calc": "def total\n    call add\n", "b.calc": "def add\n  x\n"})
    workspace = open_workspace(root, plugins=pm)
    found = workspace.plugins.tools()["scip_references"].call(workspace, {"symbol": "add"})
    assert [
        (r["file_path"], r["line"], r["relationship"], r["from_symbol"]) for r in found["results"]
    ] == [("a.calc", 2, "call", "a.calc/total()")]


class RefreshListener:
    def __init__(self) -> None:
        self.told: list[Any] = []

    @hookimpl
    def cuedeck_after_refresh(self, workspace: Any, refreshed: Any) -> None:
        self.told.append(refreshed)


class BrokenListener:
    @hookimpl
    def cuedeck_after_refresh(self, workspace: Any, refreshed: Any) -> None:
        raise RuntimeError("a listener's bug")


def test_hook_cuedeck_after_refresh(make_workspace: MakeWorkspace) -> None:
    """Told once per change of the index, after it, with the paths added or changed and
    those removed; everything on the first read; nothing when nothing changed; a failing
    listener is skipped and recorded, the others still told."""
    pm = make_plugin_host(entry_points=False)
    listener = RefreshListener()
    pm.register(BrokenListener(), name="broken")
    pm.register(listener, name="listener")
    root = make_workspace({"docs/a.md": "# A\n", "docs/b.md": "# B\n", "docs/c.md": "# C\n"})
    workspace = open_workspace(root, plugins=pm)
    workspace.refresh()
    (first,) = listener.told
    assert first.everything and not first.rebuilt
    workspace.refresh()
    assert len(listener.told) == 1  # nothing changed: nothing told
    (root / "docs" / "a.md").write_text("# A, edited\n")
    (root / "docs" / "new.md").write_text("# New\n")
    (root / "docs" / "b.md").unlink()
    workspace.refresh()
    walked = listener.told[-1]
    assert (walked.changed, walked.removed) == ({"docs/a.md", "docs/new.md"}, {"docs/b.md"})
    assert not walked.everything and walked.generation == workspace.index.generation
    (root / "docs" / "c.md").write_text("# C, edited\n")
    workspace.refresh_paths(["docs/c.md"])  # as a file watcher reports it
    assert listener.told[-1].changed == {"docs/c.md"}
    workspace.refresh(rebuild=True)
    assert listener.told[-1].everything and listener.told[-1].rebuilt
    assert "broken" in {failure.name for failure in pm.failures}
