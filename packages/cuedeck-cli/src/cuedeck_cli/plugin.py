"""The CueDeck plugin of cuedeck-cli (entry point ``cuedeck = cli``): CueDeck's own commands.

Registered exactly as a third party's commands are, so ``cue plugins`` names their
owner and ``CUEDECK_DISABLE_PLUGINS=cli`` removes them. Registered by import path with
their help lines: a command's module loads when it runs, and ``cue --help`` loads none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterCommand


#: CueDeck's own commands: import path and the help line ``cue --help`` lists (the first
#: sentence of the command's docstring; a test holds them equal).
COMMANDS = (
    (
        "cuedeck_cli.commands:init",
        "Create .cuedeck/ (cards, docs, cache, config.toml) and update .gitignore.",
    ),
    (
        "cuedeck_cli.commands:index",
        "Refresh the index; report files seen, parsed, reused and the time taken.",
    ),
    (
        "cuedeck_cli.commands:doctor",
        "Check config, frontmatter, references, anchors and cycles; exit 1 on errors.",
    ),
    (
        "cuedeck_cli.commands:status",
        "List what runs in the background for this workspace: pid, age and how it ends.",
    ),
    ("cuedeck_cli.commands:clean", "Remove .cuedeck/.cache/ (the index is rebuilt on next use)."),
    (
        "cuedeck_cli.scene_commands:scene",
        "Pack the active card and what it references into .cuedeck/SCENE.md.",
    ),
    (
        "cuedeck_cli.scene_commands:watch",
        "Rebuild the scene whenever a card, doc, indexed file or the config changes.",
    ),
    (
        "cuedeck_cli.installation:plugins",
        "List loaded plugins, their versions, hooks and what they register.",
    ),
    (
        "cuedeck_cli.installation:upgrade",
        "Upgrade CueDeck with the tool that installed it (uv tool, pipx or pip).",
    ),
    (
        "cuedeck_cli.board:board",
        "Open the board of this workspace in the browser (served on loopback until Ctrl-C).",
    ),
)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    for path, help_line in COMMANDS:
        register(path, help=help_line)
