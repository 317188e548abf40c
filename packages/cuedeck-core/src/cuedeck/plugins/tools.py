"""Tools: plain typed functions, validated and described once for MCP, the CLI and Python.

A tool's first parameter is ``workspace``; the rest are its inputs. :meth:`Tool.call`
validates arguments against the signature (pydantic, built lazily) and turns a bad
argument into :class:`~cuedeck.errors.InvalidInput` naming the field, so every caller
sees the same error 1004. A tool registered by import path (``"package.module:function"``)
imports its module on first use, so a command that runs one tool imports one module.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import typing
from contextvars import ContextVar
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from cuedeck.errors import InvalidInput, ToolLoadFailed

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from cuedeck.hooktypes import WorkspaceArg
    from cuedeck.settings import RateLimit


class _LazyModule:
    """A module imported on first attribute access.

    Tool modules that are also core plugin modules name ``pydantic.Field`` in their
    annotations; bound to this, they import pydantic only when a schema is built.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        import importlib

        return getattr(importlib.import_module(self._name), attribute)


lazy_pydantic: Any = _LazyModule("pydantic")


class ToolCall(NamedTuple):
    """The tool being called and its validated arguments (see :data:`CURRENT_CALL`)."""

    tool: str
    arguments: dict[str, Any]


#: The call :meth:`Tool.call` is running, for helpers that must bind all of it (the
#: confirmation of a destructive tool: :func:`cuedeck.serving.confirmation.confirm`).
CURRENT_CALL: ContextVar[ToolCall | None] = ContextVar("cuedeck_tool_call", default=None)

#: The arguments :meth:`Tool.validate` checked last in this context, and what came of
#: them: a server that validates before it runs (to spend a rate limit only on calls that
#: can run) does not make :meth:`Tool.call` validate the same arguments again. Taken once.
_VALIDATED: ContextVar[tuple[Tool, Mapping[str, Any], dict[str, Any]] | None] = ContextVar(
    "cuedeck_validated", default=None
)

#: Other names an argument is accepted under (never published in schemas):
#: ``confirmed_token`` is the CIDX specification's name for the confirmation token.
ARGUMENT_ALIASES: dict[str, tuple[str, ...]] = {"confirmation_token": ("confirmed_token",)}


#: The argument every tool registered with ``writes=`` takes beside its own.
FORCE = "force"


def _force_annotation() -> Any:
    import pydantic

    return typing.Annotated[
        bool,
        pydantic.Field(
            description="Write even where another agent's claim holds these paths (recorded)"
        ),
    ]


#: Caps on every argument, whatever its annotation says (which may set tighter ones):
#: characters of a string, items of a list or object, and nesting depth.
MAX_TEXT = 1_000_000
MAX_ITEMS = 10_000
MAX_DEPTH = 32


