"""A team's repositories behind one MCP server: shared (``-global``) repositories that an
admin registers and CueDeck indexes once, personal activations (a working copy on a
branch), and composites that search several repositories as one corpus.

See docs/teams.md. Nothing here imports fastmcp at import time.
"""
