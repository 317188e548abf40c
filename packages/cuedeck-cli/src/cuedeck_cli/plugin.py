"""The CueDeck plugin of cuedeck-cli (entry point ``cuedeck = cli``): CueDeck's own commands.

Registered exactly as a third party's commands are, so ``cue plugins`` names their
owner and ``CUEDECK_DISABLE_PLUGINS=cli`` removes them. Import-light: the command
modules load when the hook runs, and each command loads the rest when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterCommand


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    from cuedeck_cli import commands, scene_commands
    from cuedeck_cli.board import board

    for command in (
        commands.init,
        commands.index,
        commands.doctor,
        commands.clean,
        scene_commands.scene,
        scene_commands.watch,
        commands.plugins,
        commands.upgrade,
        board,
    ):
        register(command)
