"""How a workspace that holds code is ranked: file evidence, past changes, tests demoted.

A code document's sections are its definitions, each short, so a file's best sections
say little about the file: a test that calls a function once in a short test ranks as
high as the module that defines it and uses its words all over. So when the workspace
holds code, a code file also gets **whole-file evidence**: BM25 over the file as one
document (its sections' weighted term frequencies summed, its length their lengths'
sum), beside its section score; and, in a git repository, **its past changes' titles**
(:mod:`cuedeck_search.past_changes`): BM25 over the titles of the commits that modified
it. Each side is scaled by its best file for the query and they are added, the
whole-file side weighing ``FILE_EVIDENCE`` and the titles ``HISTORY_EVIDENCE``.
CueDeck's own docs and cards (``.cuedeck/``) get the same evidence; the project's other
prose (a README, a changelog, a documentation site; any prose format) keeps its section
score alone, so in a repository its pages rank below the code a query's words are
spread through (on the tuning repositories, giving them the evidence too cost 0.07
MRR: they are never a change's answer, but often match its title). Then **tests and
examples are demoted** (their score times ``TEST_FACTOR`` or ``EXAMPLE_FACTOR``, judged
by the path: tests by core's rule, :func:`cuedeck.index.file_kinds.is_test_path`) unless
the query says ``test``: they mention what they exercise as often as the code that
defines it. Code outside the project's source (a docs tree's ``conf.py`` and plugins,
vendored copies, CI and tool config) is demoted alike (``OUTSIDE_FACTOR``) unless the
query names docs, vendoring or CI. The semantic side demotes them by the same factors.
In a query of several words, a whole compound identifier (``download_async``) weighs
``IDENTIFIER_WEIGHT`` on the keyword side: it matches its own definition's heading and
pulls that file above the ones a change about it modifies.

Measured on the tuning repositories of benchmarks/code_cases.py (file-level MRR;
benchmarks/README.md, "Code ranking"). A workspace without code ranks as before, to the
bit: these apply only where a code file is among the documents.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from cuedeck.index.file_kinds import is_test_path
from cuedeck.layout import WORKSPACE_DIR
from cuedeck_search.analysis import TRAILING, WORD, word_terms
from cuedeck_search.bm25 import idf

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import NDArray

#: Weight of the whole-file side against the section side (each scaled to its best).
FILE_EVIDENCE = 2.0
#: Weight of the file's past change titles (cuedeck_search.past_changes), scaled alike.
HISTORY_EVIDENCE = 1.5
#: Weight of a definition's file score beside its own, for rankers of definitions.
DEFINITION_FILE_EVIDENCE = 1.0
TEST_FACTOR = 0.3
EXAMPLE_FACTOR = 0.5
#: Code the workspace indexes that is no source of the project: a docs tree's code
#: (``docs/conf.py``, a docs site's plugins), vendored copies, CI and tool config.
OUTSIDE_FACTOR = 0.5
#: Hybrid's weights on code: the semantic side is the weaker one there (file-level MRR on
#: the tuning repositories: keyword 0.697, semantic 0.563 with tests demoted), so it
#: weighs 0.3 where on prose it weighs ``[search] semantic_weight`` (0.7); and 0.1 where
#: the keyword side has the past changes' titles too (keyword 0.746: hybrid at 0.3 fell
#: below it, 0.745; at 0.1, 0.754). A workspace's weights are the prose and the code
#: ones blended by the share of its sections that are code.
CODE_SEMANTIC_WEIGHT = 0.3
CODE_SEMANTIC_WEIGHT_WITH_HISTORY = 0.1
#: What a whole compound identifier of the query (``download_async``, ``FeedExporter``)
#: weighs on the keyword side when the query is more than a name: it matches its own
#: definition's heading, rare and weighted three times, and pulls that definition's file
#: above the files a change to it modifies.
IDENTIFIER_WEIGHT = 0.75
#: Prose that gets whole-file evidence too: CueDeck's own docs and cards.
OWN_DOCS = f"{WORKSPACE_DIR}/"

_EXAMPLE = re.compile(r"(?:^|/)(?:examples?|_examples|benches|bench|benchmarks?|docs_src)/")
#: Not ``doc/``: Go and other languages name source packages so (a docs generator).
_OUTSIDE = re.compile(
    r"(?:^|/)(?:docs|documentation|vendor|vendored|_vendor|third_party|third-party"
    r"|thirdparty|3rdparty|node_modules|\.github|\.circleci)/"
    r"|(?:^|/)(?:tox\.ini|noxfile\.py|\.pre-commit-config\.ya?ml|\.gitlab-ci\.ya?ml"
    r"|\.travis\.ya?ml|appveyor\.ya?ml|azure-pipelines\.ya?ml|codecov\.ya?ml)$"
)
#: Query terms that ask for tests (analysed, as :func:`cuedeck_search.analysis.terms` gives).
_ASKS_FOR_TESTS = frozenset({"test", "tests", "spec", "fixtur", "pytest", "unittest"})
#: Query terms that ask for what ``_OUTSIDE`` holds (analysed).
_ASKS_FOR_OUTSIDE = frozenset(
    {"doc", "document", "sphinx", "vendor", "ci", "tox", "nox", "workflow"}
)


def path_factor(path: str) -> float:
    """What a code file's keyword score is multiplied by: tests and examples less."""
    if is_test_path(path):
        return TEST_FACTOR
    if _EXAMPLE.search(path):
        return EXAMPLE_FACTOR
    if is_outside(path):
        return OUTSIDE_FACTOR
    return 1.0


