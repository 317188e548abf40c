"""``.cuedeck/config.toml``: every setting, its default, and how overrides apply.

Precedence, lowest first: the defaults below, the file, then environment variables
``CUEDECK_<SECTION>_<KEY>`` (``CUEDECK_SCENE_TOKEN_LIMIT=16000``). A TOML syntax error
or a value of the wrong type is an :class:`~cuedeck.errors.InvalidInput` naming the key
(or variable) and line; an unknown key is a warning with the nearest known key, logged
once per process wherever the config is read, and listed by ``cue doctor``.
"""

from __future__ import annotations

import os
import re
import tomllib
import typing
from typing import Any, TypeGuard

import attrs

from cuedeck.errors import InvalidInput, did_you_mean
from cuedeck.layout import CONFIG_PATH
from cuedeck.models import Problem
from cuedeck.settings import (
    CORE_SECTIONS,
    Config,
    DocSettings,
    FileSettings,
    IndexSettings,
    MaskingSettings,
    RateLimit,
    SceneSettings,
    TableSection,
    TokenSettings,
    WatchSettings,
)

if typing.TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from cuedeck.plugins.host import PluginHost


#: Attribute names that differ from their TOML keys (``global`` is a Python keyword).
_TOML_KEY = {"global_docs": "global"}


def toml_key(attribute: str) -> str:
    """The TOML key of a settings attribute."""
    return _TOML_KEY.get(attribute, attribute)


def _key_lines(text: str) -> dict[str, int]:
    """``section.key`` -> 1-based line, found by a plain scan (tomllib gives no positions)."""
    lines: dict[str, int] = {}
    table = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if header := re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?", line):
            table = header.group(1).replace('"', "").replace(" ", "")
            lines.setdefault(table, number)
        elif key := re.match(r'^"?([A-Za-z0-9_.\-]+)"?\s*=', line):
            dotted = f"{table}.{key.group(1)}" if table else key.group(1)
            lines.setdefault(dotted, number)
    return lines


