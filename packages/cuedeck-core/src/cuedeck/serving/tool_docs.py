"""Tool references: the one source of each tool's documentation.

A tool's TL;DR is its docstring's first line. The rest of its reference (use cases,
requirements, what it returns, an example call with its real reply, common errors with
their fix, related tools, and optionally its step in the first-time guide) lives in
``reference.yaml`` at the top of the distribution's
import package (``cuedeck/reference.yaml``, each plugin's own, a third
party's own), keyed by tool name. Parameters come from the tool's input schema.

Everything else is derived from it: ``get_tool_docs``, the guide's example calls, the
MCP description (the TL;DR only, so ``tools/list`` stays small) and docs/tools.md. The
example replies are written by ``scripts/tool_docs.py --update``, which runs every
example against a copy of the demo workspace; a test runs them again and fails when a
reply or docs/tools.md no longer matches.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from cuedeck.plugins.tools import Tool

FILE = "reference.yaml"
#: The parts every reference must have, in the order docs/tools.md shows them.
PARTS = ("use_cases", "requires", "returns", "example", "errors", "related")


@attrs.frozen
class ErrorHint:
    """A common error: its code, when it happens and how to fix it."""

    code: int
    when: str
    fix: str


@attrs.frozen
class Example:
    """An example call: files and calls that set the scene, the arguments, the real reply."""

    arguments: dict[str, Any]
    reply: Any = None
    before: list[dict[str, Any]] = attrs.field(factory=list)
    files: dict[str, str] = attrs.field(factory=dict)
    placeholders: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen
class GuideHint:
    """Where a tool comes in ``first_time_user_guide``'s walkthrough: its ``step`` (steps
    run in increasing order), why to call it, and an example call whose ``"{card}"``,
    ``"{topic}"`` and ``"{doc}"`` are filled from the workspace (``example_without_card``
    when it has no card)."""

    step: int
    why: str
    example: Any
    example_without_card: Any = None


@attrs.frozen
class Reference:
    """The reference of one tool; ``missing`` names the parts it lacks."""

    use_cases: list[str]
    requires: str
    returns: str
    example: Example | None
    errors: list[ErrorHint]
    related: list[str]
    missing: tuple[str, ...] = ()
    guide: GuideHint | None = None


@functools.cache
def package_references(package: str) -> dict[str, Any]:
    """The raw ``reference.yaml`` of an import package (empty when it has none)."""
    import yaml

    try:
        text = importlib.resources.files(package).joinpath(FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, NotADirectoryError):
        return {}
    data = yaml.safe_load(text) or {}
    return data if isinstance(data, dict) else {}


def home(tool: Tool) -> str:
    """The import package whose ``reference.yaml`` documents ``tool``."""
    return tool.func.__module__.split(".", 1)[0]


def reference_of(tool: Tool) -> Reference:
    """The reference of ``tool``, with the parts that are missing named."""
    raw = package_references(home(tool)).get(tool.name) or {}
    missing = tuple(part for part in PARTS if not raw.get(part))
    example = raw.get("example")
    return Reference(
        use_cases=[str(case) for case in raw.get("use_cases") or []],
        requires=str(raw.get("requires") or ""),
        returns=str(raw.get("returns") or ""),
        example=Example(
            arguments=dict(example.get("arguments") or {}),
            reply=example.get("reply"),
            before=list(example.get("before") or []),
            files=dict(example.get("files") or {}),
            placeholders=dict(example.get("placeholders") or {}),
        )
        if isinstance(example, dict)
        else None,
        errors=[
            ErrorHint(int(error["code"]), str(error["when"]), str(error["fix"]))
            for error in raw.get("errors") or []
        ],
        related=[str(name) for name in raw.get("related") or []],
        missing=missing,
        guide=_guide_hint(raw.get("guide")),
    )


def _guide_hint(raw: Any) -> GuideHint | None:
    if not isinstance(raw, dict):
        return None
    return GuideHint(
        step=int(raw["step"]),
        why=str(raw["why"]),
        example=raw.get("example") or {},
        example_without_card=raw.get("example_without_card"),
    )


def parameters(tool: Tool) -> list[dict[str, Any]]:
    """Each input of ``tool``: name, type, whether required, default and what it is for."""
    schema = tool.input_schema()
    required = set(schema.get("required", []))
    out = []
    for name, spec in (schema.get("properties") or {}).items():
        out.append(
            {
                "name": name,
                "type": _type_name(spec),
                "required": name in required,
                "default": spec.get("default"),
                "description": spec.get("description", ""),
            }
        )
    return out


def _type_name(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return " | ".join(repr(value) for value in spec["enum"])
    if "anyOf" in spec:
        kinds = [_type_name(option) for option in spec["anyOf"] if option.get("type") != "null"]
        return " | ".join(kinds) or "null"
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type_name(spec.get('items') or {})}"
    return str(kind)


#: Values that change from run to run, replaced in example replies by a fixed stand-in.
_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?")
_TOKEN = re.compile(r"\b[3-9A-Y]{4}-[3-9A-Y]{4}-[3-9A-Y]{4}\b")


def normalise(value: Any, placeholders: dict[str, str] | None = None) -> Any:
    """``value`` with timestamps, confirmation tokens and the ``placeholders`` keys fixed."""
    keys = placeholders or {}
    if isinstance(value, dict):
        return {
            key: keys[key] if key in keys else normalise(item, keys) for key, item in value.items()
        }
    if isinstance(value, list):
        return [normalise(item, keys) for item in value]
    if isinstance(value, str):
        text = _TIMESTAMP.sub("2026-01-01T00:00:00Z", value)
        return _TOKEN.sub("XXXX-XXXX-XXXX", text)
    return value
