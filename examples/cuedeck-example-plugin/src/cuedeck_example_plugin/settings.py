"""``[example]``: the example plugin's own config section."""

from __future__ import annotations

import attrs

from cuedeck.settings import setting


@attrs.frozen
class ExampleSettings:
    """``[example]``: the example plugin (word_count)."""

    min_words: int = setting(
        0,
        "word_count refuses a doc with fewer words than this (error 1040); 0 takes any doc.",
        minimum=0,
    )
