"""Where the MCP plugin keeps its files under ``.cuedeck/``; the private ones are
registered with ``register_paths`` (no tool reads or writes them)."""

from __future__ import annotations

from cuedeck.layout import CACHE_DIR, WORKSPACE_DIR

#: Hashes and roles of the MCP bearer tokens (never the tokens): `cue mcp token add`.
ACCESS_FILE = "access.toml"
ACCESS_PATH = f"{WORKSPACE_DIR}/{ACCESS_FILE}"
#: The rate-limit buckets of the local (stdio) client, kept across server restarts
#: (under core's cache folder, private already).
RATE_LIMITS_DB = f"{CACHE_DIR}/ratelimits.sqlite3"
