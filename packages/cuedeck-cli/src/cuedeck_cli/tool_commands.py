"""Registered tools as ``cue`` commands, with no hand-written glue.

``tool_command("word_count")`` is a click command whose arguments come from the tool's
typed signature: required parameters are positional arguments, the others options
(``--max-tokens``; lists repeat, booleans are ``--x/--no-x``, literals are choices).
The call goes through :func:`cuedeck.serving.calls.serve`, as MCP's and the board's do, so
validation, errors and the masked JSON reply are the ones MCP clients get (``--json``
prints it as JSON). The tool is looked up when the command runs or shows its help, so a plugin can
register the command before anything is loaded.
"""

from __future__ import annotations

import json
import types
import typing
from typing import TYPE_CHECKING, Any, Literal

import click

from cuedeck.errors import FileNotFound
from cuedeck_cli.context import CliState

if TYPE_CHECKING:
    import inspect

    from cuedeck.plugins.tools import Tool


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The annotation without ``Annotated`` and ``None``, and whether None was allowed."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        optional = len(options) < len(typing.get_args(annotation))
        if len(options) == 1:
            inner, _ = _unwrap(options[0])
            return inner, optional
        return annotation, optional
    return annotation, False


def _click_type(annotation: Any) -> tuple[Any, bool]:
    """A click type for ``annotation``, and whether the option repeats (a list)."""
    if typing.get_origin(annotation) in (list, tuple, set, frozenset):
        args = typing.get_args(annotation)
        inner, _ = _click_type(_unwrap(args[0])[0] if args else str)
        return inner, True
    if typing.get_origin(annotation) is Literal:
        return click.Choice([str(value) for value in typing.get_args(annotation)]), False
    simple = {str: click.STRING, int: click.INT, float: click.FLOAT, bool: click.BOOL}
    return simple.get(annotation, click.STRING), False


def _parameter(param: inspect.Parameter, annotation: Any) -> click.Parameter:
    base, _ = _unwrap(annotation)
    kind, multiple = _click_type(base)
    required = param.default is param.empty
    flag = "--" + param.name.replace("_", "-")
    if required and not multiple:
        return click.Argument([param.name], type=kind)
    if base is bool:
        return click.Option([f"{flag}/--no-{flag[2:]}", param.name], default=None)
    return click.Option(
        [flag, param.name], type=kind, multiple=multiple, required=required and multiple
    )


def _render(value: Any) -> str:
    """A reply for people: ``key: value`` lines for objects, a line per list item."""
    if isinstance(value, dict):
        return "\n".join(
            f"{key}: {item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)}"
            for key, item in value.items()
        )
    if isinstance(value, list):
        return "\n".join(
            item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            for item in value
        )
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class ToolCommand(click.Command):
    """A command that calls one registered tool."""

    def __init__(self, tool_name: str, name: str, help: str | None) -> None:
        super().__init__(name, help=help, callback=self._run)
        self.tool_name = tool_name
        self._tool_params: list[click.Parameter] | None = None

    def tool(self, ctx: click.Context) -> Tool:
        """The registered tool, from the running ``cue``'s plugins."""

        state = ctx.find_object(CliState)
        if state is None:
            raise RuntimeError("tool commands run inside make_cli()")
        tools = state.plugins.tools()
        if self.tool_name not in tools:
            raise FileNotFound(
                f"no tool {self.tool_name!r} is registered (is its plugin installed?)",
                tool=self.tool_name,
            )
        return tools[self.tool_name]

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if self._tool_params is None:
            tool = self.tool(ctx)
            hints = tool.hints
            self._tool_params = [
                _parameter(param, hints.get(param.name, str)) for param in tool.parameters
            ]
            self._tool_params.append(
                click.Option(["--json", "as_json"], is_flag=True, help="Print the reply as JSON.")
            )
            if self.help is None:
                self.help = tool.description
        return [*self._tool_params, *super().get_params(ctx)]

    def get_short_help_str(self, limit: int = 45) -> str:
        return self.help.splitlines()[0] if self.help else f"Run the {self.tool_name} tool."

    def _run(self, as_json: bool = False, **values: Any) -> None:
        from cuedeck.serving.calls import serve
        from cuedeck_cli.context import current_state
        from cuedeck_cli.output import emit_json

        ctx = click.get_current_context()
        tool = self.tool(ctx)
        arguments = {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in values.items()
            if value is not None and value != ()
        }
        value = serve(tool, current_state().workspace, arguments)
        if as_json:
            emit_json(value)
        else:
            click.echo(_render(value))


def tool_command(tool_name: str, *, name: str | None = None, help: str | None = None) -> Any:
    """A ``cue`` command running the registered tool ``tool_name`` (see the module)."""
    return ToolCommand(tool_name, name or tool_name.replace("_", "-"), help)
