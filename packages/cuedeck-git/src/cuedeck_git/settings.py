"""``[git]``: the settings of the git tools, registered through ``register_settings``."""

from __future__ import annotations

import attrs

from cuedeck.settings import setting


@attrs.frozen
class GitSettings:
    """``[git]``: the git tools."""

    timeout: float = setting(
        30.0, "Seconds a local git command may run before it is stopped.", minimum=1
    )
    network_timeout: float = setting(
        120.0, "Seconds git_push, git_pull and git_fetch may run.", minimum=1
    )
