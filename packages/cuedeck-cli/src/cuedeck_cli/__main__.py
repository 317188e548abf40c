"""``python -m cuedeck_cli`` runs ``cue``."""

from cuedeck_cli.app import main

main()
