"""Heading anchors the way the sites people publish markdown with make them.

A link such as ``env.md#ssl_cert_file`` is written for whatever renders the docs: GitHub
(and Docusaurus, which uses the same slugger), GitLab, MkDocs (Python-Markdown's ``toc``
extension, ASCII by default, ``slugify_unicode`` as a common option), or Sphinx through
MyST (GitHub-like slugs, or docutils ids). Each convention is a slug function and a rule
for duplicates; :func:`heading_anchors` gives every heading its anchor under each, and a
reference is sound when its anchor is any of them. The canonical slug (node labels,
manifests) is GitHub's.

Every function here is written from the conventions' documented behaviour and their
test fixtures; none is a copy.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

#: Unicode categories GitHub keeps in a slug (letters, marks, decimal and letter numbers,
#: connector punctuation such as ``_``); everything else but ``-`` and space goes.
_GITHUB_KEPT = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "Pc"})
#: Symbols that Unicode calls alphabetic (circled and squared Latin letters): kept too.
_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))


def _github_keeps(ch: str) -> bool:
    if ch in " -" or unicodedata.category(ch) in _GITHUB_KEPT:
        return True
    point = ord(ch)
    return any(low <= point <= high for low, high in _ALPHABETIC_SYMBOLS)


#: What GitHub drops of ASCII text: every character but letters, digits, ``_`` (the
#: categories above), ``-`` and space.
_GITHUB_ASCII_DROPPED = re.compile(r"[^a-z0-9_ \-]")


def github_slug(text: str) -> str:
    """GitHub and Docusaurus (github-slugger): lower case, punctuation and symbols
    dropped, each space a hyphen (``a - b`` is ``a---b``)."""
    lowered = text.lower()
    if lowered.isascii():  # most headings: one pattern instead of a test per character
        return _GITHUB_ASCII_DROPPED.sub("", lowered).replace(" ", "-")
    return "".join(ch for ch in lowered if _github_keeps(ch)).replace(" ", "-")


_NOT_WORD_SPACE_DASH = re.compile(r"[^\w\s-]")
_DASH_OR_SPACE_RUN = re.compile(r"[-\s]+")


def mkdocs_slug(text: str, *, keep_unicode: bool = False) -> str:
    """MkDocs (Python-Markdown ``toc``): accents folded to ASCII and other letters
    dropped (unless ``keep_unicode``), punctuation dropped, runs of spaces and hyphens one
    hyphen; underscores stay."""
    if not keep_unicode:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = _NOT_WORD_SPACE_DASH.sub("", text).strip().lower()
    return _DASH_OR_SPACE_RUN.sub("-", text)


_MYST_DROPPED = re.compile(r"[^\w\u4e00-\u9fff\- ]")


def myst_slug(text: str) -> str:
    """MyST-Parser's default (``myst_heading_anchors``): spaces to hyphens, then every
    character but word characters, CJK ideographs and hyphens dropped."""
    return _MYST_DROPPED.sub("", text.lower().replace(" ", "-"))


_GITLAB_DROPPED = re.compile(r"[^\w\- ]")
_HYPHENS = re.compile(r"-{2,}")


def gitlab_slug(text: str) -> str:
    """GitLab: like GitHub but runs of hyphens squeezed, and an all-digit slug prefixed."""
    slug = _HYPHENS.sub("-", _GITLAB_DROPPED.sub("", text.strip().lower()).replace(" ", "-"))
    return f"anchor-{slug}" if slug.isdigit() else slug


#: Latin letters docutils spells in ASCII before it drops everything else non-ASCII.
_DOCUTILS_LETTERS = str.maketrans(
    {
        "ß": "sz",
        "æ": "ae",
        "œ": "oe",
        "ȸ": "db",
        "ȹ": "qp",
        **dict(
            zip(
                "øđħıłŧƀƃƈƌƒƙƚƞƥƫƭƴƶǥȥȴȵȶȷȼȿɀɇɉɋɍɏ",
                "odhiltbbcdfklnpttyzgzlntjcszejqry",
                strict=True,
            )
        ),
    }
)
_NOT_ID = re.compile(r"[^a-z0-9]+")
_ID_ENDS = re.compile(r"^[-0-9]+|-+$")


def sphinx_slug(text: str) -> str:
    """Sphinx (docutils ids, MyST's ``docutils`` preset): ASCII letters and digits only,
    every other run one hyphen, no leading digits or hyphens (``SSL_CERT_FILE`` is
    ``ssl-cert-file``)."""
    ident = text.lower().translate(_DOCUTILS_LETTERS)
    ident = unicodedata.normalize("NFKD", ident).encode("ascii", "ignore").decode("ascii")
    ident = _NOT_ID.sub("-", " ".join(ident.split()))
    return _ID_ENDS.sub("", ident)


# --- duplicates --------------------------------------------------------------------------


class GithubDuplicates:
    """github-slugger's rule: the n-th repeat of a slug gets ``-n``, skipping any slug
    already taken (``echo``, ``echo-1``, then ``echo 1`` is ``echo-1-1``)."""

    def __init__(self) -> None:
        self.occurrences: dict[str, int] = {}

    def __call__(self, slug: str) -> str:
        result = slug
        while result in self.occurrences:
            self.occurrences[slug] += 1
            result = f"{slug}-{self.occurrences[slug]}"
        self.occurrences[result] = 0
        return result


class SuffixDuplicates:
    """MyST's and GitLab's rule: ``x``, ``x-1``, ``x-2``... until the slug is free."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        # The number to try next after each slug: those before it are taken (nothing is
        # ever freed), so a page of many equal headings is not quadratic.
        self.next: dict[str, int] = {}

    def __call__(self, slug: str) -> str:
        result, number = slug, self.next.get(slug, 1)
        while result in self.taken:
            result = f"{slug}-{number}"
            number += 1
        self.taken.add(result)
        self.next[slug] = number
        return result


_COUNTED = re.compile(r"^(.*)_([0-9]+)$")


class MkdocsDuplicates:
    """Python-Markdown's rule: a taken (or empty) id gets ``_1``, and an id that already
    ends in ``_N`` counts on from N; ids given explicitly anywhere are taken first."""

    def __init__(self, explicit: Sequence[str] = ()) -> None:
        self.taken: set[str] = set(explicit)
        # Where each slug's chain of tries ended: every id before it is taken.
        self.last: dict[str, str] = {}

    def __call__(self, slug: str) -> str:
        start, slug = slug, self.last.get(slug, slug)
        while slug in self.taken or not slug:
            match = _COUNTED.match(slug)
            slug = f"{match.group(1)}_{int(match.group(2)) + 1}" if match else f"{slug}_1"
        self.taken.add(slug)
        self.last[start] = slug
        return slug


#: Each convention: its slug function and how it makes repeated slugs unique.
CONVENTIONS: dict[str, tuple[Callable[[str], str], str]] = {
    "github": (github_slug, "github"),
    "gitlab": (gitlab_slug, "suffix"),
    "mkdocs": (mkdocs_slug, "mkdocs"),
    "mkdocs-unicode": (lambda text: mkdocs_slug(text, keep_unicode=True), "mkdocs"),
    "myst": (myst_slug, "suffix"),
    "sphinx": (sphinx_slug, "suffix"),
}


def heading_anchors(
    headings: Sequence[tuple[str, str | None]],
) -> list[dict[str, str]]:
    """Each heading's anchor under every convention, for ``(text, explicit id)`` pairs in
    file order; an explicit ``{#id}`` is the anchor under all of them."""
    explicit = [ident for _, ident in headings if ident]
    makers: dict[str, Callable[[str], str]] = {}
    for name, (_, rule) in CONVENTIONS.items():
        if rule == "github":
            makers[name] = GithubDuplicates()
        elif rule == "mkdocs":
            makers[name] = MkdocsDuplicates(explicit)
        else:
            makers[name] = SuffixDuplicates()
    found: list[dict[str, str]] = []
    for text, ident in headings:
        if ident:
            found.append(dict.fromkeys(CONVENTIONS, ident))
            for maker in makers.values():
                if not isinstance(maker, MkdocsDuplicates):  # it took them all up front
                    maker(ident)
            continue
        found.append({name: makers[name](slug(text)) for name, (slug, _) in CONVENTIONS.items()})
    return found
