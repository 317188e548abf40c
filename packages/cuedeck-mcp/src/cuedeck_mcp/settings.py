"""``[mcp]``: the settings of the MCP server, registered through ``register_settings``."""

from __future__ import annotations

from typing import Any

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
    trusted_proxies: list[str] = setting(
        [],
        "Addresses or networks (`10.0.0.5`, `10.0.0.0/8`) of reverse proxies whose "
        "`X-Forwarded-For` and `X-Forwarded-Proto` the HTTP transport believes: the client's "
        "address (its rate-limit bucket, its logs) is then the one they forward. Empty (the "
        "default): no such header is believed, from anyone, loopback included.",
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


def proxy_options(settings: McpSettings) -> dict[str, Any]:
    """uvicorn's options for forwarded headers: believed only from ``trusted_proxies``
    (uvicorn itself believes them from loopback by default, so a local client could
    claim any address and get a fresh rate-limit bucket with each)."""
    if not settings.trusted_proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": list(settings.trusted_proxies)}
