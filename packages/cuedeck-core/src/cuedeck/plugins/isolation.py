"""Running a hook implementation under its plugin's name, isolated.

The host wraps each implementation (:func:`guard`): while it runs, :data:`CALLING` names
its plugin (what the ``register`` callbacks record as the owner), and one that raises
anything but a :class:`~cuedeck.errors.CueError` is recorded as its plugin's failure and
skipped. A wrapper implementation (``wrapper=True`` or ``hookwrapper=True``) is driven
step by step, each step so guarded.
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
#: Marks a hook implementation's function once the host has wrapped it.
GUARDED = "__cuedeck_guarded__"


class FailureRecord(Protocol):
    """Where a failed implementation is recorded (the plugin host)."""

    def hook_failed(self, plugin: str, hook_name: str, exc: Exception) -> None:
        """Record that ``plugin``'s implementation of ``hook_name`` raised ``exc``."""
        ...


def guard(record: FailureRecord, impl: pluggy.HookImpl, hook_name: str) -> Callable[..., Any]:
    """``impl``'s function, run under its plugin's name with its failures isolated."""
    function = impl.function
    plugin = impl.plugin_name
    if impl.wrapper or impl.hookwrapper:
        guarded = _guard_wrapper(record, function, plugin, hook_name)
    else:

        @functools.wraps(function)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            return run_as(record, plugin, hook_name, lambda: function(*args, **kwargs))[1]

    setattr(guarded, GUARDED, True)
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
