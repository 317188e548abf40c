"""One entry per definition in ``search_code``: a getter and its setter, a module and the
function it is named after, a stub (``.pyi``, ``.d.ts``) and the module it describes
each give one hit, with the lines of the definition the words found."""

from __future__ import annotations

from typing import Any

from cuedeck import open_workspace
from tests.conftest import MakeWorkspace, needs

OPTIONS_TS = """\
export class Options {
  private _timeout = 0;

  get timeout(): number {
    return this._timeout;
  }

  /** Set the request timeout in milliseconds; negative values are refused. */
  set timeout(value: number) {
    if (value < 0) {
      throw new RangeError('timeout must not be negative');
    }
    this._timeout = value;
  }
}
"""

CREATE_TS = """\
import {Options} from './options';

/** Create a client instance bound to its default options. */
export function create(defaults: Options) {
  const instance = {defaults};
  return instance;
}
"""

RETRY_PY = '''\
"""Retry policies."""


class Backoff:
    """Exponential backoff between attempts."""

    def delay(self, attempt: int) -> float:
        """Seconds to wait before the next attempt: doubles with each failed attempt."""
        return 0.5 * 2**attempt
'''

RETRY_PYI = """\
class Backoff:
    def delay(self, attempt: int) -> float: ...
"""

CLIENT_JS = """\
/** Send a request, retrying with exponential backoff. */
function retrySend(request, attempts) {
  return request.send(attempts);
}

module.exports = retrySend;
"""

CLIENT_DTS = """\
/** Send a request, retrying with exponential backoff. */
export declare function retrySend(request: unknown, attempts: number): Promise<unknown>;
"""


def search(root: Any, query: str, **arguments: Any) -> list[dict[str, Any]]:
    workspace = open_workspace(root)
    tool = workspace.plugins.tools()["search_code"]
    found = tool.call(workspace, {"query": query, "mode": "keyword", **arguments})
    return list(found["results"])


@needs("cuedeck_search")
def test_a_getter_and_its_setter_are_one_entry_with_the_lines_found(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"src/options.ts": OPTIONS_TS})
    hits = [h for h in search(root, "timeout negative refused") if h["symbol"] == "Options.timeout"]
    assert len(hits) == 1
    # The words are in the setter: its lines, not the getter's.
    assert (hits[0]["line"], hits[0]["end_line"]) == (9, 14)


@needs("cuedeck_search")
def test_a_function_named_as_its_module_is_the_function(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"src/create.ts": CREATE_TS, "src/options.ts": OPTIONS_TS})
    hits = search(root, "create client instance default options")
    create = [h for h in hits if h["path"] == "src/create.ts" and h["symbol"] == "create"]
    assert [(h["kind"], h["line"]) for h in create] == [("function", 4)]
    assert [h["line"] for h in search(root, "create client instance", kind="function")] == [4]


@needs("cuedeck_search")
def test_a_stub_s_definition_is_its_module_s(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "lib/retry.py": RETRY_PY,
            "lib/retry.pyi": RETRY_PYI,
            "lib/client.js": CLIENT_JS,
            "lib/client.d.ts": CLIENT_DTS,
        }
    )
    for query, where in (
        ("Backoff delay attempt", ("lib/retry.py", "Backoff.delay", 7)),
        ("retrySend request attempts", ("lib/client.js", "retrySend", 2)),
    ):
        hits = search(root, query)
        named = [(h["path"], h["symbol"], h["line"]) for h in hits if h["symbol"] == where[1]]
        assert named == [where]
    assert not [h for h in search(root, "Backoff delay attempt") if h["path"].endswith(".pyi")]


@needs("cuedeck_search")
def test_a_name_finds_the_module_s_definition_before_its_stub_s(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(
        {
            "lib/retry.py": RETRY_PY,
            "lib/retry.pyi": RETRY_PYI,
            "lib/client.js": CLIENT_JS,
            "lib/client.d.ts": CLIENT_DTS,
        }
    )
    workspace = open_workspace(root)
    for name, where in (("Backoff.delay", "lib/retry.py"), ("retrySend", "lib/client.js")):
        first = workspace.search(name, mode="keyword", limit=2)
        assert [(r.path, r.anchors[0]) for r in first] == [
            (where, name),
            (where.rsplit(".", 1)[0] + (".pyi" if where.endswith(".py") else ".d.ts"), name),
        ]
        assert search(root, name)[0]["path"] == where
