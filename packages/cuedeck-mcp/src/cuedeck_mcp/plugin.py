"""The CueDeck plugin of cuedeck-mcp (entry point ``cuedeck = mcp``): the ``cue mcp`` command.

Kept import-light: ``cue --help`` loads every plugin module, so fastmcp is imported only
when the command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterCommand
    from cuedeck_mcp.server import Transport


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    import click

    @click.command("mcp")
    @click.option(
        "--transport",
        type=click.Choice(["stdio", "http"]),
        default="stdio",
        show_default=True,
        help="stdio for a client that starts `cue mcp` itself; http to serve many.",
    )
    @click.option("--host", help="HTTP host (default [mcp] host, 127.0.0.1).")
    @click.option("--port", type=int, help="HTTP port (default [mcp] port, 8765).")
    @click.option(
        "--tools",
        "profile",
        help="Tools to serve: core, all and/or names, comma-separated (default [mcp] tools).",
    )
    @click.option(
        "--insecure",
        is_flag=True,
        help="Serve a non-loopback HTTP address without CUEDECK_MCP_TOKEN.",
    )
    def mcp(
        transport: str, host: str | None, port: int | None, profile: str | None, insecure: bool
    ) -> None:
        """Serve this workspace's tools and resources over MCP.

        Over stdio, stdout carries only JSON-RPC and logs go to stderr. Over HTTP
        (streamable), set CUEDECK_MCP_TOKEN to require it as a bearer token; Host and
        Origin are checked against the bound address and [mcp] allowed_hosts/origins.
        """
        from cuedeck_mcp.server import serve

        workspace = click.get_current_context().obj.workspace
        serve(
            workspace,
            transport=cast("Transport", transport),
            host=host,
            port=port,
            insecure=insecure,
            profile=[part.strip() for part in profile.split(",") if part.strip()]
            if profile
            else None,
        )

    register(mcp)
