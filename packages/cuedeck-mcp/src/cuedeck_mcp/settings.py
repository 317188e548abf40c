"""``[mcp]`` and ``[rate_limits.<tool>]``: the settings of the MCP server, registered
through ``register_settings``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.config import check_type
from cuedeck.settings import RateLimit, setting

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck.errors import InvalidInput
    from cuedeck.plugins.host import PluginHost
    from cuedeck.workspace import Workspace


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


@attrs.frozen
class RateLimitSettings:
    """``[rate_limits.<tool>]``: per-client limits of MCP tools, over what each tool
    declares (a table of its own: core hands the section to :meth:`from_table`)."""

    #: Tool name -> its limit, as the file sets it.
    limits: dict[str, RateLimit] = attrs.field(factory=dict)

    @classmethod
    def from_table(
        cls, table: dict[str, Any], fail: Callable[[str, str, Any], InvalidInput]
    ) -> RateLimitSettings:
        """The limits of ``[rate_limits.<tool>]`` tables: ``per_minute`` (0: none) and
        ``burst`` (default: ``per_minute``), neither negative."""
        limits: dict[str, RateLimit] = {}
        for tool, spec in table.items():
            key = f"rate_limits.{tool}"
            if not isinstance(spec, dict) or set(spec) - {"per_minute", "burst"}:
                raise fail(key, "expected a table with per_minute and burst", spec)
            try:
                per_minute = check_type(spec.get("per_minute", 0), int)
                burst = check_type(spec.get("burst", per_minute), int)
            except ValueError as exc:
                raise fail(key, str(exc), spec) from None
            if per_minute < 0 or burst < 0:
                raise fail(key, "limits cannot be negative", spec)
            limits[tool] = RateLimit(per_minute=per_minute, burst=burst)
        return cls(limits)

    @classmethod
    def template(cls, plugins: PluginHost) -> list[str]:
        """``cue init``'s commented lines: every tool's declared limit."""
        lines = [
            "# Rate limits of MCP tools, per client session: a token bucket refilled at",
            "# per_minute with room for burst calls. Tools not listed are unlimited.",
        ]
        for tool, limit in declared_rate_limits(plugins).items():
            lines += [
                f"# [rate_limits.{tool}]",
                f"# per_minute = {limit.per_minute}",
                f"# burst = {limit.burst}",
            ]
        return lines


def declared_rate_limits(plugins: PluginHost) -> dict[str, RateLimit]:
    """Tool name -> the limit its plugin declared with ``register(..., rate_limit=)``."""
    return {name: tool.rate_limit for name, tool in plugins.tools().items() if tool.rate_limit}


def rate_limits(workspace: Workspace) -> dict[str, RateLimit]:
    """Tool name -> its limit in ``workspace``: declared by its plugin, overridden by
    ``[rate_limits.<tool>]``."""
    configured = workspace.config.section("rate_limits", RateLimitSettings).limits
    return {**declared_rate_limits(workspace.plugins), **configured}


def proxy_options(settings: McpSettings) -> dict[str, Any]:
    """uvicorn's options for forwarded headers: believed only from ``trusted_proxies``
    (uvicorn itself believes them from loopback by default, so a local client could
    claim any address and get a fresh rate-limit bucket with each)."""
    if not settings.trusted_proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": list(settings.trusted_proxies)}
