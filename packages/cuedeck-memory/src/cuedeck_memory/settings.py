"""``[memory]``: the settings of context memory, registered through ``register_settings``."""

from __future__ import annotations

import attrs

from cuedeck.settings import setting


@attrs.frozen
class MemorySettings:
    """``[memory]``: context memory: segments, usage, GC and stash."""

    project: str = setting(
        "default",
        "The project the memory tools and `cue memory` use when a call names none.",
    )
    token_limit: int = setting(
        200000, "Context window that usage and health are measured against.", minimum=1
    )
    recency_window: int = setting(
        20,
        "The current task's latest messages and decisions that are GC roots (never pruned).",
        minimum=0,
    )
    half_life_hours: float = setting(
        24.0, "Half-life of a segment's freshness in the health score's age factor.", minimum=0.01
    )
    mask_on_capture: bool = setting(
        True, "Mask secrets in everything memory writes (segments, tasks, snapshots)."
    )
    max_tokens: int = setting(
        8000,
        "Default budget of a memory tool's whole reply, in tokens; longer replies page.",
        minimum=100,
    )
    search_mode: str = setting(
        "keyword",
        "How stash queries are ranked: keyword (always), or semantic or hybrid through the "
        "workspace's searchers when cuedeck-search is installed.",
    )
    scene: bool = setting(
        True,
        "Add the active card's pinned segments and decisions to its scene at priority 40, "
        "between direct and indirect references.",
        moved_from="scene.memory",
    )
