"""``[tasks]``: the settings of task cards, registered through ``register_settings``."""

from __future__ import annotations

import attrs

from cuedeck.settings import setting


@attrs.frozen
class TaskSettings:
    """``[tasks]``: task cards."""

    default_priority: str = setting(
        "medium", "Priority of new cards.", ("low", "medium", "high", "critical")
    )
