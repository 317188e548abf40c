"""SCAFFOLD: filled in by the work on its issue."""
