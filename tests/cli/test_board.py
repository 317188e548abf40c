"""The board in a real headless Chromium: cards, drag and drop, live updates, conflicts,
scenes; and its session and Host checks over plain HTTP."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cuedeck_tasks")
sync_api = pytest.importorskip("playwright.sync_api")
httpx = pytest.importorskip("httpx2")

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo"
CUE = str(Path(sys.executable).with_name("cue"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None and not os.environ.get("CUEDECK_REQUIRE_BROWSER"),
        reason="Debian's chromium is not installed (.ci/run installs it)",
    ),
]


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".cache", "state.json"))
    return root


@contextmanager
def _served(root: Path) -> Iterator[str]:
    """`cue board --no-open` on ``root``: the address it prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    process = subprocess.Popen(
        [CUE, "-C", str(root), "board", "--no-open"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # "board of ... at http://127.0.0.1:PORT/open/TOKEN"
        found = re.search(r"http://127\.0\.0\.1:\d+/open/\S+", line)
        assert found, line + process.stderr.read()
        yield found.group(0)
    finally:
        process.terminate()
        process.wait(15)
        if process.stderr is not None:
            process.stderr.close()


@contextmanager
def _browsed(address: str) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page on the board at ``address``, and the console errors it logged."""
    assert CHROMIUM is not None, "chromium is required (CUEDECK_REQUIRE_BROWSER is set)"
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        tab.on(
            "console",
            lambda message: errors.append(message.text) if message.type == "error" else None,
        )
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.goto(address)
        tab.wait_for_selector(".card")
        yield tab, errors
        browser.close()


@pytest.fixture
def board(demo: Path) -> Iterator[str]:
    """`cue board --no-open` on the demo copy: the address it prints."""
    with _served(demo) as address:
        yield address


@pytest.fixture
def page(board: str) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page on the board, and the console errors it logged."""
    with _browsed(board) as opened:
        yield opened


def _card_text(demo: Path, card: str) -> str:
    return (demo / ".cuedeck" / "cards" / f"{card}.md").read_text(encoding="utf-8")


def test_cards_load_and_a_drag_moves_a_card_on_disk(page: tuple, demo: Path) -> None:
    tab, errors = page
    todo = tab.locator('.column[data-status="todo"]')
    assert todo.locator(".card").count() == 1
    assert tab.locator('.column[data-status="active"] .card .title').inner_text() == (
        "Add refresh tokens to login"
    )
    tab.locator('.card[data-id="w4n8t1"]').drag_to(tab.locator('.column[data-status="done"]'))
    tab.wait_for_selector('.column[data-status="done"] .card[data-id="w4n8t1"]')
    assert "status: done" in _card_text(demo, "w4n8t1")
    assert errors == []


def test_keyboard_moves_a_card(page: tuple, demo: Path) -> None:
    tab, errors = page
    tab.locator('.card[data-id="w4n8t1"]').focus()
    tab.keyboard.press("]")
    tab.wait_for_selector('.column[data-status="active"] .card[data-id="w4n8t1"]')
    assert "status: active" in _card_text(demo, "w4n8t1")
    assert errors == []


def test_an_edit_on_disk_shows_without_a_reload(page: tuple, demo: Path) -> None:
    tab, errors = page
    tab.wait_for_selector("#live.on")  # the change stream is connected
    path = demo / ".cuedeck" / "cards" / "w4n8t1.md"
    path.write_text(
        _card_text(demo, "w4n8t1").replace("Partial refunds in the dashboard", "Edited on disk"),
        encoding="utf-8",
    )
    tab.wait_for_selector('.card[data-id="w4n8t1"] .title:text("Edited on disk")', timeout=5000)
    assert errors == []


def test_the_board_lists_what_runs_in_the_background(page: tuple, demo: Path) -> None:
    import time

    from cuedeck.watch import watcher

    tab, errors = page
    assert tab.locator("#background").is_hidden()  # nothing runs for this copy yet
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    env["CUEDECK_WATCH_WATCHER_IDLE_SECONDS"] = "15"  # leaves soon after the test
    subprocess.run(
        [CUE, "-C", str(demo), "search", "--mode", "keyword", "refund"],
        capture_output=True, env=env, check=True, timeout=120,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while (found := watcher.status(demo)) is None:  # it says nothing to its starter
        assert time.monotonic() < deadline, "the watcher never answered"
        time.sleep(0.05)
    tab.reload()
    tab.wait_for_selector("#background:not([hidden])")
    shown = tab.text_content("#background") or ""
    assert f"In the background: watcher (pid {found['pid']}, " in shown
    assert "ends after 15 s without a question" in shown
    assert errors == []


def test_a_stale_edit_is_refused_and_the_newer_card_shown(page: tuple, demo: Path) -> None:
    tab, errors = page
    tab.locator('.card[data-id="w4n8t1"]').dblclick()
    tab.wait_for_selector("#editor[open]")
    path = demo / ".cuedeck" / "cards" / "w4n8t1.md"
    path.write_text(_card_text(demo, "w4n8t1").replace("priority: low", "priority: critical"))
    tab.fill('#editor-form [name="title"]', "My title")
    tab.click("#editor-save")
    tab.wait_for_selector("#notice:not([hidden])")
    assert "changed on disk" in tab.inner_text("#notice")
    text = _card_text(demo, "w4n8t1")
    assert "priority: critical" in text and "My title" not in text  # nothing overwritten
    tab.wait_for_selector('.card[data-id="w4n8t1"].p-critical')
    assert errors == []


def test_a_new_card_with_a_cycle_is_refused(page: tuple, demo: Path) -> None:
    tab, errors = page
    tab.click("#new-card")
    tab.fill('#editor-form [name="title"]', "Follow-up docs")
    tab.fill('#editor-form [name="depends_on"]', "k3x9q2")
    tab.click("#editor-save")
    tab.wait_for_selector('.card .title:text("Follow-up docs")')
    new_id = tab.locator('.card:has(.title:text("Follow-up docs"))').get_attribute("data-id")
    tab.locator('.card[data-id="m7p2r5"]').dblclick()
    tab.fill('#editor-form [name="depends_on"]', new_id or "")
    tab.click("#editor-save")
    tab.wait_for_selector("#editor-error:not([hidden])")
    assert "cycle" in tab.inner_text("#editor-error")
    assert errors == []


@pytest.mark.parametrize("budget", [2350])
def test_the_slider_starts_at_the_configured_budget(
    demo: Path, budget: int, request: pytest.FixtureRequest
) -> None:
    config = demo / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("token_limit = 1600", f"token_limit = {budget}"),
        encoding="utf-8",
    )
    tab, errors = request.getfixturevalue("page")  # the board starts on this config
    tab.click('.tab[data-view="scene"]')
    tab.wait_for_selector("#manifest tbody tr")
    assert tab.locator("#budget").input_value() == str(budget)
    assert f"of {budget} tokens" in tab.inner_text("#scene-total")
    assert errors == []


def test_scene_and_its_budget_slider(page: tuple) -> None:
    tab, errors = page
    tab.click('.tab[data-view="scene"]')
    tab.wait_for_selector("#manifest tbody tr")
    before = tab.inner_text("#scene-total")
    rows_before = tab.locator("#manifest tbody tr").count()
    slider = tab.locator("#budget")
    slider.fill("800")
    tab.wait_for_function(
        "t => document.querySelector('#scene-total').textContent !== t", arg=before
    )
    assert "of 800 tokens" in tab.inner_text("#scene-total")
    assert (
        "dropped" in tab.inner_text("#manifest")
        or tab.locator("#manifest tbody tr").count() <= rows_before
    )
    assert "# Scene:" in tab.inner_text("#scene-text")
    tab.click('.tab[data-view="graph"]')
    tab.wait_for_selector(".graph .node.ready")
    assert errors == []


def test_the_board_needs_its_session_and_its_own_host(board: str) -> None:
    base = board.split("/open/")[0]
    with httpx.Client() as client:
        assert client.get(f"{base}/api/cards").status_code == 401
        assert client.get(f"{base}/").status_code == 401
        assert client.get(f"{base}/open/wrong-token").status_code == 401
        opened = client.get(board, follow_redirects=False)
        assert opened.status_code == 303
        assert "httponly" in opened.headers["set-cookie"].lower()
        assert client.get(f"{base}/api/cards").status_code == 200  # the cookie now
        rebound = client.get(f"{base}/api/cards", headers={"Host": "evil.example:80"})
        foreign = client.post(
            f"{base}/api/cards/w4n8t1",
            json={"updates": {"status": "done"}},
            headers={"Origin": "http://evil.example"},
        )
    assert rebound.status_code == 421
    assert foreign.status_code == 403


SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"


@pytest.fixture
def memory_demo(demo: Path) -> dict[str, str]:
    """The demo copy with real captured segments (a 1,000-token window, so the usage
    warns): segment ids by what they are."""
    pytest.importorskip("cuedeck_memory")
    from cuedeck.workspace import open_workspace

    config = demo / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n[memory]\ntoken_limit = 1000\n")
    workspace = open_workspace(demo)
    tools = workspace.plugins.tools()
    tools["context_set_current_task"].call(workspace, {"project_id": "default", "task_id": "ui"})

    def capture(text: str, kind: str, **extra: object) -> str:
        reply = tools["context_capture"].call(
            workspace,
            {"project_id": "default", "segments": [{"text": text, "type": kind, **extra}]},
        )
        return str(reply["segment_ids"][0])

    ids = {
        "decision": capture(f"We keep sessions in redis.\nThe key is {SECRET}.", "decision"),
        "log": capture("GET /refunds 500\n" + "traceback line\n" * 150, "log"),
        "pinned": capture("The refund API takes cents, never floats.", "note", pinned=True),
    }
    store = workspace.service("context")
    store.close()  # type: ignore[attr-defined]
    return ids


def test_memory_tab_shows_health_advice_and_the_working_set(
    memory_demo: dict[str, str], page: tuple, demo: Path
) -> None:
    tab, errors = page
    tab.click('.tab[data-view="memory"]')
    tab.wait_for_selector("#working-set tbody tr")
    bars = tab.locator(".factor .bar[role=meter]")
    assert sorted(bars.evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")) == [
        "age", "distribution", "usage",
    ]  # fmt: skip
    for value in bars.evaluate_all("els => els.map(e => Number(e.getAttribute('aria-valuenow')))"):
        assert 0.0 <= value <= 1.0
    score = float(tab.inner_text("#health-score"))
    assert 0.0 <= score <= 100.0
    advice = tab.inner_text("#memory-advice")
    assert "of 1,000 tokens (warning)" in advice  # over 60%: the warning names its call
    assert "stash 1 segment with context_gc_prune" in advice
    rows = tab.locator("#working-set tbody tr")
    assert rows.count() == 3
    decision = tab.locator(f'tr[data-segment="{memory_demo["decision"]}"]')
    assert decision.locator("td").nth(0).inner_text() == "decision"
    assert decision.locator(".first-line").inner_text() == "We keep sessions in redis."
    assert SECRET not in tab.content()  # masked at capture, and again on the way out
    assert tab.locator(f'tr[data-segment="{memory_demo["log"]}"] .first-line').inner_text() == (
        "GET /refunds 500"
    )
    pinned = tab.locator(f'tr[data-segment="{memory_demo["pinned"]}"] button.pin')
    assert pinned.get_attribute("aria-pressed") == "true"

    # Pin from the page: the store, read by a new process, says so.
    def stored_pin(segment_id: str) -> bool:
        from cuedeck.workspace import open_workspace

        store = open_workspace(demo).service("context")
        return bool(store.segment("default", segment_id).pinned)

    tab.locator(f'tr[data-segment="{memory_demo["log"]}"] button.pin').click()
    tab.wait_for_selector(
        f'tr[data-segment="{memory_demo["log"]}"] button.pin[aria-pressed="true"]'
    )
    assert stored_pin(memory_demo["log"])
    pinned.click()
    tab.wait_for_selector(
        f'tr[data-segment="{memory_demo["pinned"]}"] button.pin[aria-pressed="false"]'
    )
    assert not stored_pin(memory_demo["pinned"])
    assert errors == []


# -- the board on a code repository -------------------------------------------------------

AUTH = '''"""Signing in."""


def login(user: str, password: str) -> bool:
    """Check a user's password and open a session."""
    return check_password(user, password)


def check_password(user: str, password: str) -> bool:
    """Whether ``password`` is ``user``'s."""
    return bool(user and password)
'''
#: Deep enough that the manifest's path column is wider than its share of the page.
DEEP = "src/shop/integrations/payment_providers/european_union/sepa_direct_debit"


def _card(card_id: str, title: str, status: str, body: str = "") -> str:
    return (
        f"---\nid: {card_id}\ntitle: {title}\nstatus: {status}\npriority: medium\n"
        f"created: '2026-11-20T09:00:00Z'\n---\n# {title}\n\n{body}"
    )


@pytest.fixture
def code_repo(tmp_path: Path) -> Path:
    """A code repository whose words fill a search's first page (60 modules on login
    sessions) and whose active card cites code that drifted since it was recorded."""
    pytest.importorskip("cuedeck_code")
    from cuedeck.refs.drift import record_references
    from cuedeck.workspace import open_workspace

    root = tmp_path / "shop"
    files = {
        "src/shop/auth.py": AUTH,
        f"{DEEP}/mandate_signature_verification.py": (
            "def verify_mandate_signature(mandate: str) -> bool:\n"
            '    """Check a SEPA mandate\'s signature before a login session pays."""\n'
            "    return bool(mandate)\n"
        ),
        ".cuedeck/cards/aaa111.md": _card(
            "aaa111",
            "Login forgets the page asked for",
            "active",
            "After @code/src/shop/auth.py#login the user lands on the home page.\n\n"
            f"Payments: @code/{DEEP}/mandate_signature_verification.py#verify_mandate_signature\n",
        ),
        ".cuedeck/cards/bbb222.md": _card("bbb222", "Throttle login after failures", "todo"),
        ".cuedeck/cards/ccc333.md": _card("ccc333", "Export invoices as CSV", "todo"),
    }
    for n in range(60):
        files[f"src/shop/steps/step_{n:02d}.py"] = (
            f"def login_step_{n}(session: dict) -> dict:\n"
            f'    """Login step {n}: carry the login session on."""\n'
            "    return session\n"
        )
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / ".cuedeck" / "docs").mkdir()
    record_references(open_workspace(root), ".cuedeck/cards/aaa111.md")
    drifted = AUTH.replace("    return check_password(user, password)\n", (
        "    if not user:\n        return False\n    return check_password(user, password)\n"
    ))  # fmt: skip
    (root / "src/shop/auth.py").write_text(drifted, encoding="utf-8")
    return root


@pytest.fixture
def code_page(code_repo: Path) -> Iterator[tuple[Any, list[str]]]:
    with _served(code_repo) as address, _browsed(address) as opened:
        yield opened


def _shown_cards(tab: Any) -> dict[str, list[str]]:
    return {
        status: tab.locator(f'.column[data-status="{status}"] .card').evaluate_all(
            "cards => cards.map(c => c.dataset.id)"
        )
        for status in ("todo", "active", "done")
    }


def test_search_on_a_code_repository_keeps_the_matching_cards(code_page: tuple) -> None:
    """Code fills the first page of hits; the columns still show the cards that match."""
    tab, errors = code_page
    tab.fill("#q", "login")
    tab.wait_for_selector("#hits:not([hidden]) li")
    tab.wait_for_function("() => document.querySelectorAll('.card').length < 3")
    assert _shown_cards(tab) == {"todo": ["bbb222"], "active": ["aaa111"], "done": []}
    assert tab.locator(".card.match").count() == 2
    hits = tab.locator("#hits li").all_inner_texts()
    assert hits and any(hit.startswith("src/shop/") for hit in hits)  # code among the hits
    tab.fill("#q", "")
    tab.wait_for_function("() => document.querySelectorAll('.card').length === 3")
    assert errors == []


def test_the_scene_view_shows_every_column_and_the_drift_labels(code_page: tuple) -> None:
    tab, errors = code_page
    tab.click('.tab[data-view="scene"]')
    tab.wait_for_selector("#manifest tbody tr")
    # Nothing covers the manifest: each header cell and each "why" cell is what the
    # page shows at its centre, and the table ends before the scene's text starts.
    covered = tab.evaluate(
        """() => [...document.querySelectorAll('#manifest th, #manifest td:last-child')]
            .filter(cell => {
              const box = cell.getBoundingClientRect();
              const x = box.left + box.width / 2, y = box.top + box.height / 2;
              if (y > window.innerHeight) return false;  // below the fold: not drawn
              const seen = document.elementFromPoint(x, y);
              return !(seen === cell || cell.contains(seen));
            }).map(cell => cell.textContent)"""
    )
    assert covered == []
    table = tab.locator("#manifest").bounding_box()
    text = tab.locator("#scene-text").bounding_box()
    assert table["x"] + table["width"] <= text["x"]
    rows = tab.locator("#manifest tbody tr")
    login = rows.filter(has_text="src/shop/auth.py#login")
    assert login.count() == 1
    label = login.locator(".ref-drifted")
    assert label.count() == 1 and label.inner_text().startswith("drifted: +2 -0 lines since ")
    deep = rows.filter(has_text="verify_mandate_signature")
    assert deep.locator(".ref").count() == 0  # fresh: nothing to say
    assert errors == []
