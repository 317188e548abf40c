"""MCP resources: the scene, every card, every indexed markdown file. All masked.

``cuedeck://cards/{id}`` are listed one by one (so ``resources/list_changed`` means
something when a card is created); ``cuedeck://docs/{path}`` is a template over every
indexed file, with ``path`` workspace-relative (``.cuedeck/docs/auth.md``, or
``docs/auth.md`` for the same file, as in ``read_doc``). ``cuedeck://scene`` is the
active card's scene, listed when a ``build_scene`` tool is registered.
"""

from __future__ import annotations

import functools
import weakref
from typing import TYPE_CHECKING, Any

from fastmcp.resources.base import Resource
from fastmcp.resources.template import ResourceTemplate
from fastmcp.server.providers import Provider
from pydantic import PrivateAttr

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from fastmcp.utilities.versions import VersionSpec

    from cuedeck_mcp.runtime import WorkspaceRuntime

MARKDOWN = "text/markdown"
CARD_PREFIX = "cuedeck://cards/"
DOC_TEMPLATE = "cuedeck://docs/{path*}"
SCENE_URI = "cuedeck://scene"


class WorkspaceResource(Resource):
    """A resource whose text is made on the runtime's worker thread."""

    _runtime: WorkspaceRuntime = PrivateAttr()
    _make_text: Callable[[], str] = PrivateAttr()

    @classmethod
    def of(
        cls, runtime: WorkspaceRuntime, make_text: Callable[[], str], **fields: Any
    ) -> WorkspaceResource:
        """A markdown resource whose text is ``make_text()``."""
        resource = cls(mime_type=MARKDOWN, **fields)
        resource._runtime = runtime
        resource._make_text = make_text
        return resource

    async def read(self) -> str:
        return await self._runtime.run(self._make_text)


class WorkspaceResources(Provider):
    """The scene, cards and docs of the workspace behind ``runtime``."""

    def __init__(self, runtime: WorkspaceRuntime, *, scene: bool) -> None:
        super().__init__()
        self.runtime = runtime
        self.scene = scene

        # FastMCP caches a type adapter per template function for as long as it runs, so
        # the functions hold the runtime weakly: a dropped server's workspace (its file
        # watcher, its databases) is collected with it.
        held = weakref.ref(runtime)

        def alive() -> WorkspaceRuntime:
            found = held()
            if found is None:
                raise RuntimeError("this server was closed")
            return found

        async def card(id: str) -> str:
            found = alive()
            return await found.run(found.card_text, id)

        async def doc(path: str) -> str:
            found = alive()
            return await found.run(found.doc_text, path)

        self.templates = [
            ResourceTemplate.from_function(
                card,
                uri_template=CARD_PREFIX + "{id}",
                name="card",
                description="A task card by its 6-character id",
                mime_type=MARKDOWN,
            ),
            ResourceTemplate.from_function(
                doc,
                uri_template=DOC_TEMPLATE,
                name="doc",
                description="An indexed markdown file by workspace-relative path",
                mime_type=MARKDOWN,
            ),
        ]

    def _scene(self) -> Resource:
        return WorkspaceResource.of(
            self.runtime,
            self.runtime.scene_text,
            uri=SCENE_URI,
            name="scene",
            description="The active card's scene: what it needs, within the token budget",
        )

    async def _list_resources(self) -> Sequence[Resource]:
        runtime = self.runtime
        resources = [self._scene()] if self.scene else []
        for card_id, title in await runtime.run(runtime.card_titles):
            resources.append(
                WorkspaceResource.of(
                    runtime,
                    functools.partial(runtime.card_text, card_id),
                    uri=CARD_PREFIX + card_id,
                    name=f"card {card_id}",
                    description=title,
                )
            )
        return resources

    async def _get_resource(self, uri: str, version: VersionSpec | None = None) -> Resource | None:
        # Cards are read through their template, which reports a missing id with a
        # did-you-mean; listing every card to find one would be wasted work.
        return self._scene() if uri == SCENE_URI and self.scene else None

    async def _list_resource_templates(self) -> Sequence[ResourceTemplate]:
        return self.templates
