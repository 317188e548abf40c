"""What ``tools/list`` says of each served tool, remembered between server starts.

A tool's face is its one-line description and its input and output schemas. Making one
means importing the tool's module (and all it imports: numpy for memory's) and turning
its types into JSON schemas: for the default profile, most of what a server did after
``initialize`` before it could answer. Faces are remembered (:mod:`cuedeck.system.remembered`)
under a key that changes whenever one could: the versions of pydantic and FastMCP, the
distributions on ``sys.path`` (anything installed, upgraded or removed) and every Python
file of the packages the tools live in, CueDeck's and cuedeck_mcp's own (inode, size and
times: any edit; a file changed in the last two seconds, when a second edit could keep
all four, leaves the faces unremembered). A tool whose face is remembered was imported
and checked when it was made; it is imported again when it is first called. Faces are
made for the tools not remembered only, each checked first: one that does not load is
left out, as before.
"""

from __future__ import annotations

import json
import sys
import zlib
from typing import TYPE_CHECKING, Any

from cuedeck.system.remembered import file_key, recall, remember, tree_keys
from cuedeck_mcp.adapter import Face, face_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cuedeck.plugins.host import PluginHost
    from cuedeck.plugins.tools import Tool
    from cuedeck_mcp.replies import Replies


def _target(tool: Tool) -> str:
    """Where ``tool`` lives, as ``module:function`` (registered by path or as a function)."""
    if isinstance(tool.target, str):
        return tool.target
    return f"{tool.target.__module__}:{tool.target.__qualname__}"


def _sources(packages: Iterable[str]) -> list[Any]:
    """Every Python file of ``packages`` (top-level names; a plugin may be one module)
    with its :func:`file_key`."""
    found: list[Any] = []
    for package in sorted(packages):
        module = sys.modules.get(package)
        single = getattr(module, "__file__", None)
        if single and not hasattr(module, "__path__"):
            found.append([single, file_key(single)])
        for folder in getattr(module, "__path__", None) or []:
            found.extend(tree_keys(folder))
    return found


def _key(targets: Iterable[str]) -> list[Any]:
    """What every remembered face depends on (see the module)."""
    import fastmcp
    import pydantic

    from cuedeck.plugins.entry_points import path_stamps

    packages = {target.partition(".")[0].partition(":")[0] for target in targets}
    packages |= {"cuedeck", "cuedeck_mcp"}
    for package in packages:  # a package not imported yet has no __path__ to list
        __import__(package)
    return [pydantic.VERSION, fastmcp.__version__, path_stamps(), _sources(packages)]


def _settling(sources: list[Any]) -> bool:
    """Whether a source file changed so recently that it may change again with the same
    times and size (a stat cannot tell such an edit): its faces are then not remembered."""
    from cuedeck.plugins.entry_points import settled

    return not settled(max((stamp[3] for _, stamp in sources if stamp), default=0))


def faces(host: PluginHost, tools: Mapping[str, Tool], replies: Replies) -> dict[str, Face]:
    """The faces of ``tools`` that load, by name: remembered, or made now and
    remembered; a tool that does not load is a failure of its plugin, left out."""
    targets = {name: _target(tool) for name, tool in tools.items()}
    key = _key(targets.values())
    where = json.dumps([sys.executable, sys.path]).encode()
    name = f"mcp-faces/{zlib.crc32(where):08x}.json"
    known = recall(name, key)
    stored: dict[str, Any] = known if isinstance(known, dict) else {}
    found: dict[str, Face] = {}
    for tool_name, tool in tools.items():
        entry = stored.get(tool_name)
        if isinstance(entry, dict) and entry.get("as") == [
            targets[tool_name],
            tool.plugin,
            replies,
        ]:
            found[tool_name] = Face(*entry["face"])
    missing = [n for n in tools if n not in found]
    if missing:
        for tool_name in host.checked(missing):  # imported and checked now
            found[tool_name] = face_of(tools[tool_name], replies)
        entries = {
            n: {"as": [targets[n], tools[n].plugin, replies], "face": list(face)}
            for n, face in found.items()
        }
        if not _settling(key[3]):
            remember(name, key, {**stored, **entries})
    return {n: found[n] for n in tools if n in found}
