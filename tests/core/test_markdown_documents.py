"""Parsing of real markdown bytes into documents: frontmatter, sections, references."""

from __future__ import annotations

import hashlib

import pytest

from cuedeck.markdown.document import ENGINES, Engine, parse_document, slugify
from cuedeck.models import Document
from cuedeck.token_counts import EstimateCounter

count = EstimateCounter().count


def parse(text: str | bytes, path: str = "docs/page.md", engine: Engine = "fast") -> Document:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse_document(path, data, count_tokens=count, engine=engine)


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Engine:
    value: Engine = request.param
    return value


def test_no_frontmatter(engine: Engine) -> None:
    doc = parse("# Title\n\nBody text.\n", engine=engine)
    assert doc.frontmatter == {}
    assert doc.body_line == 1
    assert doc.title == "Title"
    assert doc.problems == ()
    assert [(h.text, h.line, h.end_line) for h in doc.headings] == [("Title", 1, 3)]


def test_frontmatter_is_parsed_and_timestamps_stay_strings() -> None:
    doc = parse(
        "---\ntitle: Login API\ncreated: 2024-01-05T10:00:00Z\ntags: [auth, api]\n---\n# H\n"
    )
    assert doc.frontmatter == {
        "title": "Login API",
        "created": "2024-01-05T10:00:00Z",
        "tags": ["auth", "api"],
    }
    assert doc.title == "Login API"
    assert doc.body_line == 6
    assert doc.headings[0].line == 6


def test_broken_yaml_is_a_problem_with_its_line_not_a_crash() -> None:
    doc = parse("---\ntitle: ok\ntags: [unclosed\nother: 1\n---\n# Body\n")
    assert doc.frontmatter == {}
    (problem,) = doc.problems
    assert problem.severity == "error"
    assert problem.code == 1004
    assert problem.path == "docs/page.md"
    assert problem.line is not None and 3 <= problem.line <= 5
    assert "not valid YAML" in problem.message
    assert doc.headings[0].text == "Body"


def test_unclosed_and_non_mapping_frontmatter() -> None:
    unclosed = parse("---\ntitle: x\n# Heading\n")
    assert "never closed" in unclosed.problems[0].message
    listing = parse("---\n- a\n- b\n---\ntext\n")
    assert "must be a mapping" in listing.problems[0].message


def test_crlf_and_lone_cr_line_endings(engine: Engine) -> None:
    doc = parse(b"---\r\ntitle: T\r\n---\r\n# One\r\ntext\r\n## Two\r\nmore\r\n", engine=engine)
    assert doc.frontmatter == {"title": "T"}
    assert [(h.text, h.line, h.end_line) for h in doc.headings] == [
        ("One", 4, 7),
        ("Two", 6, 7),
    ]
    old_mac = parse(b"# A\rtext\r# B\r", engine=engine)
    assert [h.line for h in old_mac.headings] == [1, 3]


def test_non_utf8_bytes_are_replaced_with_a_warning() -> None:
    doc = parse(b"# Caf\xe9\n\nna\xefve text\n")
    assert doc.headings[0].text == "Caf\ufffd"
    (problem,) = doc.problems
    assert problem.severity == "warning"
    assert "UTF-8" in problem.message
    assert doc.sha256 == hashlib.sha256(b"# Caf\xe9\n\nna\xefve text\n").hexdigest()


def test_headings_inside_code_fences_are_not_headings(engine: Engine) -> None:
    text = "# Real\n\n```bash\n# not a heading\n```\n\n~~~~\n## nor this\n~~~~\n\n## Also real\n"
    doc = parse(text, engine=engine)
    assert [h.text for h in doc.headings] == ["Real", "Also real"]


def test_fence_closes_only_with_a_long_enough_fence(engine: Engine) -> None:
    text = "````md\n```\n# inside\n```\n````\n# after\n"
    doc = parse(text, engine=engine)
    assert [h.text for h in doc.headings] == ["after"]


def test_unclosed_fence_runs_to_the_end(engine: Engine) -> None:
    doc = parse("# A\n```\n# B\n@doc/x\n", engine=engine)
    assert [h.text for h in doc.headings] == ["A"]
    assert doc.references == ()


