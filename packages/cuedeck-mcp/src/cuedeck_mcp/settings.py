"""``[mcp]``: the settings of the MCP server, registered through ``register_settings``."""

from __future__ import annotations

import attrs

from cuedeck.settings import setting


@attrs.frozen
class McpSettings:
    """``[mcp]``: the MCP server."""

    host: str = setting("127.0.0.1", "HTTP transport host (loopback by default).")
    port: int = setting(8765, "HTTP transport port.", minimum=1, maximum=65535)
    allowed_hosts: list[str] = setting(
        [],
        "Extra `Host` header values the HTTP transport accepts (`name` or `name:port`), "
        "beyond the bound address and loopback names.",
    )
    allowed_origins: list[str] = setting(
        [],
        "Browser origins (`scheme://host:port`) allowed to call the HTTP transport, beyond "
        "the server's own.",
    )
    local_role: str = setting(
        "write",
        "Role of clients without a token: stdio, and HTTP on loopback when no token is "
        "configured. Destructive tools need `admin` (and still their confirmation token).",
        ("read", "write", "admin"),
    )
    tools: list[str] = setting(
        ["core"],
        "Tools served: `core` (every tool but the files and git ones, and of memory only "
        "context_capture, context_restore and context_analyze_usage), `all`, categories "
        "(`files`, `git`, `memory`...) and/or tool names, as a list or one "
        'comma-separated string, e.g. `["core", "memory", "get_file_content"]` or `"core,git"`.',
    )
    resident_seconds: int = setting(
        900,
        "How long a stdio server stays warm after its last client (seconds): `cue mcp` "
        "relays to it, so a client's next start answers at once (Linux; docs/mcp.md). "
        "0 serves each client in its own process.",
        minimum=0,
    )
