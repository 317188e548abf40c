"""Code in search: definitions are searchable units (path, qualified name as anchor,
line), found by their identifiers' words, beside docs; the model embeds a definition's
signature, docstring and the head of its body."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("cuedeck_code")

from cuedeck import open_workspace
from cuedeck.text import split_lines
from cuedeck_search.sections import split_sections

DATA = Path(__file__).parents[1] / "code" / "data"


@pytest.fixture
def workspace(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = tmp_path / "ws"
    shutil.copytree(DATA, root)
    (root / ".cuedeck" / "docs").mkdir(parents=True)
    (root / ".cuedeck" / "docs" / "retries.md").write_text(
        "# Retries\n\nFailed requests are retried three times by the client.\n"
    )
    return open_workspace(root)


def test_a_code_file_splits_into_its_definitions(workspace) -> None:  # type: ignore[no-untyped-def]
    document = workspace.document("client.py")
    lines = split_lines((workspace.root / "client.py").read_text())
    found = [(s.line, s.end_line, s.anchor, s.kind) for s in split_sections(document, lines)]
    assert found == [
        (1, 10, None, "code"),  # docstring and imports
        (11, 17, "Response", "class"),
        (18, 19, "Response.json", "method"),
        (22, 26, "Client", "class"),
        (27, 28, "Client.__init__", "method"),
        (30, 32, "Client.closed", "method"),
        (34, 40, "Client.send", "method"),
        (43, 43, "handle_request", "function"),
        (44, 45, "handle_request.inner", "function"),
        (46, 47, "handle_request", "code"),
    ]
    send = split_sections(document, lines)[6]
    assert send.heading_path == ("client.py", "Client.send")
    assert send.embedding_text.splitlines()[:3] == [
        "client.py > Client.send",
        'def send(self, method: str, url: str, *, body: bytes = b"") -> Response',
        "Send one request; retry up to ``retries`` times.",
    ]


@pytest.mark.parametrize(
    ("query", "path", "line", "anchor"),
    [
        ("send request retries", "client.py", 34, "Client.send"),
        ("HTTPTransport", "transport.py", 1, "HTTPTransport"),
        ("handle_request", "client.py", 43, "handle_request"),
        ("parse url", "router.ts", 36, "parseURL"),
        ("cache capacity", "lib.rs", 8, "Cache"),  # from its doc comment (line 8)
        ("ServeHTTP item count", "server.go", 31, "Server.ServeHTTP"),
    ],
)
def test_keyword_search_finds_definitions(  # type: ignore[no-untyped-def]
    workspace, query: str, path: str, line: int, anchor: str
) -> None:
    best = workspace.search(query, mode="keyword", limit=3)[0]
    assert (best.path, best.line, best.anchors[0]) == (path, line, anchor)


def test_docs_and_code_answer_together(workspace) -> None:  # type: ignore[no-untyped-def]
    found = [r.path for r in workspace.search("retried requests", mode="keyword", limit=5)]
    assert found[:2] == [".cuedeck/docs/retries.md", "client.py"]


def test_a_code_snippet_keeps_what_markdown_cleaning_would_drop(  # type: ignore[no-untyped-def]
    workspace,
) -> None:
    """`<...>`, `**` and backticks are code in a source file, not markup."""
    (workspace.root / "labels.py").write_text(
        "class Badge:\n"
        "    def render_badge(self) -> str:\n"
        '        return f"<{self.name}>" + "`" + str(2**8)\n'
    )
    workspace.invalidate()
    best = workspace.search("render_badge", mode="keyword", limit=1)[0]
    assert best.path == "labels.py" and best.anchors[0] == "Badge.render_badge"
    body = next(r for r in workspace.search("name", mode="keyword") if r.path == "labels.py")
    assert 'return f"<{self.name}>" + "`" + str(2**8)' in body.snippet


def test_kinds_keep_one_kind_of_document(workspace) -> None:  # type: ignore[no-untyped-def]
    """What the board's card filter asks for: cards alone, whatever code ranks higher."""
    from cuedeck.models import SearchFilters

    def paths(*kinds: str) -> set[str]:
        wanted = SearchFilters(kinds=kinds)  # type: ignore[arg-type]
        found = workspace.search("retried requests", mode="keyword", limit=5, filters=wanted)
        return {r.path for r in found}

    assert {".cuedeck/docs/retries.md", "client.py"} <= paths()
    assert paths("doc") == {".cuedeck/docs/retries.md"}
    in_code = paths("file")
    assert "client.py" in in_code and not any(p.startswith(".cuedeck/") for p in in_code)


def test_code_filters_keep_a_kind_a_path_or_a_language(workspace) -> None:  # type: ignore[no-untyped-def]
    from cuedeck.models import SearchFilters

    def search(query: str, **filters: str) -> list[tuple[str, tuple[str, ...]]]:
        found = workspace.search(query, mode="keyword", limit=10, filters=SearchFilters(**filters))
        return [(r.path, r.anchors) for r in found]

    # The class's own section, not its methods, though they say "send" and "retry" too.
    classes = search("send request retries", kind="class")
    assert classes[0] == ("client.py", ("Client", "Response"))
    methods = search("send request retries", kind="method")
    assert methods[0] == ("client.py", ("Client.send",))
    assert ".cuedeck/docs/retries.md" not in dict(methods)  # prose has no methods
    assert search("retried requests", language="markdown") == [
        (".cuedeck/docs/retries.md", ("Retries",))
    ]
    assert {path for path, _ in search("helper", path="util/**")} == {"util/helpers.ts"}
    assert search("send request retries", kind="macro") == []


def test_cue_search_takes_the_code_filters(workspace) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from cuedeck_cli.app import make_cli

    def cue(*args: str) -> list[str]:
        result = CliRunner().invoke(make_cli(), ["-C", str(workspace.root), "search", *args])
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines()

    found = cue("serve http item count", "--mode", "keyword", "--kind", "method", "--lang", "go")
    assert found[0].startswith(" 1. server.go:31  § Server.ServeHTTP")
    assert not [line for line in found if line[:3].strip().endswith(".") and ".go:" not in line]
    scoped = cue("helper", "--mode", "keyword", "--path", "util/**")
    assert scoped[0].startswith(" 1. util/helpers.ts:1  § helper")
