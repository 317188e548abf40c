"""``cue board``: a local web page for cards, the dependency graph, scenes and memory.

The page calls the same registered tools as MCP and the CLI (``list_tasks``,
``update_task``, ``build_scene``...), so an edit on the page is an ``update_task`` with
the card's content hash, and a card changed on disk meanwhile is never overwritten.
"""

from __future__ import annotations

import click

from cuedeck_cli.context import current_state


@click.command()
@click.option("--port", type=int, default=0, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--no-open", is_flag=True, help="Print the address; do not open a browser.")
def board(port: int, no_open: bool) -> None:
    """Open the board of this workspace in the browser (served on loopback until Ctrl-C).

    The address carries a session token: only the page opened from it may use the board.
    """
    import secrets
    import webbrowser

    import anyio
    import uvicorn

    from cuedeck.serving.http_guard import guarded_http_protocol
    from cuedeck.serving.ports import listen
    from cuedeck_cli.board.api import BoardApi
    from cuedeck_cli.board.server import build_app

    workspace = current_state().workspace
    # Connections wait in the backlog until the server runs; a taken port is 1050.
    listener = listen("127.0.0.1", port)
    port = listener.getsockname()[1]
    token = secrets.token_urlsafe(24)
    url = f"http://127.0.0.1:{port}/open/{token}"

    async def serve() -> None:
        stop = anyio.Event()
        app = build_app(BoardApi(workspace), token, host="127.0.0.1", port=port, stop=stop)
        config = uvicorn.Config(
            app,
            log_level="warning",
            timeout_graceful_shutdown=1,
            http=guarded_http_protocol(),  # a deadline for every request's headers
            proxy_headers=False,  # loopback only: no proxy, so no forwarded address
        )
        server = uvicorn.Server(config)
        click.echo(f"board of {workspace.root} at {url}  (Ctrl-C to stop)", err=True)
        if not no_open:
            webbrowser.open(url)
        try:
            await server.serve(sockets=[listener])
        finally:
            stop.set()  # ends the live-change streams

    anyio.run(serve)
