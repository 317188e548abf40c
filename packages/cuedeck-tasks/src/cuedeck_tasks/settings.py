"""``[tasks]``: the settings of task cards, registered through ``register_settings``."""

from __future__ import annotations

import attrs

from cuedeck.settings import setting

#: The shortest and longest lease a claim may ask for, in seconds.
MIN_LEASE = 1
MAX_LEASE = 7 * 24 * 3600


@attrs.frozen
class TaskSettings:
    """``[tasks]``: task cards."""

    default_priority: str = setting(
        "medium", "Priority of new cards.", ("low", "medium", "high", "critical")
    )
    lease_seconds: int = setting(
        900,
        "How long a claim on a card lasts unless renewed (claim_task, next_task, "
        "`cue card claim`), in seconds.",
        minimum=MIN_LEASE,
        maximum=MAX_LEASE,
    )
