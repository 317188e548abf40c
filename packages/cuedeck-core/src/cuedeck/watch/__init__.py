"""Watching the workspace: a watcher process per workspace that knows what
changed without a stat of every file."""
