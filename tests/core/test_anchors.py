"""Heading anchors under the conventions of the sites docs are published with.

Python-Markdown (MkDocs) and docutils (Sphinx) are installed as oracles and run on the
same headings; GitHub's slugs are pinned from github-slugger 2.0 (the package GitHub's
own renderer and Docusaurus follow), run once by hand on the list below; MyST's and
GitLab's from their documented rules. The headings are real: httpx's
docs/environment_variables.md, FastAPI's, and the unicode and duplicate cases those sites
document.
"""

from __future__ import annotations

import docutils.nodes
import markdown
import markdown.extensions.toc
import pytest

from cuedeck import open_workspace
from cuedeck.doctor import diagnose
from cuedeck.markdown.anchors import CONVENTIONS, heading_anchors, sphinx_slug
from cuedeck.markdown.document import heading_text, parse_document
from cuedeck.models import Heading
from cuedeck.scene import build_scene
from tests.conftest import MakeWorkspace

HEADINGS = """# Environment Variables
## Proxies
### `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`
### `NO_PROXY`
## `SSL_CERT_FILE`
## `SSL_CERT_DIR`
## FastAPI's `HTTPException` vs Starlette's `HTTPException`
## Python 3.10+
## Recap
## Recap
## Recap
## Über Café
## 日本語のドキュメント
## Émoji 🎉 support
## 1. Install
## a - b
## C++ / C# & F#
## snake_case_name and _emphasis_
## `__init__.py`
## What's new in v2.0?
## Recap_1
## **Bold** [link](other.md) and `code`
## Straße, Æsir & Øresund
## Ⓐ circled
"""

#: github-slugger 2.0.0 on each heading's text, in order (duplicates numbered by it).
GITHUB = [
    "environment-variables",
    "proxies",
    "http_proxy-https_proxy-all_proxy",
    "no_proxy",
    "ssl_cert_file",
    "ssl_cert_dir",
    "fastapis-httpexception-vs-starlettes-httpexception",
    "python-310",
    "recap",
    "recap-1",
    "recap-2",
    "über-café",
    "日本語のドキュメント",
    "émoji--support",
    "1-install",
    "a---b",
    "c--c--f",
    "snake_case_name-and-emphasis",
    "__init__py",
    "whats-new-in-v20",
    "recap_1",
    "bold-link-and-code",
    "straße-æsir--øresund",
    "ⓐ-circled",
]


def headings() -> tuple[Heading, ...]:
    return parse_document("docs/env.md", HEADINGS.encode(), count_tokens=len).headings


def anchors_of(heading: Heading) -> set[str]:
    return {heading.slug, *heading.aliases}


def toc_ids(**config: object) -> list[str]:
    """The ids Python-Markdown's toc extension (MkDocs' default) gives the headings."""
    md = markdown.Markdown(extensions=["toc"], extension_configs={"toc": config})
    md.convert(HEADINGS)

    def walk(tokens: list[dict[str, object]]) -> list[str]:
        found: list[str] = []
        for token in tokens:
            found.append(str(token["id"]))
            found.extend(walk(token["children"]))  # type: ignore[arg-type]
        return found

    return walk(md.toc_tokens)  # type: ignore[attr-defined]


def test_github_and_docusaurus_slugs_are_the_canonical_ones() -> None:
    assert [h.slug for h in headings()] == GITHUB


@pytest.mark.parametrize(
    ("config", "convention"),
    [({}, "mkdocs"), ({"slugify": markdown.extensions.toc.slugify_unicode}, "mkdocs-unicode")],
)
def test_mkdocs_ids_match_python_markdown(config: dict[str, object], convention: str) -> None:
    expected = toc_ids(**config)
    texts = [(h.text, None) for h in headings()]
    assert [found[convention] for found in heading_anchors(texts)] == expected
    for heading, ident in zip(headings(), expected, strict=True):
        assert heading.matches(ident), (heading.text, ident)


def test_sphinx_ids_match_docutils() -> None:
    found = headings()
    for heading in found:  # docutils numbers repeats its own way: compare the slugs
        assert sphinx_slug(heading.text) == docutils.nodes.make_id(heading.text), heading.text
    assert "ssl-cert-file" in anchors_of(found[4])
    assert "strasze-aesir-oresund" in anchors_of(found[22])


def test_myst_and_gitlab_rules() -> None:
    found = heading_anchors([(h.text, None) for h in headings()])
    myst = [f["myst"] for f in found]
    gitlab = [f["gitlab"] for f in found]
    # MyST: spaces to hyphens, keep \w, CJK and hyphens; duplicates x, x-1, x-2.
    assert myst[2] == "http_proxy-https_proxy-all_proxy"
    assert myst[8:11] == ["recap", "recap-1", "recap-2"]
    assert myst[13] == "émoji--support"
    # GitLab squeezes hyphen runs and prefixes an all-digit slug.
    assert gitlab[15] == "a-b"
    assert gitlab[16] == "c-c-f"
    assert heading_anchors([("2024", None)])[0]["gitlab"] == "anchor-2024"


