"""Core's tools: the scene, reading a document, the file tools and the guide for new agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterTool


@hookimpl
def register_tools(register: RegisterTool) -> None:
    from cuedeck.settings import RateLimit

    # Import paths: a command that runs one tool imports that tool's module alone.
    # Registration order is the order MCP lists the tools in.
    register(
        "cuedeck.serving.scene_tool:build_scene_tool",
        name="build_scene",
        category="scene",
        read_only=True,
        idempotent=True,
    )
    register(
        "cuedeck.serving.read_doc:read_doc",
        category="docs",
        read_only=True,
        idempotent=True,
        rate_limit=RateLimit(per_minute=30, burst=50),
    )
    files = "cuedeck.serving.file_tools"
    register(f"{files}:get_file_content", category="files", read_only=True, idempotent=True)
    # writes: a call on files another agent's claim holds is refused unless forced.
    register(f"{files}:create_file", category="files", writes="file_path")
    register(f"{files}:edit_file", category="files", writes="file_path")
    register(f"{files}:delete_file", category="files", destructive=True, writes="file_path")
    guide = "cuedeck.serving.guide"
    register(f"{guide}:get_tool_categories", category="guide", read_only=True, idempotent=True)
    register(f"{guide}:get_tool_docs", category="guide", read_only=True, idempotent=True)
    register(f"{guide}:first_time_user_guide", category="guide", read_only=True, idempotent=True)
