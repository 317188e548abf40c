"""Core's tools: the scene, reading a document, the file tools and the guide for new agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterTool


@hookimpl
def register_tools(register: RegisterTool) -> None:
    from cuedeck import file_tools
    from cuedeck.guide import first_time_user_guide, get_tool_categories, get_tool_docs
    from cuedeck.reading import read_doc
    from cuedeck.scene import build_scene_tool

    # Registration order is the order MCP lists the tools in.
    register(
        build_scene_tool, name="build_scene", category="scene", read_only=True, idempotent=True
    )
    register(read_doc, category="docs", read_only=True, idempotent=True)
    register(file_tools.get_file_content, category="files", read_only=True, idempotent=True)
    register(file_tools.create_file, category="files")
    register(file_tools.edit_file, category="files")
    register(file_tools.delete_file, category="files", destructive=True)
    register(get_tool_categories, category="guide", read_only=True, idempotent=True)
    register(get_tool_docs, category="guide", read_only=True, idempotent=True)
    register(first_time_user_guide, category="guide", read_only=True, idempotent=True)