def test_explicit_ids_win_under_every_convention() -> None:
    found = heading_anchors([("Type hints", "hints"), ("Hints", None)])
    assert set(found[0].values()) == {"hints"}
    assert found[1]["github"] == "hints-1"
    assert found[1]["mkdocs"] == "hints_1"
    assert set(CONVENTIONS) == {"github", "gitlab", "mkdocs", "mkdocs-unicode", "myst", "sphinx"}


def test_code_spans_keep_underscores_and_intraword_underscores_are_not_emphasis() -> None:
    text = [h.text for h in headings()]
    assert text[4] == "SSL_CERT_FILE"
    assert text[17] == "snake_case_name and emphasis"
    assert text[18] == "__init__.py"


ENV = """# Environment Variables

## Proxies

### `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`

Proxy settings. See also [the API](api.md#nowhere).

## `SSL_CERT_FILE`

A CA bundle file.

## `SSL_CERT_DIR`

A folder of certificates.
"""

SSL = """# SSL

HTTPX respects [the environment](env.md#ssl_cert_file), which MyST users write as
[that](env.md#ssl-cert-file) and readers as [`SSL_CERT_FILE`](env.md#SSL_CERT_FILE).
See [`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`](env.md#http_proxy-https_proxy-all_proxy).
"""


def test_doctor_accepts_every_published_anchor(make_workspace: MakeWorkspace) -> None:
    """httpx's docs (mkdocs): ``#ssl_cert_file`` and friends are live anchors."""
    root = make_workspace(
        {
            "docs/env.md": ENV,
            "docs/ssl.md": SSL,
            "docs/api.md": "# API\n",
            "docs/bad.md": "# Bad\n\n[`SSL_CERT_PATH`](env.md#ssl_cert_path)\n",
        }
    )
    problems = [p for p in diagnose(open_workspace(root)) if p.code == 1001]
    messages = [(p.path, p.message) for p in problems]
    assert messages == [
        (
            "docs/bad.md",
            "reference '[`SSL_CERT_PATH`](env.md#ssl_cert_path)': "
            "docs/env.md has no heading 'ssl_cert_path'",
        ),
        (
            "docs/env.md",
            "reference '[the API](api.md#nowhere)': docs/api.md has no heading 'nowhere'",
        ),
    ]


def test_a_section_scene_lists_only_what_the_section_misses(
    make_workspace: MakeWorkspace,
) -> None:
    card = (
        "---\nid: aaa111\ntitle: Certificates\nstatus: active\n---\n# Certificates\n\n"
        "Read @doc/env#ssl_cert_file first.\n"
    )
    root = make_workspace({".cuedeck/cards/aaa111.md": card, ".cuedeck/docs/env.md": ENV})
    (root / ".cuedeck/docs/api.md").write_text("# API\n", encoding="utf-8")
    scene = build_scene(open_workspace(root), "aaa111", 4000)
    placed = [(c["path"], c["anchor"]) for c in scene.manifest["candidates"]]
    assert placed == [(".cuedeck/cards/aaa111.md", None), (".cuedeck/docs/env.md", "ssl_cert_file")]
    assert scene.manifest["missing"] == []
    assert "Missing" not in scene.text

    # The same doc whole: its dead link is the scene's business now.
    whole = card.replace("@doc/env#ssl_cert_file", "@doc/env")
    (root / ".cuedeck/cards/aaa111.md").write_text(whole, encoding="utf-8")
    scene = build_scene(open_workspace(root), "aaa111", 4000)
    assert [m["line"] for m in scene.manifest["missing"]] == [7]


def test_icon_glyphs_and_escapes_survive_in_heading_text() -> None:
    # Icon fonts draw from the private-use area; escapes and code spans are text too.
    assert heading_text("\ue718 Install `pip` \\*now\\*") == ("\ue718 Install pip *now*", None)


def test_many_equal_headings_are_numbered_as_python_markdown_and_myst_number_them() -> None:
    # A release-notes page: the same few headings again and again, with literal ids
    # among them that a repeat would otherwise take.
    names = ["Fixes", "Features", "Fixes_3", "Fixes 1", "Docs"]
    lines = [f"## {names[i % len(names)] if i % 7 else 'Fixes'}" for i in range(120)]
    text = "\n".join(lines) + "\n"
    md = markdown.Markdown(extensions=["toc"])
    md.convert(text)
    expected = [str(token["id"]) for token in md.toc_tokens]  # type: ignore[attr-defined]
    found = heading_anchors([(line.removeprefix("## "), None) for line in lines])
    assert [f["mkdocs"] for f in found] == expected
    for convention in ("myst", "gitlab", "sphinx"):  # x, x-1, x-2...: the first one free
        given = [f[convention] for f in found]
        for at, (line, anchor) in enumerate(zip(lines, given, strict=True)):
            bare = CONVENTIONS[convention][0](line.removeprefix("## "))
            tries = [bare, *(f"{bare}-{n}" for n in range(1, len(lines) + 1))]
            assert anchor == next(t for t in tries if t not in given[:at]), (convention, at)
    github = [f["github"] for f in found]
    assert len(set(github)) == len(github)