def check_type(value: Any, expected: Any) -> Any:
    """``value`` converted to ``expected`` (int/float/bool/str/list[str]/dict[str,str]); a
    list of strings may also be given as one comma-separated string.

    Raises ValueError with a short reason when it does not fit.
    """
    origin = typing.get_origin(expected)
    if origin is list:
        if isinstance(value, str):  # `tools = "core"` or "core,git": one string, commas
            return [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("expected a list of strings")
        return list(value)
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError("expected a table of strings")
        return dict(value)
    if expected is bool:
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return value
    if expected is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("expected an integer")
        return value
    if expected is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("expected a number")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _parse_env(raw: str, expected: Any) -> Any:
    """An environment string as ``expected``: booleans, numbers, TOML arrays or a,b,c."""
    origin = typing.get_origin(expected)
    if origin is list:
        if raw.strip().startswith("["):
            try:
                return tomllib.loads(f"v = {raw}")["v"]
            except tomllib.TOMLDecodeError:
                raise ValueError(_ENV_EXPECTED[list]) from None
        return [part.strip() for part in raw.split(",") if part.strip()]
    if expected is bool:
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    try:
        if expected is int:
            return int(raw)
        if expected is float:
            return float(raw)
        if origin is dict:
            return tomllib.loads(f"v = {raw}")["v"]
    except (ValueError, tomllib.TOMLDecodeError):
        raise ValueError(_ENV_EXPECTED[origin or expected]) from None
    return raw


#: What an environment value of each type must look like.
_ENV_EXPECTED: dict[Any, str] = {
    int: "expected an integer",
    float: "expected a number",
    dict: 'expected an inline table such as { name = "value" }',
    list: 'expected a list such as a,b or ["a", "b"]',
}


def field_types(cls: type) -> dict[str, Any]:
    """The type of each field of the attrs class ``cls``, by name, in field order."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in attrs.fields(cls)}


def registered_sections(plugins: PluginHost | None = None) -> dict[str, type]:
    """Every config section by TOML name, core's first: what ``register_settings``
    registered (core's own alone when the host cannot be built)."""
    from cuedeck.plugins.host import get_settings, make_plugin_host

    return get_settings(plugins if plugins is not None else make_plugin_host())


def load_config(
    root: Path, environ: Mapping[str, str] | None = None, *, plugins: PluginHost | None = None
) -> Config:
    """The configuration of the workspace at ``root`` (defaults when there is no file),
    with the sections the plugins of ``plugins`` (default: a fresh host) registered."""
    from cuedeck.plugins.host import make_plugin_host

    environ = os.environ if environ is None else environ
    host = plugins if plugins is not None else make_plugin_host()
    sections = registered_sections(host)
    moved = _moved_keys(sections)
    path = root / CONFIG_PATH
    text = ""
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                "config.toml is not valid UTF-8", path=CONFIG_PATH, field="config"
            ) from exc
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            where = re.search(r"at line (\d+)", str(exc))
            raise InvalidInput(
                f"config.toml is not valid TOML: {exc}",
                path=CONFIG_PATH,
                line=int(where.group(1)) if where else None,
                field="config",
                help=_syntax_help(str(exc)),
            ) from None
    lines = _key_lines(text)
    warnings: list[Problem] = []

    def fail(key: str, reason: str, value: Any) -> InvalidInput:
        return InvalidInput(
            f"config key '{key}' has a bad value {value!r}: {reason}",
            path=CONFIG_PATH,
            line=lines.get(key),
            field=key,
            help="see docs/config.md for every key, its type and default",
        )

    values: dict[str, dict[str, Any]] = {}
    tables: dict[str, Any] = {}  # sections that read their own table (TableSection)
    from_old_keys: dict[str, dict[str, Any]] = {}
    for section, table in data.items():
        if _reads_table(reader := sections.get(section)):
            if not isinstance(table, dict):
                raise fail(section, "expected a table", table)
            tables[section] = reader.from_table(table, fail)
            continue
        if not isinstance(table, dict) or (
            section not in sections and not any(f"{section}.{key}" in moved for key in table)
        ):
            warnings.append(_unknown(section, lines, sections, table=isinstance(table, dict)))
            continue
        for key, value in table.items():
            dotted = f"{section}.{key}"
            target = _field_of(sections, section, key) or moved.get(dotted)
            if target is None:
                warnings.append(_unknown(dotted, lines, sections))
                continue
            home, name = target
            if (home, name) == _field_of(sections, section, key):
                into = values
            else:
                warnings.append(_moved(dotted, home, name, lines))
                into = from_old_keys
            try:
                checked = check_type(value, field_types(sections[home])[name])
                into.setdefault(home, {})[name] = _check_choice(sections[home], name, checked)
            except ValueError as exc:
                raise fail(dotted, str(exc), value) from None

    for section, cls in sections.items():
        if _reads_table(cls):
            continue
        for name, expected in field_types(cls).items():
            names = [f"CUEDECK_{section.upper()}_{toml_key(name).upper()}"]
            old = attrs.fields_dict(cls)[name].metadata.get("moved_from")
            if old:
                names.insert(0, "CUEDECK_" + old.replace(".", "_").upper())
            for env_name in names:
                if env_name not in environ:
                    continue
                try:
                    value = check_type(_parse_env(environ[env_name], expected), expected)
                    value = _check_choice(cls, name, value)
                except (ValueError, tomllib.TOMLDecodeError) as exc:
                    raise InvalidInput(
                        f"environment variable {env_name} has a bad value "
                        f"{environ[env_name]!r}: {exc}",
                        field=env_name,
                        help=f"fix or unset {env_name} (it overrides "
                        f"[{section}] {toml_key(name)}; see docs/config.md)",
                    ) from None
                values.setdefault(section, {})[name] = value

    built = {
        section: tables[section]
        if section in tables
        else cls(**{**from_old_keys.get(section, {}), **values.get(section, {})})
        for section, cls in sections.items()
    }
    report_warnings(root, tuple(warnings))
    return Config(sections=built, warnings=tuple(warnings), lines=lines)


def _reads_table(cls: type | None) -> TypeGuard[type[TableSection]]:
    """Whether the section class ``cls`` reads its own table (:class:`TableSection`)."""
    return isinstance(cls, type) and issubclass(cls, TableSection)


def _field_of(sections: Mapping[str, type], section: str, key: str) -> tuple[str, str] | None:
    """``(section, attribute)`` of the TOML key ``section.key``, when it is registered."""
    cls = sections.get(section)
    if cls is None:
        return None
    for field in attrs.fields(cls):
        if toml_key(field.name) == key:
            return section, field.name
    return None


def _moved_keys(sections: Mapping[str, type]) -> dict[str, tuple[str, str]]:
    """Old ``section.key`` -> ``(section, attribute)`` where it lives now (``moved_from``)."""
    return {
        field.metadata["moved_from"]: (section, field.name)
        for section, cls in sections.items()
        for field in attrs.fields(cls)
        if field.metadata.get("moved_from")
    }


def _moved(old: str, section: str, name: str, lines: dict[str, int]) -> Problem:
    new = f"{section}.{toml_key(name)}"
    return Problem(
        severity="warning",
        code=1004,
        path=CONFIG_PATH,
        line=lines.get(old),
        message=f"config key '{old}' has moved to '{new}'",
        help=f"it still applies; write it as `{toml_key(name)} = ...` under [{section}]",
    )


def _check_choice(cls: type, name: str, value: Any) -> Any:
    """``value`` when it is one of the key's choices and within its range (ValueError)."""
    metadata = attrs.fields_dict(cls)[name].metadata
    choices = metadata.get("choices", ())
    if choices and value not in choices:
        raise ValueError(f"expected one of {', '.join(choices)}")
    low, high = metadata.get("minimum"), metadata.get("maximum")
    if low is not None and value < low:
        raise ValueError(f"must be at least {low:g}" + (f" and at most {high:g}" if high else ""))
    if high is not None and value > high:
        raise ValueError(f"must be at most {high:g}")
    return value


def _syntax_help(reason: str) -> str:
    """How to fix a TOML error; a table declared twice is the usual one (a section
    appended to a file that already has it)."""
    if twice := re.search(r"Cannot declare \(([^)]*)\) twice", reason):
        table = ".".join(part.strip().strip("'\"") for part in twice.group(1).split(",") if part)
        return (
            f"[{table}] appears twice: move the keys of the second [{table}] into the first "
            "and delete the second header"
        )
    return "fix the syntax at that line; docs/config.md lists every key and its type"


def _unknown(
    key: str, lines: dict[str, int], known: Mapping[str, type], *, table: bool = False
) -> Problem:
    """A warning for a key (or a whole ``table``) no section knows, with the nearest one."""
    sections = list(known)
    close = 0.7  # a typo, not any key that shares a few letters
    what = f"unknown config key '{key}'"
    hint = None
    section, _, name = key.partition(".")
    if table:
        what = f"unknown config section [{key}]"
        hint = _did_you_mean(did_you_mean(key, sections, cutoff=close), brackets=True)
    elif not name:  # a key above every header: uncommented without its [section]
        owners = [s for s, cls in known.items() if key in map(toml_key, attrs.fields_dict(cls))]
        hint = f"it belongs under [{owners[0]}]: uncomment or add that header" if owners else None
    elif section in known:
        names = [toml_key(n) for n in attrs.fields_dict(known[section])]
        found = did_you_mean(name, names, cutoff=close)
        hint = _did_you_mean([f"{section}.{found[0]}"] if found else [])
    return Problem(
        severity="warning",
        code=1004,
        path=CONFIG_PATH,
        line=lines.get(key),
        message=f"{what} (ignored)",
        help=hint or "docs/config.md lists every key",
    )


def _did_you_mean(matches: list[str], *, brackets: bool = False) -> str | None:
    if not matches:
        return None
    return f"did you mean [{matches[0]}]?" if brackets else f"did you mean '{matches[0]}'?"


#: Config warnings already shown by this process: (workspace root, message, line).
_warned: set[tuple[str, str, int | None]] = set()


def report_warnings(root: Path, warnings: tuple[Problem, ...]) -> None:
    """Log each config warning once per process (stderr through the ``cuedeck`` logger),
    wherever the config is read, so a misspelled key is never silently ignored."""
    import logging

    log = logging.getLogger("cuedeck")
    for problem in warnings:
        key = (str(root), problem.message, problem.line)
        if key in _warned:
            continue
        _warned.add(key)
        where = f"{problem.path}:{problem.line}" if problem.line else problem.path
        tail = f"; {problem.help}" if problem.help else ""
        log.warning("%s: %s%s", where, problem.message, tail, extra={"config_warning": True})


def render_default_config(plugins: PluginHost | None = None) -> str:
    """The commented ``config.toml`` that ``cue init`` writes: every key of every
    registered section at its default (a section that reads its own table writes its
    own lines)."""
    out = [
        "# CueDeck workspace configuration. Every key is shown, commented out, at its",
        "# default. To change one, uncomment it with its [section] header, or add the",
        "# section at the end of the file (each section may appear once).",
        "# Environment variables CUEDECK_<SECTION>_<KEY> override these values.",
        "",
    ]
    from cuedeck.plugins.host import make_plugin_host

    host = plugins if plugins is not None else make_plugin_host()
    for section, cls in registered_sections(host).items():
        if _reads_table(cls):
            out.extend([*cls.template(host), ""])
            continue
        # One comment line each: a docstring wrapped over lines must not leave TOML.
        summary = _one_line((cls.__doc__ or "").split(":", 1)[-1].split("\n\n")[0])
        out.append(f"# {summary[0].upper()}{summary[1:]}")
        # Commented too: a section appended at the end must not declare it twice.
        out.append(f"# [{section}]")
        for field in attrs.fields(cls):
            out.append(f"# {_one_line(field.metadata['doc'])}")
            default = field.default
            value = default.factory() if hasattr(default, "factory") else default
            out.append(f"# {toml_key(field.name)} = {_toml_value(value)}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("``", "`")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)


__all__ = [
    "CONFIG_PATH",
    "CORE_SECTIONS",
    "Config",
    "DocSettings",
    "FileSettings",
    "IndexSettings",
    "MaskingSettings",
    "RateLimit",
    "SceneSettings",
    "TableSection",
    "TokenSettings",
    "WatchSettings",
    "load_config",
    "registered_sections",
    "render_default_config",
    "toml_key",
]
