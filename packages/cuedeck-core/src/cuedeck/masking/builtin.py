"""The built-in secret rules (:data:`cuedeck.masking.secret_rules.RULES`) as one masker.

Each rule names keywords; one Aho-Corasick pass over a text finds every keyword, and a
rule's pattern runs only around its own keywords (its scope: the line, the keyword's
start or end, or the whole text). Overlapping finds are settled so that a provider's
rule names the span rather than a generic one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    import re
    from collections.abc import Collection, Iterator, Sequence

    from cuedeck.masking.secret_rules import SecretRule
    from cuedeck.masking.spans import SecretSpan

_QUOTES = "\"'`"


@attrs.frozen
class _Compiled:
    """What :class:`BuiltinMasker` builds once: the keyword automaton and lookup tables."""

    automaton: Any
    owners: list[tuple[int, ...]]  # keyword number -> rule numbers
    text_rules: list[tuple[int, tuple[str, ...]]]  # whole-text rules and their keywords
    samples: frozenset[str]


class BuiltinMasker:
    """The built-in rule set (:data:`cuedeck.masking.secret_rules.RULES`), compiled on first use."""

    def __init__(self, rules: Sequence[SecretRule] | None = None) -> None:
        self._rules = tuple(rules) if rules is not None else None
        self._compiled: _Compiled | None = None

    @property
    def rules(self) -> tuple[SecretRule, ...]:
        """The rules this masker applies."""
        if self._rules is None:
            from cuedeck.masking.secret_rules import RULES

            self._rules = RULES
        return self._rules

    def _compile(self) -> _Compiled:
        import ahocorasick_rs

        from cuedeck.masking.secret_rules import DOCUMENTED_SAMPLES

        owners: dict[str, list[int]] = {}
        text_rules = []
        for number, rule in enumerate(self.rules):
            if rule.scope == "text":
                # One occurrence is enough to run the rule: a substring test is cheaper.
                text_rules.append((number, rule.keywords))
                continue
            for keyword in rule.keywords:
                owners.setdefault(keyword, []).append(number)
        # The DFA takes about 1 MB and runs about twice as fast as the default NFA.
        automaton = ahocorasick_rs.AhoCorasick(
            list(owners), implementation=ahocorasick_rs.Implementation.DFA
        )
        return _Compiled(
            automaton,
            [tuple(numbers) for numbers in owners.values()],
            text_rules,
            DOCUMENTED_SAMPLES,
        )

    def find_secrets(self, text: str, *, disabled: Collection[str] = ()) -> list[SecretSpan]:
        """Secrets in ``text``, without overlaps (provider rules win over generic ones).

        Rules named in ``disabled`` are skipped before overlaps are settled, so a generic
        rule still catches what a switched-off provider rule would have named.
        """
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = self._compile()
        owners = compiled.owners
        hits: dict[int, list[tuple[int, int]]] = {}
        for keyword, start, end in compiled.automaton.find_matches_as_indexes(
            text, overlapping=True
        ):
            for number in owners[keyword]:
                hits.setdefault(number, []).append((start, end))
        for number, keywords in compiled.text_rules:
            for keyword in keywords:
                if keyword in text:
                    hits[number] = []
                    break
        if not hits:
            return []
        rules = self.rules
        found: list[tuple[int, int, SecretRule]] = []
        for number in sorted(hits):
            rule = rules[number]
            if disabled and rule.name in disabled:
                continue
            for match in _matches(rule, text, hits[number]):
                group = rule.group if rule.group is not None else match.lastindex or 0
                start, end = match.span(group)
                if end - start > 1 and text[start] in _QUOTES and text[end - 1] == text[start]:
                    start, end = start + 1, end - 1
                value = text[start:end]
                if not value or value in compiled.samples:
                    continue
                if rule.check is not None and not rule.check(value, match):
                    continue
                found.append((start, end, rule))
        return _resolve(found)


def _resolve(found: list[tuple[int, int, SecretRule]]) -> list[SecretSpan]:
    """Disjoint spans; where spans overlap, a provider rule names the merged span."""
    from cuedeck.masking.spans import SecretSpan

    found.sort(key=lambda item: (item[0], item[2].generic, item[0] - item[1]))
    spans: list[SecretSpan] = []
    generic = False
    for start, end, rule in found:
        if spans and start < spans[-1].end:
            last = spans[-1]
            name = last.rule
            if generic and not rule.generic:
                name, generic = rule.name, False
            spans[-1] = SecretSpan(last.start, max(last.end, end), name)
        else:
            spans.append(SecretSpan(start, end, rule.name))
            generic = rule.generic
    return spans


def _matches(
    rule: SecretRule, text: str, positions: list[tuple[int, int]]
) -> Iterator[re.Match[str]]:
    """The matches of ``rule`` around its keyword ``positions`` (see SecretRule.scope)."""
    pattern = rule.pattern
    if rule.scope == "text":
        yield from pattern.finditer(text)
    elif rule.scope == "line":
        lines: dict[int, int] = {}
        for start, _ in positions:
            first = text.rfind("\n", 0, start) + 1
            if first not in lines:
                last = text.find("\n", start)
                lines[first] = len(text) if last == -1 else last
        for first, last in lines.items():
            yield from pattern.finditer(text, first, last)
    else:
        anchor = 0 if rule.scope == "start" else 1
        seen = set()
        for position in positions:
            at = position[anchor]
            if at not in seen:
                seen.add(at)
                if match := pattern.match(text, at):
                    yield match
