"""Secret masking of every text that leaves the process.

Maskers (the ``register_maskers`` hook) find secrets; a :class:`MaskSession` replaces
each by ``[REDACTED:<rule>#<n>]``, where ``n`` numbers the distinct secrets of a rule
within the session (one output: a scene, a tool reply), so the same secret always gets
the same placeholder. ``[masking]`` config switches rules off, allow-lists paths and
values, and adds patterns. Core registers ``builtin``, the rule set of
:mod:`cuedeck.masking.secret_rules`.
"""

from __future__ import annotations

import bisect
import copy
import functools
import re
from typing import TYPE_CHECKING, Any

from cuedeck.masking.builtin import BuiltinMasker

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    import pathspec

    from cuedeck.masking.spans import Masker, SecretSpan
    from cuedeck.settings import MaskingSettings

#: What a placeholder looks like; nothing a masker finds may look like one.
PLACEHOLDER = re.compile(r"\[REDACTED:([^\]#\s]+)#(\d+)\]")
#: Joins texts masked in one pass (:meth:`MaskSession.mask_many`): line ends keep line-
#: scoped rules within one text, and the sign between them is in no rule's alphabet.
JOINT = "\n\u241e\n"


class PatternMasker:
    """Secrets matched by user patterns (``[masking] patterns``): the whole match."""

    def __init__(self, patterns: dict[str, re.Pattern[str]]) -> None:
        self.patterns = patterns

    def find_secrets(self, text: str) -> list[SecretSpan]:
        from cuedeck.masking.spans import SecretSpan

        return [
            SecretSpan(match.start(), match.end(), name)
            for name, pattern in self.patterns.items()
            for match in pattern.finditer(text)
            if match.end() > match.start()
        ]


@functools.lru_cache(maxsize=16)
def _compile_patterns(items: tuple[tuple[str, str], ...]) -> dict[str, re.Pattern[str]]:
    from cuedeck.errors import InvalidInput
    from cuedeck.layout import CONFIG_PATH

    compiled = {}
    for name, source in items:
        try:
            compiled[name] = re.compile(source)
        except re.error as exc:
            raise InvalidInput(
                f"masking pattern {name!r} is not a valid regular expression: {exc}",
                path=CONFIG_PATH,
                field=f"masking.patterns.{name}",
                help="fix the pattern (Python `re` syntax) or remove it",
            ) from None
    return compiled