def is_outside(path: str) -> bool:
    """Whether a code file is outside the project's source (docs tree, vendored, CI or
    tool config), by its path."""
    return bool(_OUTSIDE.search(path))


def identifier_scales(query: str) -> dict[str, float]:
    """Query terms weighed other than once per occurrence: ``IDENTIFIER_WEIGHT`` for each
    whole compound identifier of a query that is more than one word (none for a name:
    :mod:`cuedeck_search.names` ranks its definition first)."""
    words = [word.rstrip(TRAILING) for word in WORD.findall(query)]
    if len(words) < 2 or IDENTIFIER_WEIGHT == 1.0:
        return {}
    scales = {}
    for word in words:
        for part in (word, *word.split(".")) if "." in word else (word,):
            found = word_terms(part)
            if len(found) > 1 and found[0] == part.lower():
                scales[found[0]] = IDENTIFIER_WEIGHT
    return scales


def asks_for_tests(query_terms: Iterable[str]) -> bool:
    """Whether a query's terms name tests (then tests are not demoted)."""
    return not _ASKS_FOR_TESTS.isdisjoint(query_terms)


def asks_for_outside(query_terms: Iterable[str]) -> bool:
    """Whether a query's terms name docs, vendored code or CI and tool config (then
    those are not demoted)."""
    return not _ASKS_FOR_OUTSIDE.isdisjoint(query_terms)


def query_factors(
    path_factors: NDArray[np.float64], outside: NDArray[np.bool_], query_terms: Iterable[str]
) -> NDArray[np.float64]:
    """Each document's factor for a query's terms: its ``path_factors``; all ones when
    the terms ask for tests; code ``outside`` the source at 1 when they ask for docs,
    vendored code or CI (a test there stays a test)."""
    query_terms = list(query_terms)
    if asks_for_tests(query_terms):
        return np.ones_like(path_factors)
    if asks_for_outside(query_terms):
        return np.where(outside & (path_factors == OUTSIDE_FACTOR), 1.0, path_factors)
    return path_factors


def whole_files(
    columns: Iterable[tuple[str, float, NDArray[np.integer[Any]], NDArray[np.floating[Any]]]],
    doc_lengths: NDArray[np.float64],
    code: NDArray[np.bool_],
    k1: float,
    b: float,
) -> NDArray[np.float64]:
    """BM25 of each code document as one whole, from its sections' postings.

    ``columns`` gives, per query term, the term, how often the query holds it, the
    document of each live section holding it and the term's weighted frequency there.
    Document frequencies and the average length count live code documents only.
    """
    scores = np.zeros(len(doc_lengths), dtype=np.float64)
    count = int(code.sum())
    if not count:
        return scores
    average = float(doc_lengths[code].mean()) or 1.0
    norm = k1 * (1.0 - b + b * doc_lengths / average)
    for _, times, docs, frequencies in columns:
        keep = code[docs]
        if not keep.any():
            continue
        tf = np.bincount(docs[keep], weights=frequencies[keep], minlength=len(doc_lengths))
        df = int(np.count_nonzero(tf))
        scores += times * idf(count, df) * tf * (k1 + 1.0) / (tf + norm)
    return scores


def combine(
    sections: NDArray[np.float64],
    whole: NDArray[np.float64],
    factors: NDArray[np.float64],
    history: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """File scores: sections scaled to their best, plus ``FILE_EVIDENCE`` times the
    whole-file scores scaled to theirs and ``HISTORY_EVIDENCE`` times the past change
    titles' (when there is history), times each file's factor (all ones when the query
    asks for tests)."""
    best_sections = float(sections.max(initial=0.0))
    scores = sections / best_sections if best_sections > 0 else np.zeros_like(sections)
    for evidence, weight in ((whole, FILE_EVIDENCE), (history, HISTORY_EVIDENCE)):
        best = 0.0 if evidence is None else float(evidence.max(initial=0.0))
        if evidence is not None and best > 0:
            scores = scores + weight * evidence / best
    return scores * factors


def definitions(
    sections: NDArray[np.float64],
    files: NDArray[np.float64],
    section_doc: NDArray[np.int64],
    code_sections: NDArray[np.bool_],
    factors: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Scores of code sections for rankers of definitions: the section's own score scaled
    to the best code section's, plus ``DEFINITION_FILE_EVIDENCE`` times its file's score
    (``files``, from :func:`combine`) scaled to the best file's, times its file's factor;
    0 for sections that matched nothing and for prose."""
    scores = np.zeros(len(sections), dtype=np.float64)
    matched = np.flatnonzero((sections > 0) & code_sections)  # few: computed for these only
    if not len(matched):
        return scores
    own = sections[matched]
    docs = section_doc[matched]
    best_file = float(files.max(initial=0.0)) or 1.0
    evidence = DEFINITION_FILE_EVIDENCE * files[docs] / best_file
    scores[matched] = (own / float(own.max()) + evidence) * factors[docs]
    return scores


def weights(
    prose_semantic: float, prose_keyword: float, code_share: float, *, history: bool = False
) -> tuple[float, float]:
    """Hybrid's ``(semantic, keyword)`` weights for a workspace whose sections are
    ``code_share`` code: the prose weights and the code ones (less semantic when the
    keyword side has past changes' titles: ``history``), blended by that share."""
    share = min(max(code_share, 0.0), 1.0)
    semantic = CODE_SEMANTIC_WEIGHT_WITH_HISTORY if history else CODE_SEMANTIC_WEIGHT
    return (
        prose_semantic * (1 - share) + semantic * share,
        prose_keyword * (1 - share) + (1.0 - semantic) * share,
    )