def test_section_ranges_end_at_same_or_higher_level(engine: Engine) -> None:
    text = "# A\n## B\n### C\ntext\n## D\n# E\nend\n"
    doc = parse(text, engine=engine)
    ranges = {h.text: (h.line, h.end_line) for h in doc.headings}
    assert ranges == {"A": (1, 5), "B": (2, 4), "C": (3, 4), "D": (5, 5), "E": (6, 7)}


def test_setext_headings(engine: Engine) -> None:
    doc = parse("Title\n=====\n\nSub\n---\ntext\n", engine=engine)
    assert [(h.text, h.level, h.line) for h in doc.headings] == [("Title", 1, 1), ("Sub", 2, 4)]


def test_duplicate_headings_get_unique_slugs() -> None:
    doc = parse("# Setup\n## Usage\n# Other\n## Usage\n## Usage\n")
    assert [h.slug for h in doc.headings] == ["setup", "usage", "other", "usage-1", "usage-2"]
    assert doc.find_heading("usage") == doc.headings[1]
    assert doc.find_heading("USAGE-1") == doc.headings[3]


def test_heading_text_drops_markup_and_explicit_ids() -> None:
    doc = parse("## Type hints in **FastAPI** { #type-hints }\n### `typing` module\n")
    first, second = doc.headings
    assert (first.text, first.slug) == ("Type hints in FastAPI", "type-hints")
    assert (second.text, second.slug) == ("typing module", "typing-module")
    assert first.matches("type hints in fastapi")
    assert first.matches("TYPE-HINTS")


def test_slugify_is_github_style() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("Über Café") == "über-café"
    assert slugify("a  b") == "a--b"


@pytest.mark.slow
def test_a_10_mb_file_parses() -> None:
    section = "## Part {n}\n\n" + ("Some words about things and @doc/api#Login. " * 20 + "\n") * 10
    text = "# Big\n" + "".join(section.format(n=n) for n in range(1200))
    data = text.encode()
    assert len(data) > 10_000_000
    doc = parse(data)
    assert len(doc.headings) == 1201
    assert doc.headings[-1].end_line == doc.line_count
    assert len(doc.references) == 1200 * 10 * 20
    assert doc.tokens > 2_000_000


def test_title_falls_back_to_file_name() -> None:
    assert parse("just text\n", path="docs/release-notes.md").title == "release-notes"


def test_document_kind_from_path() -> None:
    assert parse("x", path=".cuedeck/cards/abc123.md").kind == "card"
    assert parse("x", path=".cuedeck/docs/api.md").kind == "doc"
    assert parse("x", path="README.md").kind == "file"


# --- references ---------------------------------------------------------------------------


def refs(text: str, path: str = ".cuedeck/docs/page.md") -> list[tuple[str, str, str | None, int]]:
    return [(r.kind, r.target, r.anchor, r.line) for r in parse(text, path=path).references]


def test_at_path_references() -> None:
    assert refs("See @src/api/auth.md and @docs/guide.md#Install please.\n") == [
        ("at", "src/api/auth.md", None, 1),
        ("at", "docs/guide.md", "Install", 1),
    ]


def test_at_doc_and_card_shortcuts() -> None:
    assert refs("Read @doc/api#Login, then @card/abc123.\n@doc/guides/setup\n") == [
        ("at", ".cuedeck/docs/api.md", "Login", 1),
        ("at", ".cuedeck/cards/abc123.md", None, 1),
        ("at", ".cuedeck/docs/guides/setup.md", None, 2),
    ]


def test_at_references_ignore_emails_and_decorators() -> None:
    assert refs("mail me@example.com; use @app.get('/') and @pytest.fixture\n") == []


def test_markdown_links_relative_to_the_file() -> None:
    text = (
        "[auth](auth.md#Sessions) [up](../../README.md) [abs](/docs/x.md)\n"
        "[web](https://example.com/a.md) [same](#local) ![img](pic.md)\n"
        "[spaced](my%20notes.md)\n"
    )
    assert refs(text) == [
        ("markdown", ".cuedeck/docs/auth.md", "Sessions", 1),
        ("markdown", "README.md", None, 1),
        ("markdown", "docs/x.md", None, 1),
        ("markdown", ".cuedeck/docs/my notes.md", None, 3),
    ]


