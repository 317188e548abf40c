"""BM25F's scorer, its constants and the saved postings file's layout, without numpy.

Both the engine (numpy, every mode) and the quick keyword path of a one-query process
(:mod:`cuedeck_search.quick`, no numpy) score with :func:`idf` and :func:`term_score`,
so the two rank exactly alike (tests/search/test_quick_properties.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import posixpath
from collections import Counter
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.layout import CACHE_DIR
from cuedeck.models import PROSE_LANGUAGES
from cuedeck_search.analysis import term_counts, terms
from cuedeck_search.sections import keyword_section

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck_search.sections import Section

#: Sections of a file that count towards its keyword score, and the weight of the
#: second one (the third counts SUPPORT_DECAY ** 2).
SUPPORT_DEPTH = 3
SUPPORT_DECAY = 0.3

#: Bump when sections or terms would come out differently for the same file.
ANALYSIS_VERSION = 6  # 4: phrase bonus gone, postings format 3; 5: dotted chains as
# identifiers, code sections; 6: the header counts code documents
FORMAT = "cuedeck-postings/3"
MAGIC = b"CUEDECKP"
POSTINGS_FILE = f"{CACHE_DIR}/keyword.postings"
#: Languages of documents that are not code (core's prose ones, markdown's "" and a file
#: read as plain lines): code is ranked with whole-file evidence (cuedeck_search.code_files).
PROSE = frozenset({*PROSE_LANGUAGES, "text", ""})
ALIGN = 64


@attrs.frozen
class KeywordSettings:
    """Ranking constants; the defaults were tuned on the labelled fastapi queries."""

    k1: float = 1.2
    b: float = 0.75
    heading_weight: float = 3.0
    path_weight: float = 1.0
    name_weight: float = 2.0


def fingerprint(settings: KeywordSettings, parsers: str = "") -> str:
    """What saved postings must have been built with to be reused: the analysis, the
    settings and the index's parsers (their :meth:`~cuedeck.index.parsers.Parsers.key`)."""
    text = json.dumps([ANALYSIS_VERSION, attrs.asdict(settings), parsers], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def idf(count: int, df: int) -> float:
    """BM25's inverse document frequency of a term in ``df`` of ``count`` sections."""
    return math.log1p((count - df + 0.5) / (df + 0.5))


def term_score(
    weight: float, frequency: Any, length: Any, settings: KeywordSettings, average: float
) -> Any:
    """BM25F's score of one query term in sections of weighted ``frequency`` and
    ``length``: ``weight`` (the term's idf times how often the query says it) times the
    saturated frequency. Floats or float64 arrays alike: the same expression in the
    same order, so the quick path's sums equal the engine's to the last bit."""
    k1, b = settings.k1, settings.b
    norm = k1 * (1.0 - b + b * length / average)
    return weight * (frequency * (k1 + 1.0) / (frequency + norm))


def aligned(offset: int) -> int:
    """``offset`` rounded up to the file's alignment."""
    return (offset + ALIGN - 1) // ALIGN * ALIGN


def name_text(path: str) -> str:
    """The words of a file's name (``tutorial/query-params.md`` -> ``query params``; an
    index or readme page is named by its folder)."""
    stem_ = posixpath.splitext(posixpath.basename(path))[0]
    if stem_.lower() in ("index", "readme"):
        stem_ = posixpath.basename(posixpath.dirname(path)) or stem_
    return stem_.replace("-", " ").replace("_", " ")


def name_terms(path: str) -> list[str]:
    """Terms of a file's name (``tutorial/query-params.md`` -> query, param)."""
    return terms(name_text(path))


def section_counts(
    path: str, sections: Sequence[Section], settings: KeywordSettings
) -> list[dict[str, float]]:
    """BM25F's weighted term frequencies of each section of the document at ``path``: the
    body once, the section's own heading ``heading_weight`` times, the enclosing headings
    ``path_weight`` times and the file name ``name_weight`` times."""
    name = Counter(name_terms(path))
    found: list[dict[str, float]] = []
    for section in sections:
        counts = term_counts(keyword_section(section)[0])
        *ancestors, own = section.heading_path or ("",)
        if own:
            term_counts(own, settings.heading_weight, counts)
        if ancestors:
            term_counts(" ".join(ancestors), settings.path_weight, counts)
        for term, times in name.items():
            counts[term] = counts.get(term, 0.0) + settings.name_weight * times
        found.append(counts)
    return found
