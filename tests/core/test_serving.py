"""serve(): the one path from a tool's reply to JSON that leaves the process, masked."""

from __future__ import annotations

import datetime as dt
import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from cuedeck import hookimpl, open_workspace
from cuedeck.errors import InvalidInput
from cuedeck.plugins.host import make_plugin_host
from cuedeck.serving.calls import request_masking, serve, strings_in
from tests.conftest import MakeWorkspace

SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"
URL = "postgres://ledger:hunter2pass@db.internal:5432/ledger"


def echo(workspace: Any, text: str) -> dict[str, Any]:
    """Echo a text back with values JSON has no type for."""
    return {
        "text": text,
        "normalised": text.replace("//", "/"),  # no rule recognises the URL any more
        "when": dt.date(2026, 1, 2),
        "where": Path("docs") / "a.md",
        "pair": (1, 2),
    }


SESSIONS: list[weakref.ref[Any]] = []


def keep(workspace: Any, text: str) -> dict[str, Any]:
    """Keep a text masked with the reply's session, and echo it normalised."""
    session = request_masking(workspace)
    assert session is not None
    SESSIONS.append(weakref.ref(session))
    [kept] = session.mask_many([text], learn=True)
    return {"kept": kept, "normalised": text.replace("//", "/")}


class Echo:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(echo, read_only=True)
        register(keep)


@pytest.fixture
def workspace(make_workspace: MakeWorkspace) -> Any:
    plugins = make_plugin_host(entry_points=False)
    plugins.register(Echo(), name="echo")
    return open_workspace(make_workspace(), plugins=plugins)


def test_serve_returns_json_ready_values(workspace: Any) -> None:
    reply = serve(workspace.plugins.tools()["echo"], workspace, {"text": "hello"})
    assert reply == {
        "text": "hello",
        "normalised": "hello",
        "when": "2026-01-02",
        "where": "docs/a.md",
        "pair": [1, 2],
    }


def test_serve_masks_the_reply_and_what_the_request_sent(workspace: Any) -> None:
    reply = serve(workspace.plugins.tools()["echo"], workspace, {"text": f"{SECRET} {URL}"})
    assert SECRET not in str(reply) and "hunter2pass" not in str(reply)
    assert reply["text"].startswith("[REDACTED:stripe-secret-key#1]")
    # Normalised out of any rule's reach, the URL's password is still known from the request.
    assert "hunter2pass" not in reply["normalised"]


def test_what_a_tool_masks_with_the_replys_session_is_learned_once(
    make_workspace: MakeWorkspace,
) -> None:
    """A tool that masks what the request sent with the reply's session (as memory's
    capture does) learns its secrets as it masks: the reply still masks them where no
    rule would, and serve does not scan that text again."""
    from tests.core.test_masking_batches import Counting, CountingPlugin

    counting = Counting()
    plugins = make_plugin_host(entry_points=False)
    plugins.register(Echo(), name="echo")
    plugins.register(CountingPlugin(counting), name="counting")
    workspace = open_workspace(make_workspace(), plugins=plugins)
    text = f"use {URL}"
    reply = serve(workspace.plugins.tools()["keep"], workspace, {"text": text})
    assert (
        reply["kept"] == "use postgres://ledger:[REDACTED:database-url#1]@db.internal:5432/ledger"
    )
    assert "hunter2pass" not in reply["normalised"]
    assert counting.seen.count(text) == 1
    assert request_masking(workspace) is None  # outside a call, a tool masks on its own


def test_a_replys_session_is_freed_when_the_reply_is_made(workspace: Any) -> None:
    """No reference cycle keeps the session (and every text it learned from) alive for
    the cyclic collector, which a server runs rarely: a batch of texts a call would
    otherwise hold on to."""
    SESSIONS.clear()
    gc.collect()
    gc.disable()
    try:
        reply = serve(workspace.plugins.tools()["keep"], workspace, {"text": f"a {SECRET}"})
        assert reply["kept"] == "a [REDACTED:stripe-secret-key#1]"
        assert SESSIONS and SESSIONS[0]() is None
    finally:
        gc.enable()


def test_serve_validates_like_every_caller(workspace: Any) -> None:
    with pytest.raises(InvalidInput, match="echo: invalid 'text'"):
        serve(workspace.plugins.tools()["echo"], workspace, {"text": 7})


def test_the_tools_about_tools_see_what_is_offered(workspace: Any) -> None:
    categories = workspace.plugins.tools()["get_tool_categories"]
    every = serve(categories, workspace)
    assert "echo" in {t["name"] for c in every["categories"] for t in c["tools"]}
    offered = serve(categories, workspace, offered={"get_tool_categories", "read_doc"})
    names = {t["name"] for c in offered["categories"] for t in c["tools"]}
    assert names == {"get_tool_categories", "read_doc"}


def test_strings_in_finds_keys_and_nested_values() -> None:
    value = {"a": ["x", {"b": ("y", 3)}], "c": None}
    assert sorted(strings_in(value)) == ["a", "b", "c", "x", "y"]
