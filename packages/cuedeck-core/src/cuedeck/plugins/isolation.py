"""Running a hook implementation under its plugin's name, isolated.

The host registers a :class:`StandIn` in each plugin's place: an object holding the
plugin's hook implementations, each wrapped (:func:`guard`) under its own attribute name,
so pluggy calls the wrappers and nothing of pluggy's is patched. ``functools.wraps``
carries the implementation's marker options (``tryfirst``, ``wrapper``...) and signature
to its wrapper. While an implementation runs, :data:`CALLING` names its plugin (what the
``register`` callbacks record as the owner), and one that raises anything but a
:class:`~cuedeck.errors.CueError` is recorded as its plugin's failure and skipped. A
wrapper implementation (``wrapper=True`` or ``hookwrapper=True``) is driven step by
step, each step so guarded.
"""

from __future__ import annotations

import contextvars
import functools
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from cuedeck.errors import CueError

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

    import pluggy

T = TypeVar("T")

#: The plugin whose hook implementation is running (the ``register`` callback's owner).
CALLING: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "cuedeck_calling_plugin", default=None
)


class FailureRecord(Protocol):
    """Where a failed implementation is recorded (the plugin host)."""

    def hook_failed(self, plugin: str, hook_name: str, exc: Exception) -> None:
        """Record that ``plugin``'s implementation of ``hook_name`` raised ``exc``."""
        ...


class StandIn:
    """What pluggy registers in ``plugin``'s place: its hook implementations, guarded,
    as attributes of the same names (``plugin`` is the plugin itself)."""

    def __init__(self, plugin: object, implementations: dict[str, Callable[..., Any]]) -> None:
        self.plugin = plugin
        for attribute, function in implementations.items():
            setattr(self, attribute, function)

    def __repr__(self) -> str:
        return f"StandIn({self.plugin!r})"


def stand_in(
    manager: pluggy.PluginManager, record: FailureRecord, plugin: object, name: str
) -> StandIn:
    """A :class:`StandIn` for ``plugin``, registered as ``name``: each attribute pluggy
    takes for a hook implementation (``parse_hookimpl_opts``), guarded."""
    found = {}
    for attribute in dir(plugin):
        options = manager.parse_hookimpl_opts(plugin, attribute)
        if options is None:
            continue
        hook_name = options.get("specname") or attribute
        wrapper = bool(options.get("wrapper") or options.get("hookwrapper"))
        function = getattr(plugin, attribute)  # bound, as pluggy would bind it
        found[attribute] = guard(record, function, name, hook_name, wrapper=wrapper)
    return StandIn(plugin, found)


def guard(
    record: FailureRecord,
    function: Callable[..., Any],
    plugin: str,
    hook_name: str,
    *,
    wrapper: bool = False,
) -> Callable[..., Any]:
    """``function``, an implementation of ``hook_name``, run under its plugin's name with
    its failures isolated (``wrapper``: a wrapper implementation)."""
    if wrapper:
        return _guard_wrapper(record, function, plugin, hook_name)

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        return run_as(record, plugin, hook_name, lambda: function(*args, **kwargs))[1]

    return guarded


def run_as(
    record: FailureRecord, plugin: str, hook_name: str, step: Callable[[], T]
) -> tuple[bool, T | None]:
    """``(True, step())`` run as ``plugin``, or ``(False, None)`` once its failure is
    recorded; a CueError (a real configuration error, such as a name registered
    twice) propagates."""
    token = CALLING.set(plugin)
    try:
        return True, step()
    except CueError:
        raise
    except Exception as exc:
        record.hook_failed(plugin, hook_name, exc)
        return False, None
    finally:
        CALLING.reset(token)


def _guard_wrapper(
    record: FailureRecord, function: Callable[..., Any], plugin: str, hook_name: str
) -> Callable[..., Any]:
    """A wrapper hook implementation (``wrapper=True`` or ``hookwrapper=True``) driven
    step by step, each step under its plugin's name: one that fails before its ``yield``
    lets the call through untouched; one that fails after it leaves the outcome as it was.
    """

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Generator[None, Any, Any]:
        ok, teardown = run_as(
            record, plugin, hook_name, lambda: _started(function(*args, **kwargs))
        )
        if not ok or teardown is None:
            return (yield)
        try:
            outcome = yield
        except BaseException as exc:  # pluggy hands the call's error to new-style wrappers
            token = CALLING.set(plugin)
            try:
                return _finished(teardown.throw, exc)
            except Exception as raised:
                if raised is exc or isinstance(raised, CueError):
                    raise
                record.hook_failed(plugin, hook_name, raised)
                raise exc from None
            finally:
                CALLING.reset(token)
        ok, value = run_as(record, plugin, hook_name, lambda: _finished(teardown.send, outcome))
        return value if ok else outcome

    return guarded


def _started(teardown: Generator[None, Any, Any]) -> Generator[None, Any, Any]:
    """``teardown`` run up to its ``yield``."""
    try:
        next(teardown)
    except StopIteration:
        name = getattr(teardown, "__qualname__", "a wrapper")
        raise RuntimeError(f"{name} did not yield") from None
    return teardown


def _finished(step: Callable[[Any], Any], value: Any) -> Any:
    """What a wrapper returns once ``step`` (send or throw) resumes it after its ``yield``."""
    try:
        step(value)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("a wrapper yielded twice")