def check_sizes(arguments: Mapping[str, Any], *, tool: str) -> None:
    """Refuse, with InvalidInput naming the field, any argument over the caps above."""
    if _within_caps(arguments):
        return
    # Over a cap: walk again naming every field on the way, to say which one.
    stack: list[tuple[Any, str, int]] = [(value, name, 1) for name, value in arguments.items()]
    while stack:
        value, field, depth = stack.pop()
        problem = None
        if depth > MAX_DEPTH:
            problem = f"nested deeper than {MAX_DEPTH} levels"
        elif isinstance(value, str) and len(value) > MAX_TEXT:
            problem = f"longer than {MAX_TEXT:,} characters"
        elif isinstance(value, list | tuple | dict) and len(value) > MAX_ITEMS:
            problem = f"more than {MAX_ITEMS:,} items"
        if problem is not None:
            raise InvalidInput(f"{tool}: invalid '{field}': {problem}", field=field, tool=tool)
        if isinstance(value, dict):
            stack.extend((item, f"{field}.{key}", depth + 1) for key, item in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((item, f"{field}.{n}", depth + 1) for n, item in enumerate(value))


def _within_caps(arguments: Mapping[str, Any]) -> bool:
    """Whether every argument is within the caps (what :func:`check_sizes` checks, without
    the name of each field: a batch of a thousand segments is ten thousand values)."""
    stack: list[tuple[Iterable[Any], int]] = [(arguments.values(), 1)]
    while stack:
        values, depth = stack.pop()
        for value in values:
            if isinstance(value, str):
                if len(value) > MAX_TEXT:
                    return False
            elif isinstance(value, dict | list | tuple):
                if len(value) > MAX_ITEMS or (value and depth >= MAX_DEPTH):
                    return False  # too many items, or items nested too deep
                stack.append((value.values() if isinstance(value, dict) else value, depth + 1))
    return True


#: Location parts that pydantic adds for the members of a union (``literal['a','b']``,
#: ``list[str]``, ``str``...): they name a type, not an argument.
_TYPE_TAG = re.compile(r"^(?:[a-z_-]+\[.*\]|str|int|float|bool|none|dict|list)$")


def _field_name(loc: tuple[int | str, ...]) -> str:
    """The argument a validation error is about, as ``updates.status`` or ``tags.2``."""
    parts = [str(part) for part in loc if not (isinstance(part, str) and _TYPE_TAG.match(part))]
    return ".".join(parts) or "arguments"


Role = Literal["read", "write", "admin"]
#: The roles a caller can have, least first.
ROLES: tuple[Role, ...] = ("read", "write", "admin")

#: What a tool may need, named as the code-indexer specification names it, and the least
#: role that has it (docs/teams.md has the table). A tool's permission is the one it was
#: registered with, else its flags say it (:attr:`Tool.permission`).
PERMISSIONS: dict[str, Role] = {
    "query_repos": "read",
    "repository:write": "write",
    "activate_repos": "write",
    "destructive_operations": "admin",
    "manage_golden_repos": "admin",
    "manage_users": "admin",
}


#: An import path a tool may be registered by: ``package.module:function``.
IMPORT_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


class Tool:
    """A registered tool with its metadata; call it with :meth:`call`.

    ``target`` is the function or its import path. A function is checked at once; a path
    is imported and checked on first use of :attr:`func`, :attr:`description`,
    :attr:`summary` or :attr:`parameters` (:meth:`check` does it on purpose).
    """

    def __init__(
        self,
        target: Callable[..., Any] | str,
        *,
        name: str,
        plugin: str,
        category: str = "general",
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        rate_limit: RateLimit | None = None,
        permission: str | None = None,
        writes: str | None = None,
        reads_as: str | None = None,
    ) -> None:
        if permission is not None and permission not in PERMISSIONS:
            raise InvalidInput(
                f"tool {name!r} from {plugin!r}: no permission is named {permission!r}",
                field="permission",
                available=list(PERMISSIONS),
            )
        self.target = target
        self.name = name
        self.plugin = plugin
        self.category = category
        self.read_only = read_only
        self.destructive = destructive
        self.idempotent = idempotent
        #: Calls per MCP client the plugin allows (``[rate_limits]`` in config overrides it).
        self.rate_limit = rate_limit
        self._permission = permission
        #: The argument naming the path (or list of paths; None: the whole workspace)
        #: the tool changes: such a tool takes ``force`` too, and its calls pass
        #: :func:`cuedeck.plugins.claims.guard_writes` before it runs.
        self.writes = writes
        #: The reply field that already says, in lines for a model, what its lists hold:
        #: the model reads it (with the reply's short fields) instead of every list
        #: drawn again as a table; programs still get every field.
        self.reads_as = reads_as
        if not isinstance(target, str):
            self.check()
        elif not IMPORT_PATH.fullmatch(target):
            raise InvalidInput(
                f"tool {name!r} from {plugin!r}: {target!r} is not an import path "
                "('package.module:function')",
                field="func",
            )

    def check(self) -> None:
        """Import the target if need be and check it: a docstring, ``workspace`` first.

        Raises :class:`~cuedeck.errors.ToolLoadFailed` for a path that does not load and
        :class:`~cuedeck.errors.InvalidInput` for a function that breaks the contract.
        """
        self._checked  # noqa: B018 (computing it is the check)

    @cached_property
    def _checked(self) -> tuple[Callable[..., Any], str, list[inspect.Parameter]]:
        """The function, its description and its inputs, once checked."""
        func = self.target if not isinstance(self.target, str) else self._load(self.target)
        doc = inspect.cleandoc(func.__doc__ or "")
        if not doc:
            raise InvalidInput(
                f"tool {self.name!r} from {self.plugin!r} has no docstring", field="doc"
            )
        params = list(inspect.signature(func).parameters.values())
        if not params or params[0].name != "workspace":
            raise InvalidInput(
                f"tool {self.name!r} from {self.plugin!r}: the first parameter must be 'workspace'",
                field="signature",
            )
        names = {param.name for param in params[1:]}
        if self.writes is not None and (self.writes not in names or FORCE in names):
            raise InvalidInput(
                f"tool {self.name!r} from {self.plugin!r}: writes={self.writes!r} must name "
                f"one of its parameters, and {FORCE!r} must not be one",
                field="writes",
            )
        return func, doc, params[1:]

    def _load(self, path: str) -> Callable[..., Any]:
        """The function ``path`` names; any failure is ToolLoadFailed naming the tool."""
        module_name, _, attribute = path.partition(":")
        try:
            # Whatever the import raises (a missing dependency, a bug at import time) is
            # the plugin's fault, reported as one coded error rather than a traceback.
            func = getattr(importlib.import_module(module_name), attribute)
            if not callable(func):
                raise TypeError(f"{type(func).__name__} object is not callable")
        except Exception as exc:
            raise ToolLoadFailed(
                f"tool {self.name!r} from {self.plugin!r} cannot be loaded from {path!r}: "
                f"{type(exc).__name__}: {exc}",
                field="func",
                tool=self.name,
                plugin=self.plugin,
                target=path,
                help=f"reinstall or fix the plugin {self.plugin!r}, or disable it with "
                "CUEDECK_DISABLE_PLUGINS",
            ) from exc
        loaded: Callable[..., Any] = func
        return loaded

    @property
    def func(self) -> Callable[..., Any]:
        """The tool's function (imported on first use when registered by path)."""
        return self._checked[0]

    @property
    def description(self) -> str:
        """The docstring, cleaned."""
        return self._checked[1]

    @property
    def summary(self) -> str:
        """The docstring's first line."""
        return self._checked[1].splitlines()[0].strip()

    @property
    def parameters(self) -> list[inspect.Parameter]:
        """The inputs: every parameter after ``workspace``."""
        return self._checked[2]

    @property
    def permission(self) -> str:
        """What calling it needs: the permission it was registered with, else by its
        flags: ``query_repos`` when read-only, ``destructive_operations`` when destructive,
        ``repository:write`` otherwise."""
        if self._permission is not None:
            return self._permission
        if self.read_only:
            return "query_repos"
        return "destructive_operations" if self.destructive else "repository:write"

    @property
    def role(self) -> Role:
        """The least role that may call it: the one that has its :attr:`permission`. The
        one rule: the MCP server checks and filters by it, ``get_tool_docs``,
        ``docs/tools.md`` and ``whoami`` report it."""
        return PERMISSIONS[self.permission]

    @classmethod
    def from_function(
        cls, func: Callable[..., Any] | str, *, name: str, plugin: str, **options: Any
    ) -> Tool:
        """A tool for ``func`` (a function or its import path) as registered through
        ``register_tools``."""
        return cls(func, name=name, plugin=plugin, **options)

    @cached_property
    def hints(self) -> dict[str, Any]:
        """The evaluated annotations of the function, ``Annotated`` kept."""
        # Tool modules usually import Workspace under TYPE_CHECKING only (to stay
        # import-light), so the ``workspace`` annotation cannot be evaluated as written.
        # It is never validated (the caller supplies the workspace), so any stand-in
        # does, and importing the real class here would close an import circle.
        return typing.get_type_hints(self.func, localns={"Workspace": Any}, include_extras=True)

    @cached_property
    def input_model(self) -> Any:
        """The pydantic model of the inputs: strict types (``true`` is no number, ``"yes"``
        no boolean), unknown keys forbidden."""
        import pydantic

        fields: dict[str, Any] = {}
        for param in self.parameters:
            annotation = self.hints.get(param.name, Any)
            default = ... if param.default is inspect.Parameter.empty else param.default
            aliases = ARGUMENT_ALIASES.get(param.name)
            if aliases:
                choices = pydantic.AliasChoices(param.name, *aliases)
                annotation = typing.Annotated[annotation, pydantic.Field(validation_alias=choices)]
            fields[param.name] = (annotation, default)
        if self.writes is not None:
            fields[FORCE] = (_force_annotation(), False)
        config = pydantic.ConfigDict(extra="forbid", strict=True)
        model_name = "".join(part.title() for part in self.name.split("_")) + "Input"
        return pydantic.create_model(model_name, __config__=config, **fields)

    def input_schema(self) -> dict[str, Any]:
        """JSON schema of the inputs."""
        schema: dict[str, Any] = self.input_model.model_json_schema()
        schema.pop("title", None)
        return schema

    def output_schema(self) -> dict[str, Any] | None:
        """JSON schema of the return value, or None when it is untyped."""
        returns = self.hints.get("return")
        if returns is None or returns is Any:
            return None
        import pydantic

        schema: dict[str, Any] = pydantic.TypeAdapter(returns).json_schema(mode="serialization")
        return schema

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Arguments checked and converted; a bad one is InvalidInput naming its field.

        A :meth:`call` that follows in the same context with equal arguments takes the
        result instead of validating again.
        """
        validated = self._validate(arguments)
        _VALIDATED.set((self, arguments, validated))
        return validated

    def _validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        import pydantic

        check_sizes(arguments, tool=self.name)
        try:
            model = self.input_model.model_validate(dict(arguments))
        except pydantic.ValidationError as exc:
            error = exc.errors()[0]
            field = _field_name(error["loc"])
            message = error["msg"]
            if error["type"] == "extra_forbidden":
                message = "unknown argument"
            raise InvalidInput(
                f"{self.name}: invalid '{field}': {message}",
                field=field,
                tool=self.name,
            ) from None
        names = [param.name for param in self.parameters]
        if self.writes is not None:
            names.append(FORCE)
        return {name: getattr(model, name) for name in names}

    def call(self, workspace: WorkspaceArg, arguments: Mapping[str, Any] | None = None) -> Any:
        """Validate ``arguments`` and run the tool on ``workspace`` (as :data:`CURRENT_CALL`)."""
        arguments = arguments or {}
        known = _VALIDATED.get()
        # Equal arguments validated just before (by a server, before it ran the call):
        # comparing is cheap, the values being the very objects it validated.
        if known is not None and known[0] is self and known[1] == arguments:
            _VALIDATED.set(None)  # once: the tool may change the values it is given
            validated = known[2]
        else:
            validated = self._validate(arguments)
        running = CURRENT_CALL.set(ToolCall(self.name, dict(validated)))
        try:
            if self.writes is None:
                return self.func(workspace, **validated)
            arguments = dict(validated)
            force = bool(arguments.pop(FORCE, False))
            self._guard(workspace, arguments, force)
            return self.func(workspace, **arguments)
        finally:
            CURRENT_CALL.reset(running)

    def _guard(self, workspace: WorkspaceArg, arguments: Mapping[str, Any], force: bool) -> None:
        """Refuse a write to paths another agent's claim holds (unless ``force``)."""
        from cuedeck.plugins.claims import guard_writes

        assert self.writes is not None
        value = arguments.get(self.writes)
        paths: list[str | None] = list(value) if isinstance(value, list | tuple) else [value]
        guard_writes(workspace, self.name, paths, force=force)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, plugin={self.plugin!r})"


@functools.cache
def _unregistered(func: Callable[..., Any]) -> Tool:
    return Tool(func, name=func.__name__, plugin=func.__module__.partition(".")[0])


def call_checked(workspace: WorkspaceArg, func: Callable[..., Any], **arguments: Any) -> Any:
    """Run the tool function ``func`` on ``workspace``, its ``arguments`` validated as
    its tool validates them (the same InvalidInput, 1004), without the tool registry:
    for a service method whose work a tool function already does. Guards no writes of
    its own (``writes=`` is a registration's): ``func`` must guard what it changes."""
    return _unregistered(func).call(workspace, arguments)
