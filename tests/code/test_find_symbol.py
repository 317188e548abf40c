"""find_symbol and `cue find` on the sample files of several languages: exact and
qualified names (a package or module written before them), fuzzy matches, filters,
paging, sources before tests, one entry per name, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cuedeck import open_workspace
from cuedeck.errors import InvalidInput
from cuedeck_cli.app import make_cli

PROPERTY = '''"""A gauge."""


class Gauge:
    """A value with bounds."""

    @property
    def level(self) -> int:
        return self._level

    @level.setter
    def level(self, value: int) -> None:
        self._level = value

    def reset(self) -> None:
        self.level = 0
'''
TEST = '''from client import handle_request


def handle_request() -> None:
    """A test helper named like the code it tests."""


def test_send() -> None:
    assert handle_request
'''


def finder(root: Path) -> Any:
    """find_symbol through the registered tool (its arguments validated as MCP does)."""
    workspace = open_workspace(root)
    tool = workspace.plugins.tools()["find_symbol"]
    return lambda **arguments: tool.call(workspace, arguments)


@pytest.fixture
def find(code_root: Path) -> Any:
    (code_root / "gauge.py").write_text(PROPERTY, encoding="utf-8")
    (code_root / "tests").mkdir()
    (code_root / "tests" / "test_client.py").write_text(TEST, encoding="utf-8")
    return finder(code_root)


def where(reply: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(h["path"], h["symbol"], h["match"]) for h in reply["results"]]


@pytest.mark.parametrize(
    ("name", "expected", "match"),
    [
        ("Client.send", ("client.py", "Client.send", "method", 34, 40), "exact"),
        ("send", ("client.py", "Client.send", "method", 34, 40), "name"),
        ("client.Client.send", ("client.py", "Client.send", "method", 34, 40), "exact"),
        ("Cache::new", ("lib.rs", "Cache.new", "method", 27, 29), "exact"),
        ("store.Store.Len", ("store/store.go", "Store.Len", "method", 5, 5), "exact"),
        ("Server.ServeHTTP", ("server.go", "Server.ServeHTTP", "method", 32, 34), "exact"),
        (
            "com.acme.Inventory.add",
            ("com/acme/Inventory.java", "Inventory.add", "method", 22, 24),
            "exact",
        ),
        ("Router", ("router.ts", "Router", "class", 20, 34), "exact"),
        (
            "Billing::Invoice#total",
            ("billing.rb", "Billing.Invoice.total", "method", 13, 15),
            "exact",
        ),
    ],
)
def test_an_exact_or_qualified_name_finds_its_definition(
    find: Any, name: str, expected: tuple[str, str, str, int, int], match: str
) -> None:
    best = find(name=name)["results"][0]
    assert (best["path"], best["symbol"], best["kind"], best["line"], best["end_line"]) == expected
    assert best["signature"] and best["language"]
    assert best["match"] == match


def test_exact_is_exact_and_a_wrong_package_finds_nothing(find: Any) -> None:
    assert find(name="client.send")["results"] == []  # case counts
    assert find(name="billing.Client.send")["results"] == []
    wrong = find(name="Clinet.send")
    assert wrong["total"] == 0 and "fuzzy" in wrong["hint"]


def test_sources_come_before_tests_and_a_property_is_one_entry(find: Any) -> None:
    found = where(find(name="handle_request"))
    assert found == [
        ("client.py", "handle_request", "exact"),
        ("tests/test_client.py", "handle_request", "exact"),
    ]
    level = find(name="Gauge.level")
    assert level["total"] == 1
    assert (level["results"][0]["line"], level["results"][0]["end_line"]) == (7, 13)


@pytest.mark.parametrize(
    ("name", "expected", "match"),
    [
        ("client.send", ("client.py", "Client.send"), "case"),
        ("handle_req", ("client.py", "handle_request"), "prefix"),
        ("ServeHT", ("server.go", "Server.ServeHTTP"), "prefix"),
        ("handlerequest", ("client.py", "handle_request"), "abbreviation"),
        ("pURL", ("router.ts", "parseURL"), "abbreviation"),
        ("tarnsport", ("transport.py", "transport"), "typo"),
    ],
)
def test_fuzzy_finds_cases_prefixes_abbreviations_and_typos(
    find: Any, name: str, expected: tuple[str, str], match: str
) -> None:
    assert find(name=name)["total"] == 0
    found = find(name=name, match="fuzzy")
    best = found["results"][0]
    assert ((best["path"], best["symbol"]), best["match"]) == (expected, match)


def test_filters_and_pages(find: Any) -> None:
    methods = find(name="new", match="fuzzy", kind="method", limit=50)
    assert methods["results"] and {h["kind"] for h in methods["results"]} == {"method"}
    rust = find(name="new", match="fuzzy", language="rust", limit=50)
    assert {h["path"] for h in rust["results"]} <= {"lib.rs", "eviction.rs"}
    scoped = find(name="helper", path="util/**")
    assert where(scoped) == [("util/helpers.ts", "helper", "exact")]
    every = find(name="e", match="fuzzy", limit=100)
    first = find(name="e", match="fuzzy", limit=3)
    assert first["has_more"] and first["next_offset"] == 3 and first["total"] == every["total"]
    second = find(name="e", match="fuzzy", limit=3, offset=3)
    assert where(first) + where(second) == where(every)[:6]
    bad_kind = find(name="send", kind="methd")
    assert bad_kind["results"] == [] and "kinds here: " in bad_kind["hint"]
    assert "method" in bad_kind["hint"]
    cobol = find(name="send", language="cobol")
    assert "languages here: " in cobol["hint"] and "python" in cobol["hint"]


@pytest.mark.parametrize("name", ["a b", "1st", "x-y", "   ", "Client.se nd"])
def test_a_name_that_is_not_one_is_1004(find: Any, name: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        find(name=name)
    assert caught.value.code == 1004


def test_the_table_follows_the_files(code_root: Path, find: Any) -> None:
    assert find(name="Gauge.reset")["total"] == 1
    (code_root / "gauge.py").write_text(PROPERTY.replace("def reset", "def zero"), "utf-8")
    fresh = finder(code_root)
    assert fresh(name="Gauge.reset")["total"] == 0
    assert fresh(name="Gauge.zero")["results"][0]["line"] == 15


def test_cue_find(code_root: Path, find: Any) -> None:
    def cue(*args: str) -> Any:
        return CliRunner().invoke(make_cli(), ["-C", str(code_root), "find", *args])

    result = cue("Client.send")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "client.py:34  method  Client.send  def send(self, method: str, url: str, *, "
        'body: bytes = b"") -> Response'
    ]
    paged = cue("e", "--fuzzy", "-n", "2", "--lang", "python", "--kind", "method")
    assert len(paged.stdout.splitlines()) == 2
    assert "--offset 2 for more" in paged.stderr
    reply = json.loads(cue("Router", "--json", "--path", "*.ts").stdout)
    assert [h["symbol"] for h in reply["results"]] == ["Router"]
    missing = cue("Nothing.here")
    assert missing.exit_code == 0 and missing.stdout == "" and "fuzzy" in missing.stderr
    bad = cue("a b")
    assert bad.exit_code != 0 and "error[1004]" in bad.stderr
