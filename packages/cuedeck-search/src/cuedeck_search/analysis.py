"""Text into index terms: words and identifier parts, lower-cased, stop words out, stemmed.

An identifier such as ``HTTPException``, ``parseURL`` or ``handle_request`` gives the
whole identifier as one term (so an exact identifier query matches it precisely) and its
parts (``http``, ``exception``; ``parse``, ``url``; ``handle``, ``request``) so that
plain-word queries find it too. A dotted chain (``self.transport.request``) is its
identifiers, each as above; a two-part one (``Client.send``, a qualified name) is also
kept whole. Words are reduced by
the Porter (1980) stemmer, written out below, so ``parameters`` finds ``parameter``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

#: A word: letters and digits, joined by ``.``, ``-`` and ``_`` (an identifier stays
#: whole), found with any of those three after it: strip ``TRAILING`` before
#: :func:`word_terms` (a pattern that stopped at the last letter or digit would
#: backtrack on every word).
WORD = re.compile(r"[^\W_][\w.\-]*")
TRAILING = "._-"
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_ASCII_LETTERS = frozenset(string.ascii_letters)
#: Every suffix the stemmer tests ends in one of these letters, so a word ending in
#: anything else (most words of other scripts) is its own stem.
_SUFFIX_ENDS = frozenset(string.ascii_lowercase)
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")

STOP_WORDS = frozenset(
    [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
        "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
        "of", "on", "or", "our", "so", "such", "that", "the", "their", "then", "there", "these",
        "they", "this", "to", "was", "we", "what", "when", "where", "which", "while", "who", "why",
        "will", "with", "you", "your",
    ]
)  # fmt: skip


def terms(text: str) -> list[str]:
    """Index terms of ``text``, in order (repeats kept: they are term frequencies)."""
    out: list[str] = []
    for word in WORD.findall(text):
        out.extend(word_terms(word.rstrip(TRAILING)))
    return out


def term_counts(
    text: str, weight: float = 1.0, into: dict[str, float] | None = None
) -> dict[str, float]:
    """Term frequencies of ``text`` times ``weight``, added to ``into`` when given.

    Counts words first and analyses each distinct word once: most of the cost of
    indexing is here, and a section repeats its words a lot.
    """
    counts = into if into is not None else {}
    for word, count in Counter(WORD.findall(text)).items():
        for term in word_terms(word.rstrip(TRAILING)):
            counts[term] = counts.get(term, 0.0) + count * weight
    return counts


@lru_cache(maxsize=262144)
def word_terms(word: str) -> tuple[str, ...]:
    """The terms of one word: nothing for a stop word, the stem, or an identifier's parts."""
    lowered = word.lower()
    if lowered in STOP_WORDS:
        return ()
    if "." in word:
        segments = word.split(".")
        if len(segments) > 1 and all(_IDENTIFIER.fullmatch(s) for s in segments):
            found: list[str] = [lowered] if len(segments) == 2 else []
            for segment in segments:
                found.extend(t for t in word_terms(segment) if t not in found)
            return tuple(found)
    # A word of letters, lower case but perhaps the first, is its stem; so is one that
    # starts with a letter outside ASCII (Chinese, Japanese...), which _PART would keep
    # whole.
    if word.isalpha() and (word[0] not in _ASCII_LETTERS or word.islower() or word[1:].islower()):
        return (stem(lowered) if lowered[-1] in _SUFFIX_ENDS else lowered,)
    parts = [p.lower() for p in _PART.findall(word)]
    if len(parts) > 1:
        kept = [stem(p) for p in parts if len(p) > 1 and p not in STOP_WORDS]
        return (lowered, *kept)
    return (stem(parts[0]),) if parts else ()


# --- Porter stemmer ----------------------------------------------------------------------

_VOWELS = frozenset("aeiou")


def _consonants(word: str) -> list[bool]:
    """Porter's consonant test of each letter: not a vowel, and a ``y`` only first or
    after a vowel."""
    found: list[bool] = []
    previous = False  # whether the letter before is a consonant
    for char in word:
        previous = char not in _VOWELS and (char != "y" or not found or not previous)
        found.append(previous)
    return found


def _measure(stem_: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``stem_``."""
    m = 0
    previous_vowel = False
    for consonant in _consonants(stem_):
        if consonant and previous_vowel:
            m += 1
        previous_vowel = not consonant
    return m


def _has_vowel(stem_: str) -> bool:
    return not all(_consonants(stem_))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _cvc(word: str) -> bool:
    if len(word) < 3:
        return False
    *_, first, second, third = _consonants(word)
    return first and not second and third and word[-1] not in "wxy"


def _replace(word: str, rules: dict[str, tuple[tuple[str, str], ...]], minimum: int) -> str:
    for suffix, replacement in rules.get(word[-1], ()) if word else ():
        if word.endswith(suffix):
            base = word[: len(word) - len(suffix)]
            return base + replacement if _measure(base) > minimum else word
    return word


def _by_last_letter(rules: tuple[tuple[str, str], ...]) -> dict[str, tuple[tuple[str, str], ...]]:
    """``rules`` grouped by the last letter of their suffix, in order: the first rule
    whose suffix ends a word is the first of its group that does."""
    grouped: dict[str, list[tuple[str, str]]] = {}
    for rule in rules:
        grouped.setdefault(rule[0][-1], []).append(rule)
    return {letter: tuple(found) for letter, found in grouped.items()}


_STEP2 = _by_last_letter((
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
))  # fmt: skip
_STEP3 = _by_last_letter((
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
))  # fmt: skip
_STEP4 = _by_last_letter(tuple((suffix, "") for suffix in (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)))  # fmt: skip


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Porter stem of lower-case ``word`` (words of two letters or less unchanged)."""
    if len(word) <= 2 or word[-1] not in _SUFFIX_ENDS or not word.isalpha():
        return word
    # Step 1a: plurals.
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    # Step 1b: -eed, -ed, -ing.
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = word[: -len(suffix)]
                if word.endswith(("at", "bl", "iz")):
                    word += "e"
                elif _double_consonant(word) and word[-1] not in "lsz":
                    word = word[:-1]
                elif _measure(word) == 1 and _cvc(word):
                    word += "e"
                break
    # Step 1c: y -> i after a vowel in the stem.
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    # Step 4: drop a suffix when the rest is long enough (m > 1).
    for suffix, _ in _STEP4.get(word[-1], ()) if word else ():
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if _measure(base) > 1 and (suffix != "ion" or base.endswith(("s", "t"))):
                word = base
            break
    # Step 5: final e and ll.
    if word.endswith("e"):
        base = word[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _cvc(base)):
            word = base
    if word.endswith("ll") and _measure(word) > 1:  # the cheap tests first
        word = word[:-1]
    return word
