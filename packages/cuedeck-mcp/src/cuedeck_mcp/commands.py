"""``cue mcp``: serve the workspace over MCP, and the bearer tokens of its HTTP transport.

Loaded by ``cue --help`` (the plugin registers the group), so only click is imported at
module level; fastmcp and the server load when a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import click

from cuedeck_mcp.paths import ACCESS_PATH

if TYPE_CHECKING:
    from cuedeck_mcp.server import Transport


@click.group("mcp", invoke_without_command=True)
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
    help="Tools to serve, comma-separated: core, all, categories (memory, git, files) "
    "and/or tool names (default [mcp] tools).",
)
@click.option(
    "--workspace",
    "workspaces",
    multiple=True,
    metavar="NAME=PATH",
    help="Serve this workspace at /mcp/NAME (repeat for several; HTTP only).",
)
@click.option(
    "--team",
    metavar="HOME",
    help="Serve the team whose home is HOME at /mcp: shared repositories, activations "
    "and composites by repository_alias (HTTP only; docs/teams.md).",
)
@click.option(
    "--insecure",
    is_flag=True,
    help="Serve a non-loopback HTTP address although a workspace has no token.",
)
def mcp(
    transport: str,
    host: str | None,
    port: int | None,
    profile: str | None,
    workspaces: tuple[str, ...],
    team: str | None,
    insecure: bool,
) -> None:
    """Serve this workspace's tools and resources over MCP.

    Over stdio, stdout carries only JSON-RPC and logs go to stderr. Over HTTP
    (streamable), clients present a bearer token once any is configured (`cue mcp
    token add`); Host and Origin are checked against the bound address and [mcp]
    allowed_hosts/origins.
    """
    context = click.get_current_context()
    if context.invoked_subcommand is not None:
        return
    from cuedeck.errors import InvalidInput
    from cuedeck.progress import reporting_to

    if (workspaces or team) and transport != "http":
        option = "--team" if team else "--workspace"
        raise InvalidInput(f"{option} serves over HTTP: add --transport http", field=option)
    tools = [part.strip() for part in profile.split(",") if part.strip()] if profile else None
    # Not `cue`'s stderr progress lines, which the server's tasks and worker thread
    # would inherit (startup indexing included): progress goes to a client that asked.
    with reporting_to(None):
        if workspaces or team:  # the HTTP deployment's code, not imported for stdio
            from cuedeck_mcp.asgi import parse_workspaces, serve_workspaces, team_home

            served = parse_workspaces(workspaces) if workspaces else {}
            serve_workspaces(
                served,
                team=team_home(team, field="--team") if team else None,
                host=host,
                port=port,
                profile=tools,
                insecure=insecure,
            )
            return
        workspace = context.obj.workspace
        if transport == "stdio":
            from cuedeck_mcp import resident
            from cuedeck_mcp.settings import McpSettings

            seconds = workspace.config.section("mcp", McpSettings).resident_seconds
            if resident.run(workspace, tools, seconds):
                return
        from cuedeck_mcp.server import serve

        serve(
            workspace,
            transport=cast("Transport", transport),
            host=host,
            port=port,
            insecure=insecure,
            profile=tools,
        )


@mcp.command("stop")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def stop(as_json: bool) -> None:
    """Stop this workspace's resident stdio servers (clients start a new one when they
    next start `cue mcp`)."""
    import json

    from cuedeck_mcp.resident_registry import stop_servers

    stopped = stop_servers(click.get_current_context().obj.workspace.root)
    if as_json:
        click.echo(json.dumps({"stopped": stopped}, indent=2))
        return
    for entry in stopped:
        click.echo(f"stopped the resident server {entry['server']} (pid {entry['pid']})")
    if not stopped:
        click.echo("no resident server serves this workspace")


@mcp.group("token")
def token() -> None:
    """Bearer tokens of the HTTP transport and their roles (read < write < admin)."""


@token.command("add")
@click.argument("name")
@click.option(
    "--role",
    type=click.Choice(["read", "write", "admin"]),
    default="read",
    show_default=True,
    help="read: read-only tools; write: also tools that change things; admin: also "
    "destructive ones.",
)
def token_add(name: str, role: str) -> None:
    """Make a token for NAME; it is printed once, only its hash is kept."""
    from cuedeck_mcp.roles import add_grant

    root = click.get_current_context().obj.workspace.root
    secret = add_grant(root, name, role)
    click.echo(secret)
    click.echo(
        f"token {name!r} ({role}) added to .cuedeck/access.toml; this is the only time "
        "it is shown. Clients send it as 'Authorization: Bearer <token>'.",
        err=True,
    )


@token.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def token_list(as_json: bool) -> None:
    """List the tokens' names, roles and dates (never the tokens)."""
    import json

    from cuedeck_mcp.roles import load_grants

    root = click.get_current_context().obj.workspace.root
    grants = load_grants(root)
    rows = [{"name": g.name, "role": g.role, "created": g.created} for g in grants]
    if as_json:
        click.echo(json.dumps({"tokens": rows}, indent=2))
        return
    for row in rows:
        click.echo(f"{row['name']:24} {row['role']:6} {row['created']}")
    if not rows and (root / ACCESS_PATH).exists():
        click.echo(f"no tokens, but {ACCESS_PATH} exists: HTTP refuses every client "
                   "(delete the file to serve loopback with [mcp] local_role)")  # fmt: skip
    elif not rows:
        click.echo("no tokens: HTTP on loopback serves everyone with [mcp] local_role")


@token.command("remove")
@click.argument("name")
def token_remove(name: str) -> None:
    """Revoke the token named NAME (a running server stops accepting it at once)."""
    from cuedeck_mcp.roles import remove_grant

    left = remove_grant(click.get_current_context().obj.workspace.root, name)
    click.echo(f"token {name!r} removed")
    if not left:
        click.echo(f"no token left: {ACCESS_PATH} removed, so loopback clients need no "
                   "token and other addresses are refused")  # fmt: skip
