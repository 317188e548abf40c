"""Parsing a file again from its last tree gives what a fresh parse gives: the same tree,
the same facts, through edits anywhere in real source files (real grammars)."""

from __future__ import annotations

from pathlib import Path

import pytest

import cuedeck_code.intel.resolve as resolve_module
from cuedeck_code.intel.extract import SyntacticExtractor
from cuedeck_code.intel.reparse import RecentTrees, edit_between
from cuedeck_code.languages import grammar

PYTHON = Path(resolve_module.__file__).read_bytes()
SCRIPT = b"""import { helper as h } from './util.js';

export class Box {
  constructor(size) { this.size = size; }
  grow(by) { return h(this.size + by); }
}

export function make(size) {
  return new Box(size).grow(1);
}
"""


def _edits(data: bytes) -> list[bytes]:
    """Each version after the one before: a body changed, a function added in the
    middle, a line removed, a name renamed, non-ASCII text, the start and the end
    changed, everything replaced, back to the start."""
    middle = data.index(b"\n", len(data) // 2) + 1
    steps = [
        data.replace(b"return", b"return  ", 1),
        data[:middle] + b"\ndef added(x):\n    return x\n\n" + data[middle:],
        data[:middle] + data[data.index(b"\n", middle) + 1 :],
        data.replace(b"size", b"extent"),
        data[:middle] + "# réglé, 日本語\n".encode() + data[middle:],
        b"# first\n" + data + b"\n# last\n",
        b"x = 1\n",
        data,
    ]
    return steps


@pytest.mark.parametrize(("language", "path", "data"), [
    ("python", "pkg/resolve.py", PYTHON),
    ("javascript", "src/box.js", SCRIPT),
])  # fmt: skip
def test_a_tree_parsed_again_is_a_fresh_parse(language: str, path: str, data: bytes) -> None:
    parser = grammar(language).parser
    trees = RecentTrees()
    trees.parse(parser, (language, path), data)
    for version in _edits(data):
        again = trees.parse(parser, (language, path), version)
        fresh = parser.parse(version)
        assert str(again.root_node) == str(fresh.root_node)
        assert (again.root_node.end_byte, again.root_node.end_point) == (
            fresh.root_node.end_byte,
            fresh.root_node.end_point,
        )


@pytest.mark.parametrize(("path", "data"), [("pkg/resolve.py", PYTHON), ("src/box.js", SCRIPT)])
def test_facts_from_a_kept_tree_are_a_fresh_extractors(path: str, data: bytes) -> None:
    kept = SyntacticExtractor()
    paths = frozenset({path, "src/util.js"})
    kept.facts(path, data, paths)
    for version in _edits(data):
        assert kept.facts(path, version, paths) == SyntacticExtractor().facts(path, version, paths)
    assert len(kept.trees._trees) == 1  # one file, one tree kept


def test_the_edit_between_two_versions() -> None:
    old, new = b"ab\ncd\nef", b"ab\ncXYd\nef"
    assert edit_between(old, new) == {
        "start_byte": 4,
        "old_end_byte": 4,
        "new_end_byte": 6,
        "start_point": (1, 1),
        "old_end_point": (1, 1),
        "new_end_point": (1, 3),
    }
    # A repeated run: the prefix and the suffix never overlap.
    assert edit_between(b"aaaa", b"aa") == {
        "start_byte": 2,
        "old_end_byte": 4,
        "new_end_byte": 2,
        "start_point": (0, 2),
        "old_end_point": (0, 4),
        "new_end_point": (0, 2),
    }


def test_only_the_last_trees_are_kept() -> None:
    parser = grammar("python").parser
    trees = RecentTrees(kept=2)
    for n in range(4):
        trees.parse(parser, ("python", f"m{n}.py"), b"x = %d\n" % n)
    assert list(trees._trees) == [("python", "m2.py"), ("python", "m3.py")]


def test_a_forked_worker_starts_with_its_own_lock_and_no_trees() -> None:
    import multiprocessing

    parser = grammar("python").parser
    _INHERITED.parse(parser, ("python", "m.py"), b"x = 1\n")
    _INHERITED._lock.acquire()  # as if a thread of the parent held it at the fork
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(1) as pool:  # the worker inherits _INHERITED as it was
            kept = pool.apply_async(_parse_in_child).get(timeout=60)  # a hang fails
    finally:
        _INHERITED._lock.release()
    assert kept == [("python", "n.py")]


_INHERITED = RecentTrees()


def _parse_in_child() -> list[tuple[str, str]]:
    _INHERITED.parse(grammar("python").parser, ("python", "n.py"), b"y = 2\n")
    return list(_INHERITED._trees)