@functools.lru_cache(maxsize=16)
def _path_spec(globs: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(globs)


#: Keys whose values CueDeck computes itself (content and commit hashes): never secrets,
#: and the entropy rule could mistake one for a token.
UNMASKED_KEYS = frozenset(
    {
        "hash",
        "sha256",
        "expected_hash",
        "current_hash",
        "actual_hash",
        "content_hash",
        "new_content_hash",
        "current_content_hash",
        "text_hash",
        "commit_hash",
        "short_hash",
    }
)


class MaskSession:
    """Masks the texts of one output (a scene, a tool reply); numbering is per session.

    ``counts`` holds the number of secrets replaced per rule, and ``placeholders`` the
    placeholder issued for each distinct secret (placeholder -> rule).
    """

    def __init__(
        self, settings: MaskingSettings | None = None, maskers: Iterable[Masker] | None = None
    ) -> None:
        """A session with ``maskers`` (default: the built-in rules) under ``settings``
        (``[masking]``; default: on, nothing switched off or allowed). The workspace makes
        one with its maskers and settings (:meth:`cuedeck.workspace.Workspace.mask_session`);
        output made where no workspace is open (``cue --help``, the error saying there is
        none) uses the defaults."""
        self.enabled = True
        self.counts: dict[str, int] = {}
        self.placeholders: dict[str, str] = {}
        self._numbers: dict[tuple[str, str], str] = {}
        self._next: dict[str, int] = {}
        self._learned: dict[str, str] = {}  # secret -> rule, from the inputs of a request
        self._scanned: set[str] = set()  # the inputs learned from (each is looked at once)
        self._disabled: frozenset[str] = frozenset()
        self._allow_values: frozenset[str] = frozenset()
        self._allow_paths: pathspec.GitIgnoreSpec | None = None
        self._maskers: list[Masker] = [BuiltinMasker()] if maskers is None else list(maskers)
        if settings is not None:
            self._configure(settings)

    def _configure(self, settings: MaskingSettings) -> None:
        """The ``[masking]`` settings: switches, allow-lists and user patterns."""
        self.enabled = settings.enabled
        self._disabled = frozenset(settings.disabled_rules)
        self._allow_values = frozenset(settings.allow_values)
        if settings.allow_paths:
            self._allow_paths = _path_spec(tuple(settings.allow_paths))
        if settings.patterns:
            patterns = _compile_patterns(tuple(sorted(settings.patterns.items())))
            self._maskers.append(PatternMasker(patterns))

    def allowed(self, path: str | None) -> bool:
        """Whether ``path`` is allow-listed (its text is never masked)."""
        return bool(path and self._allow_paths is not None and self._allow_paths.match_file(path))

    def fork(self) -> MaskSession:
        """A copy that knows what this session knows (its rules, the secrets it learned,
        the placeholders it issued) and goes on apart: masking a draft of a reply in it
        says what the reply will be without numbering anything here."""
        twin = copy.copy(self)
        twin.counts = dict(self.counts)
        twin.placeholders = dict(self.placeholders)
        twin._numbers = dict(self._numbers)
        twin._next = dict(self._next)
        twin._learned = dict(self._learned)
        twin._scanned = set(self._scanned)
        return twin

    def learn(self, text: str) -> None:
        """Remember the secrets in ``text`` (what a request sent) to mask them wherever
        they come back, even in a form no rule recognises: a database URL normalised as
        a path loses the ``//`` its rule looks for, but not its password."""
        if text in self._scanned:
            return
        self._scanned.add(text)
        if self.enabled:
            for span in self.find(text):
                self._learned[text[span.start : span.end]] = span.rule

    def learn_many(self, texts: Iterable[str]) -> None:
        """:meth:`learn` each of ``texts``, the built-in rules run once over them joined."""
        fresh = [text for text in dict.fromkeys(texts) if text not in self._scanned]
        self._scanned.update(fresh)
        if self.enabled and fresh:
            for text, spans in zip(fresh, self._found_in_each(fresh), strict=True):
                for span in spans:
                    self._learned[text[span.start : span.end]] = span.rule

    def mask_many(self, texts: Sequence[str], *, learn: bool = False) -> list[str]:
        """``texts`` masked as :meth:`mask` masks each, the built-in rules run once over
        them joined (a secret found across two of them sends each text through the rules
        alone). With ``learn``, their secrets are learned as :meth:`learn` would (texts a
        request sent), without a second pass."""
        if not self.enabled:
            if learn:
                self._scanned.update(texts)
            return list(texts)
        found = self._found_in_each(texts)
        masked = []
        for text, spans in zip(texts, found, strict=True):
            if learn:
                self._scanned.add(text)
                for span in spans:
                    self._learned[text[span.start : span.end]] = span.rule
            masked.append(self._replaced(text, spans))
        return masked

    def find(self, text: str) -> list[SecretSpan]:
        """Secrets in ``text`` from every masker, merged where they overlap."""
        spans: list[tuple[int, int, int, str]] = []
        for order, masker in enumerate(self._maskers):
            if isinstance(masker, BuiltinMasker):
                found: Iterable[SecretSpan] = masker.find_secrets(text, disabled=self._disabled)
            else:
                found = masker.find_secrets(text)
            self._add(spans, text, order, found)
        return self._settled(text, spans)

    def _found_in_each(self, texts: Sequence[str]) -> list[list[SecretSpan]]:
        """:meth:`find` of each of ``texts``, the built-in rules run over them joined.

        The built-in rules find in a text what they find in it joined to others (none
        anchors at a string's start or end, and line ends part the texts); a plugin's or
        a user's masker might not (``^`` and ``$`` in a pattern), so it sees each text
        alone.
        """
        if len(texts) < 2 or any(JOINT in text for text in texts):
            return [self.find(text) for text in texts]
        joined = JOINT.join(texts)
        starts = []
        at = 0
        for text in texts:
            starts.append(at)
            at += len(text) + len(JOINT)
        spans: list[list[tuple[int, int, int, str]]] = [[] for _ in texts]
        for order, masker in enumerate(self._maskers):
            if not isinstance(masker, BuiltinMasker):
                find = masker.find_secrets
                for text, found in zip(texts, spans, strict=True):
                    if secrets := find(text):
                        self._add(found, text, order, secrets)
                continue
            for span in masker.find_secrets(joined, disabled=self._disabled):
                number = bisect.bisect_right(starts, span.start) - 1
                start = starts[number]
                if span.end > start + len(texts[number]):
                    # Into the joint: the rules see each text alone.
                    return [self.find(text) for text in texts]
                if span.rule not in self._disabled:
                    spans[number].append((span.start - start, order, span.end - start, span.rule))
        return [self._settled(text, found) for text, found in zip(texts, spans, strict=True)]

    def _add(
        self,
        spans: list[tuple[int, int, int, str]],
        text: str,
        order: int,
        found: Iterable[SecretSpan],
    ) -> None:
        """Add to ``spans`` what the ``order``-th masker found in ``text``."""
        for span in found:
            if span.rule not in self._disabled and 0 <= span.start < span.end <= len(text):
                spans.append((span.start, order, span.end, span.rule))

    def _settled(self, text: str, spans: list[tuple[int, int, int, str]]) -> list[SecretSpan]:
        """The secrets of ``text``: what the maskers found (``spans``: start, masker, end,
        rule) and the learned secrets, merged where they overlap, allowed values left out."""
        from cuedeck.masking.spans import SecretSpan

        if not spans and not self._learned:
            return []  # most texts: nothing to merge
        for secret, rule in self._learned.items():
            start = text.find(secret)
            while start >= 0:
                spans.append((start, len(self._maskers), start + len(secret), rule))
                start = text.find(secret, start + 1)
        spans.sort()
        merged: list[SecretSpan] = []
        for start, _, end, rule in spans:
            if merged and start < merged[-1].end:
                last = merged[-1]
                merged[-1] = SecretSpan(last.start, max(last.end, end), last.rule)
            else:
                merged.append(SecretSpan(start, end, rule))
        return [s for s in merged if text[s.start : s.end] not in self._allow_values]

    def mask(self, text: str, *, path: str | None = None) -> str:
        """``text`` with every secret replaced by ``[REDACTED:rule#n]``."""
        if not self.enabled or not text or self.allowed(path):
            return text
        return self._replaced(text, self.find(text))

    def _replaced(self, text: str, spans: list[SecretSpan]) -> str:
        """``text`` with each of ``spans`` (sorted, disjoint) replaced by its placeholder."""
        if not spans:
            return text
        parts: list[str] = []
        position = 0
        for span in spans:
            parts.append(text[position : span.start])
            parts.append(self.placeholder(span.rule, text[span.start : span.end]))
            self.counts[span.rule] = self.counts.get(span.rule, 0) + 1
            position = span.end
        parts.append(text[position:])
        return "".join(parts)

    def mask_json(self, value: Any, path: str | None = None) -> Any:
        """``value`` (JSON-like) with every string masked, dict keys included; a dict's
        ``path`` names the file its strings are masked as (for ``allow_paths``).

        Each distinct string is masked once, all of them in one :meth:`mask_many` (a
        reply listing a thousand ids is one pass of the rules), numbered in the order a
        walk of ``value`` meets them.
        """
        shown: dict[str | None, bool] = {}  # where -> whether its strings stay as they are

        def stays(where: str | None) -> bool:
            found = shown.get(where)
            if found is None:
                found = shown[where] = not self.enabled or self.allowed(where)
            return found

        masked: dict[str, str] = {}
        _strings_to_mask(value, path, stays, masked)
        if masked:
            texts = list(masked)
            masked.update(zip(texts, self.mask_many(texts), strict=True))
        return _rebuilt(value, path, stays, masked)

    def placeholder(self, rule: str, secret: str) -> str:
        """The placeholder of ``secret`` caught by ``rule`` (the same one every time)."""
        key = (rule, secret)
        found = self._numbers.get(key)
        if found is None:
            number = self._next.get(rule, 0) + 1
            self._next[rule] = number
            found = self._numbers[key] = f"[REDACTED:{rule}#{number}]"
            self.placeholders[found] = rule
        return found


# What :meth:`MaskSession.mask_json` walks with: module functions rather than closures of
# the call, which would refer to themselves and keep the session (and every text it has
# learned from) alive until the cyclic collector, rarely run in a server, finds them.


def _strings_to_mask(
    node: Any, where: str | None, stays: Callable[[str | None], bool], found: dict[str, str]
) -> None:
    """Add to ``found`` the strings of ``node`` (keys too) that are not allowed as they are,
    in the order a walk meets them."""
    if isinstance(node, str):
        if not stays(where):
            found[node] = node
    elif isinstance(node, dict):
        own = node.get("path")
        here = own if isinstance(own, str) else where
        for key, item in node.items():
            if isinstance(key, str) and not stays(here):
                found[key] = key
            if key not in UNMASKED_KEYS:
                _strings_to_mask(item, here, stays, found)
    elif isinstance(node, list | tuple):
        shown = stays(where)
        for item in node:
            if isinstance(item, str):  # most lists hold strings (ids): no call each
                if not shown:
                    found[item] = item
            else:
                _strings_to_mask(item, where, stays, found)


def _rebuilt(
    node: Any, where: str | None, stays: Callable[[str | None], bool], masked: dict[str, str]
) -> Any:
    """``node`` with its strings replaced by their ``masked`` forms (tuples become lists)."""
    if isinstance(node, str):
        return node if stays(where) else masked[node]
    if isinstance(node, dict):
        own = node.get("path")
        here = own if isinstance(own, str) else where
        keep = stays(here)
        # Keys are masked like values: a card id or a path can be a dict's key.
        return {
            (masked[key] if isinstance(key, str) and not keep else key): (
                item if key in UNMASKED_KEYS else _rebuilt(item, here, stays, masked)
            )
            for key, item in node.items()
        }
    if isinstance(node, list | tuple):
        shown = stays(where)
        return [
            (item if shown else masked[item])
            if isinstance(item, str)
            else _rebuilt(item, where, stays, masked)
            for item in node
        ]
    return node
