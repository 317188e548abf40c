"""Golden rankings of code (issue 36): whole-file evidence, past changes' titles, tests
demoted (keyword and semantic), hybrid's weights on code and exact names, on real files.

The Python is Click's own source, as installed in this environment (copied into the
workspace); the tests beside it, the Go, Rust and TypeScript files and the queries are
written here.
Each ranking below was checked to change when its mechanism is turned off (the
``*_regress`` tests turn each off and see the ranking go).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("cuedeck_code")

import click

import cuedeck_search.code_files as code_files
from cuedeck import open_workspace
from cuedeck.workspace import Workspace

#: Queries about a change to Click and the file it would modify: whole-file evidence
#: puts these first (written here, in the manner of a change's title).
TITLES = [
    ("readline backspace and line wrapping on linux", "src/click/termui.py"),
    ("sentinel typing in the parser", "src/click/core.py"),
    ("fix readline line wrapping", "src/click/termui.py"),
]
#: Hybrid puts these first at the code weights, and not at the prose ones (0.7 semantic).
FUSED = [
    ("import shutil lazily", "src/click/_termui_impl.py"),
    ("help hint shows a shadowed option name", "src/click/exceptions.py"),
    ("sentinel typing in the parser", "src/click/core.py"),
    ("readline backspace and line wrapping on linux", "src/click/termui.py"),
]

CLICK_TESTS = '''\
"""Tests of prompts and confirmations (written for CueDeck's ranking tests)."""

import click
from click.testing import CliRunner


def test_confirm_strips_ansi_from_the_prompt():
    @click.command()
    def cli():
        click.confirm(click.style("Strip ANSI?", fg="red"))

    result = CliRunner().invoke(cli, input="y\\n")
    assert "\\x1b[" not in result.output  # confirm() strips ANSI


def test_prompt_strips_ansi_from_the_prompt():
    @click.command()
    def cli():
        click.prompt(click.style("Name", fg="green"))

    result = CliRunner().invoke(cli, input="x\\n")
    assert "\\x1b[" not in result.output  # prompt() strips ANSI


def test_confirm_and_prompt_strip_ansi_when_not_a_tty():
    runner = CliRunner()
    for ask in (click.confirm, click.prompt):
        assert runner.invoke(click.command()(lambda: ask("ANSI")), input="y\\n")
'''

GO_CLIENT = """\
// Package http sends requests.
package http

// Client sends requests and follows redirects.
type Client struct {
	Timeout int
}

// Do sends one request and returns its response, following redirects.
func (c *Client) Do(req *Request) (*Response, error) {
	return c.send(req, c.Timeout)
}

func (c *Client) send(req *Request, timeout int) (*Response, error) {
	return &Response{Status: 200}, nil
}
"""

GO_CLIENT_TEST = """\
package http

import "testing"

func TestClientDoFollowsRedirects(t *testing.T) {
	c := &Client{}
	for i := 0; i < 3; i++ {
		if _, err := c.Do(&Request{}); err != nil { // Client.Do follows redirects
			t.Fatal(err)
		}
	}
}

func TestClientDoTimeout(t *testing.T) {
	c := &Client{Timeout: 1}
	if _, err := c.Do(&Request{}); err != nil { // Client.Do with a timeout
		t.Fatal(err)
	}
}
"""

GO_TYPES = """\
package http

// Request is what a Client sends.
type Request struct{ URL string }

// Response is what a Client receives.
type Response struct{ Status int }
"""

RUST_PARSER = """\
//! Parsing command lines.

/// Parses arguments into matches.
pub struct Parser {
    args: Vec<String>,
}

impl Parser {
    /// Makes a parser over `args`.
    pub fn new(args: Vec<String>) -> Self {
        Parser { args }
    }

    /// Parses the arguments: flags first, then positionals.
    pub fn parse(&self) -> Vec<String> {
        self.args.iter().filter(|a| a.starts_with('-')).cloned().collect()
    }
}
"""

RUST_TESTS = """\
use crate::parser::Parser;

#[test]
fn parse_keeps_flags() {
    let parser = Parser::new(vec!["-v".into(), "file".into()]);
    assert_eq!(parser.parse(), vec!["-v".to_string()]); // Parser::parse keeps flags
    assert_eq!(parser.parse().len(), 1); // Parser::parse again
}
"""

TS_ROUTER = """\
/** Routes requests by path. */
export interface Route { path: string; handler: string }

/** Parses a URL into its path and query. */
export function parseURL(url: string): { path: string; query: string } {
  const [path, query = ""] = url.split("?");
  return { path, query };
}

export function route(routes: Route[], url: string): Route | undefined {
  const { path } = parseURL(url);
  return routes.find((r) => r.path === path);
}
"""

TS_SPEC = """\
import { parseURL } from "../src/router";

describe("parseURL", () => {
  it("splits the path and query", () => {
    expect(parseURL("/a?b=1")).toEqual({ path: "/a", query: "b=1" });
    expect(parseURL("/a")).toEqual({ path: "/a", query: "" }); // parseURL without a query
  });
});
"""


@pytest.fixture(scope="module")
def code_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Click's source, tests of it, and a Go, a Rust and a TypeScript module with tests."""
    root = tmp_path_factory.mktemp("code") / "ws"
    source = Path(click.__file__).parent
    shutil.copytree(source, root / "src" / "click", ignore=shutil.ignore_patterns("__pycache__"))
    files = {
        "tests/test_prompts.py": CLICK_TESTS,
        "net/http/client.go": GO_CLIENT,
        "net/http/client_test.go": GO_CLIENT_TEST,
        "net/http/types.go": GO_TYPES,
        "cli/src/parser.rs": RUST_PARSER,
        "cli/tests/parser.rs": RUST_TESTS,
        "web/src/router.ts": TS_ROUTER,
        "web/test/router.spec.ts": TS_SPEC,
        ".cuedeck/docs/overview.md": "# Overview\n\nThe command line toolkit and its clients.\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def first(workspace: Workspace, query: str, mode: str = "keyword") -> tuple[str, str]:
    """The first result's path and best anchor."""
    best = workspace.search(query, mode=mode, limit=5)[0]
    return best.path, best.anchors[0] if best.anchors else ""


# --- whole-file evidence and tests demoted ----------------------------------------------------


@pytest.mark.parametrize(("query", "path"), TITLES)
def test_a_change_title_finds_the_file_it_changed(code_root: Path, query: str, path: str) -> None:
    assert first(open_workspace(code_root), query)[0] == path


def test_without_whole_file_evidence_those_titles_miss(
    code_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(code_files, "FILE_EVIDENCE", 0.0)
    workspace = open_workspace(code_root)
    missed = [query for query, path in TITLES if first(workspace, query)[0] != path]
    assert missed  # evidence is what puts them first


def test_tests_rank_below_the_code_they_exercise(
    code_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = open_workspace(code_root)
    query = "confirm prompt strip ANSI"
    found = [r.path for r in workspace.search(query, mode="keyword", limit=10)]
    assert found[0] == "src/click/termui.py"
    assert "tests/test_prompts.py" not in found[:3]
    # Asked for tests, the test comes first; not demoted, it comes first too.
    assert first(workspace, query + " tests")[0] == "tests/test_prompts.py"
    monkeypatch.setattr(code_files, "TEST_FACTOR", 1.0)
    assert first(open_workspace(code_root), query)[0] == "tests/test_prompts.py"


#: Code the workspace indexes outside the project's source (written here): a vendored
#: copy of Click's prompts with a note of its own (``vendor/`` is not indexed by default,
#: ``_vendor/`` is), and a docs site's Sphinx config.
OUTSIDE = {
    "src/click/_vendor/termui.py": (
        '"""Vendored copy of click.termui: prompt, confirm; strips ANSI."""\n'
    ),
    "docs/conf.py": (
        '"""Sphinx configuration of the docs: prompts, confirmations, ANSI styles."""\n\n'
        'project = "click"\nextensions = ["sphinx.ext.autodoc"]\n'
        'rst_prolog = "prompt confirm strip ANSI styles in the prompt and confirm pages"\n'
    ),
}


@pytest.fixture
def outside_root(code_root: Path, tmp_path: Path) -> Path:
    """``code_root`` and ``OUTSIDE`` (the vendored copy holds all of ``termui.py`` too)."""
    root = tmp_path / "ws"
    shutil.copytree(code_root, root, ignore=shutil.ignore_patterns(".cache"))
    for path, text in OUTSIDE.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        termui = (root / "src/click/termui.py").read_text(encoding="utf-8")
        (root / path).write_text(text + (termui if "_vendor/" in path else ""))
    return root


def test_code_outside_the_source_ranks_below_it(
    outside_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vendored copy and a docs tree's code rank below the project's module unless the
    query asks for them; not demoted, they come first."""
    query = "confirm prompt strip ANSI"
    found = [r.path for r in open_workspace(outside_root).search(query, mode="keyword", limit=20)]
    assert found[0] == "src/click/termui.py"
    assert found.index("src/click/_vendor/termui.py") > 0 and found.index("docs/conf.py") > 0
    workspace = open_workspace(outside_root)
    assert first(workspace, query + " in the vendored copy")[0] == "src/click/_vendor/termui.py"
    assert first(workspace, query + " in the docs")[0] == "docs/conf.py"
    monkeypatch.setattr(code_files, "OUTSIDE_FACTOR", 1.0)
    assert first(open_workspace(outside_root), query)[0] != "src/click/termui.py"


def test_a_test_in_a_docs_tree_stays_demoted_when_the_query_asks_for_docs(
    outside_root: Path,
) -> None:
    """Asking for docs lifts the docs tree's code, not the tests kept there: a test of
    the docs config that repeats its words (and more of them) stays below it."""
    test = outside_root / "docs/tests/test_conf.py"
    test.parent.mkdir(parents=True)
    test.write_text(OUTSIDE["docs/conf.py"] * 3 + "\ndef test_prompt_confirm_ansi(): ...\n")
    query = "confirm prompt strip ANSI in the docs"
    found = [r.path for r in open_workspace(outside_root).search(query, mode="keyword", limit=20)]
    assert found.index("docs/conf.py") < found.index("docs/tests/test_conf.py")


@pytest.mark.parametrize(
    ("path", "outside"),
    [
        ("docs/conf.py", True),
        ("docs/plugins/main.py", True),
        ("pydantic/_vendor/typing_extensions.py", True),
        ("vendor/github.com/spf13/pflag/flag.go", True),
        ("third_party/lib.rs", True),
        ("tox.ini", True),
        ("noxfile.py", True),
        (".github/workflows/ci.yml", True),
        ("doc/man_docs.go", False),  # a Go package that writes docs is the project's source
        ("src/click/docs.py", False),
        ("scrapy/settings/default_settings.py", False),
    ],
)
def test_outside_the_source_by_its_path(path: str, outside: bool) -> None:
    assert code_files.is_outside(path) is outside


# --- a long title's identifiers ---------------------------------------------------------------

#: A change's title naming a method it calls: the method's definition (core.py,
#: ``Command.get_params``, the name in its heading) used to come first; the file whose
#: words the title repeats (shell_completion.py, ``_resolve_context``) does now.
IDENTIFIER_TITLE = (
    "Use get_params to find the Click object that will handle the completion",
    "src/click/shell_completion.py",
)


def test_a_long_titles_identifier_weighs_less(
    code_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query, path = IDENTIFIER_TITLE
    assert first(open_workspace(code_root), query)[0] == path
    assert code_files.identifier_scales(query) == {"get_params": code_files.IDENTIFIER_WEIGHT}
    assert code_files.identifier_scales("Command.get_params") == {}  # a name: looked up
    monkeypatch.setattr(code_files, "IDENTIFIER_WEIGHT", 1.0)
    assert first(open_workspace(code_root), query)[0] == "src/click/core.py"


#: A changelog whose entries repeat the titles of ``TITLES``, in each prose format.
CHANGELOGS = {
    "CHANGES.rst": "Changes\n=======\n\nVersion 8.2.1\n-------------\n\n{entries}",
    "CHANGES.adoc": "= Changes\n\n== Version 8.2.1\n\n{entries}",
    "CHANGES.md": "# Changes\n\n## Version 8.2.1\n\n{entries}",
}


@pytest.mark.parametrize("name", sorted(CHANGELOGS))
def test_a_changelog_in_any_prose_format_ranks_below_the_code(
    code_root: Path, tmp_path: Path, name: str
) -> None:
    """The project's prose, whatever its format, keeps its section score alone: a
    changelog repeating a change's words does not get the whole-file evidence of code."""
    root = tmp_path / "ws"
    shutil.copytree(code_root, root, ignore=shutil.ignore_patterns(".cache"))
    entries = "".join(f"- {query.capitalize()}. Fixes {query}.\n" for query, _ in TITLES)
    (root / name).write_text(CHANGELOGS[name].format(entries=entries), encoding="utf-8")
    workspace = open_workspace(root)
    assert [first(workspace, query)[0] for query, _ in TITLES] == [path for _, path in TITLES]


def test_search_code_ranks_the_definition_over_its_tests(code_root: Path) -> None:
    from cuedeck_code.search_tool import search_code

    query = "send one request and return its response following redirects"
    found = search_code(open_workspace(code_root), query, mode="keyword", limit=3)
    hits = [(h["path"], h["symbol"]) for h in found["results"]]
    assert hits[0] == ("net/http/client.go", "Client.Do")


def test_a_workspace_without_code_ranks_as_before(tmp_path: Path) -> None:
    (tmp_path / ".cuedeck").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Retries\n\nRetried requests back off.\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "b.md").write_text("# Retries\n\nRetries, retries and retries.\n")
    engine = open_workspace(tmp_path).service("search")
    scored = engine.keyword_scores("retries")
    assert not engine.catalog.code_docs.any()
    # Files score their best section plus support: no scaling, no demotion of tests/.
    assert scored.files.max() == pytest.approx(engine._files_with_support(scored.sections).max())


# --- exact names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "path", "anchor"),
    [
        ("Context.invoke", "src/click/core.py", "Context.invoke"),
        ("HelpFormatter.write_usage", "src/click/formatting.py", "HelpFormatter.write_usage"),
        ("echo_via_pager", "src/click/termui.py", "echo_via_pager"),
        ("term_len", "src/click/_compat.py", "term_len"),
        ("DateTime", "src/click/types.py", "DateTime"),
        ("PacifyFlushWrapper", "src/click/utils.py", "_PacifyFlushWrapper"),
        ("http.Client.Do", "net/http/client.go", "Client.Do"),
        ("Client.Do", "net/http/client.go", "Client.Do"),
        ("Parser::parse", "cli/src/parser.rs", "Parser.parse"),
        ("parseURL", "web/src/router.ts", "parseURL"),
    ],
)
def test_a_name_finds_its_definition_first(
    code_root: Path, query: str, path: str, anchor: str
) -> None:
    from cuedeck_code.search_tool import search_code

    workspace = open_workspace(code_root)
    assert first(workspace, query) == (path, anchor)
    hit = search_code(workspace, query, mode="keyword", limit=1)["results"][0]
    assert (hit["path"], hit["symbol"]) == (path, anchor)


def test_without_the_name_lookup_other_definitions_come_first(
    code_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cuedeck_search.engine import SearchEngine

    monkeypatch.setattr(SearchEngine, "named_sections", lambda self, query: [])
    workspace = open_workspace(code_root)
    assert first(workspace, "term_len")[0] != "src/click/_compat.py"
    assert first(workspace, "DateTime") != ("src/click/types.py", "DateTime")
    assert first(workspace, "http.Client.Do") != ("net/http/client.go", "Client.Do")


def test_words_that_are_no_name_are_not_looked_up(code_root: Path) -> None:
    engine = open_workspace(code_root).service("search")
    assert engine.named_sections("strip ansi from prompt") == []
    assert engine.named_sections("Context.invoke") != []


# --- hybrid's weights on code -----------------------------------------------------------------


def test_hybrid_leans_on_keyword_in_proportion_to_code(code_root: Path, tmp_path: Path) -> None:
    engine = open_workspace(code_root).service("search")
    engine.sync()
    settings = engine.fusion_settings()
    assert engine.catalog.code_share > 0.95
    assert settings.semantic_weight < 0.32 and settings.keyword_weight > 0.68
    (tmp_path / ".cuedeck").mkdir()
    (tmp_path / "a.md").write_text("# A\n\nDocs only.\n")
    docs = open_workspace(tmp_path).service("search")
    docs.sync()
    assert docs.fusion_settings().semantic_weight == 0.7  # prose fuses as configured


@pytest.mark.slow
def test_hybrid_on_code_leans_on_keyword(code_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every section embedded (the real model), hybrid puts the file first for
    these; fused at the prose weights (0.7 semantic) it misses them."""
    workspace = open_workspace(code_root)
    workspace.service("search").embed_all()
    assert [first(workspace, q, "hybrid")[0] for q, _ in FUSED] == [p for _, p in FUSED]
    assert [first(workspace, q, "keyword")[0] for q, _ in FUSED] == [p for _, p in FUSED]
    monkeypatch.setattr(code_files, "CODE_SEMANTIC_WEIGHT", 0.7)
    workspace = open_workspace(code_root)
    missed = [q for q, p in FUSED if first(workspace, q, "hybrid")[0] != p]
    assert len(missed) >= 3


@pytest.mark.slow
def test_the_semantic_side_demotes_tests_too(
    code_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By meaning alone (the real model), the test of prompts is nearest to a question
    about prompts; demoted like on the keyword side, the module that prompts comes first."""
    workspace = open_workspace(code_root)
    workspace.service("search").embed_all()
    query = "confirm and prompt strip ANSI codes"
    assert first(workspace, query, "semantic")[0] == "src/click/termui.py"
    assert first(workspace, query + " in tests", "semantic")[0] == "tests/test_prompts.py"
    monkeypatch.setattr(code_files, "TEST_FACTOR", 1.0)
    assert first(open_workspace(code_root), query, "semantic")[0] == "tests/test_prompts.py"


# --- past changes' titles ---------------------------------------------------------------------

#: Commits on top of the import: (file, title). Each adds an empty line, so only the title
#: says what the change was about.
CHANGES = [
    ("src/click/_winconsole.py", "Unicode output broken in the Windows console"),
    ("src/click/_winconsole.py", "Fix garbled accents in the Windows console"),
    ("src/click/_termui_impl.py", "Progress bar: hide the cursor while rendering"),
    ("src/click/formatting.py", "Help text: wrap long option names"),
    ("src/click/shell_completion.py", "zsh completion: escape colons in values"),
]
#: Queries the past titles put first (and the file alone does not).
REMEMBERED = [
    ("unicode output in the windows console", "src/click/_winconsole.py"),
    ("garbled output on windows", "src/click/_winconsole.py"),
    ("cursor flickers while the progress bar renders", "src/click/_termui_impl.py"),
    ("wrap long option names in help", "src/click/formatting.py"),
]


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=CueDeck", "-c", "user.email=cue@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def code_repository(code_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The code of ``code_root`` in a git repository: one import, then ``CHANGES``."""
    root = tmp_path_factory.mktemp("history") / "ws"
    shutil.copytree(code_root, root, ignore=shutil.ignore_patterns(".cache"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Import the sources")  # too many files: left out
    for path, title in CHANGES:
        with (root / path).open("a", encoding="utf-8") as handle:
            handle.write("\n")
        git(root, "commit", "-q", "-am", title)
    return root


@pytest.mark.parametrize(("query", "path"), REMEMBERED)
def test_past_change_titles_find_the_files_they_changed(
    code_repository: Path, query: str, path: str
) -> None:
    assert first(open_workspace(code_repository), query)[0] == path


def test_without_past_changes_those_queries_miss(
    code_repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(code_files, "HISTORY_EVIDENCE", 0.0)
    workspace = open_workspace(code_repository)
    missed = [query for query, path in REMEMBERED if first(workspace, query)[0] != path]
    assert len(missed) == len(REMEMBERED)


def test_history_commits_zero_turns_past_changes_off(code_repository: Path, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(code_repository, root, ignore=shutil.ignore_patterns(".cache"))
    config = root / ".cuedeck" / "config.toml"
    config.write_text("[search]\nhistory_commits = 0\n", encoding="utf-8")
    workspace = open_workspace(root)
    missed = [query for query, path in REMEMBERED if first(workspace, query)[0] != path]
    assert len(missed) == len(REMEMBERED)
    assert workspace.service("search").fusion_settings().semantic_weight > 0.25


def test_with_past_changes_hybrid_leans_further_on_keyword(
    code_root: Path, code_repository: Path
) -> None:
    """The code weights (0.3 semantic) drop to 0.1 where keyword has the titles too."""
    without = open_workspace(code_root).service("search")
    with_history = open_workspace(code_repository).service("search")
    without.sync()
    with_history.sync()
    assert 0.28 < without.fusion_settings().semantic_weight < 0.32
    assert 0.09 < with_history.fusion_settings().semantic_weight < 0.12