def test_link_reference_definitions() -> None:
    assert refs("See [the guide][g].\n\n[g]: ./guide.md#setup\n") == [
        ("markdown", ".cuedeck/docs/guide.md", "setup", 3)
    ]


def test_wiki_links() -> None:
    assert refs("Link [[auth]] and [[api#Login|the login call]].\n") == [
        ("wiki", "auth", None, 1),
        ("wiki", "api", "Login", 1),
    ]


def test_frontmatter_refs_and_depends_on() -> None:
    text = (
        "---\nrefs:\n  - doc/api#Login\n  - '@card/abc123'\n  - README.md\n"
        "depends_on: [def456]\n---\nbody\n"
    )
    assert refs(text, path=".cuedeck/cards/xyz789.md") == [
        ("frontmatter", ".cuedeck/docs/api.md", "Login", 3),
        ("frontmatter", ".cuedeck/cards/abc123.md", None, 4),
        ("frontmatter", "README.md", None, 5),
        ("depends_on", ".cuedeck/cards/def456.md", None, 6),
    ]


def test_bad_refs_field_is_a_problem() -> None:
    doc = parse("---\nrefs: 12\n---\n")
    assert any("'refs' must be a list" in p.message for p in doc.problems)


def test_no_references_in_code_fences_or_inline_code(engine: Engine) -> None:
    text = (
        "Real @doc/a here.\n"
        "```\n@doc/b [x](c.md) [[d]]\n```\n"
        "Inline `@doc/e` and ``[x](f.md)`` but @doc/g.\n"
        "\n<!--\n@doc/h\n-->\n"
    )
    doc = parse(text, engine=engine)
    assert [r.target for r in doc.references] == [".cuedeck/docs/a.md", ".cuedeck/docs/g.md"]


def test_reference_anchor_drops_trailing_punctuation() -> None:
    assert refs("End with @doc/api#Login.\n") == [("at", ".cuedeck/docs/api.md", "Login", 1)]


def test_reference_lines_are_numbered_past_frontmatter_line_ends_and_plain_lines() -> None:
    text = "---\ntitle: T\n---\r\nplain\r\n\r\n" + "words\n" * 50
    text += "[[w]] @doc/a [x](b.md)\n[r]: c.md"  # every kind; the last line has no end
    assert refs(text) == [
        ("at", ".cuedeck/docs/a.md", None, 56),
        ("markdown", ".cuedeck/docs/b.md", None, 56),
        ("wiki", "w", None, 56),
        ("markdown", ".cuedeck/docs/c.md", None, 57),
    ]


def test_at_code_references_name_a_path_and_a_symbol_or_lines() -> None:
    text = (
        "See @code/src/shop/cart.py#Cart.add, @code/src/shop/cart.py#L120-L180 and "
        "@code/./lib/util.go.\n"
        "---\n"
    )
    assert refs(text) == [
        ("at", "src/shop/cart.py", "Cart.add", 1),
        ("at", "src/shop/cart.py", "L120-L180", 1),
        ("at", "lib/util.go", None, 1),
    ]
    front = "---\nrefs:\n  - code/src/shop/cart.py#Cart.add\n  - '@code/Makefile'\n---\n"
    assert refs(front, path=".cuedeck/cards/xyz789.md") == [
        ("frontmatter", "src/shop/cart.py", "Cart.add", 3),
        ("frontmatter", "Makefile", None, 4),
    ]


def test_a_line_range_is_a_section_of_any_document() -> None:
    doc = parse("# A\n\none\ntwo\nthree\n")
    assert [
        (s.line, s.end_line, s.slug) for s in map(doc.find_section, ("L3-L4", "L2-5", "L5"))
    ] == [  # type: ignore[union-attr]
        (3, 4, "L3-L4"),
        (2, 5, "L2-L5"),
        (5, 5, "L5"),
    ]
    assert [doc.find_section(a) for a in ("L0", "L4-L3", "L5-L6", "l3")] == [None] * 4
