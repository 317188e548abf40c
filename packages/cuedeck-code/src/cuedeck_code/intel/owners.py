"""Which definitions of a file read again keep their edges, their lines shifted.

An edge comes from a chain written inside a definition (its owner; a chain outside any
definition belongs to the file's ``module`` row). What resolving a definition's chains
reads of its own file is those chains, the names bound in the scopes they are written in
and around them, and the file's definitions; the rest is other files' names. So each
definition is given a digest (:func:`owner_digests`, kept in ``names.digest``) of its
chains, their lines counted from its first line, and of the names bound in their scopes
(without positions). When a refresh reads one file again and nothing else changed, a
definition whose digest is the same resolves as it did: its edges are kept, moved by
as many lines as it moved (:func:`kept_owners`), and only the others are resolved.
"""

from __future__ import annotations

import marshal
import zlib
from collections import Counter
from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.store import COLUMN

if TYPE_CHECKING:
    from cuedeck_code.intel.facts import Facts
    from cuedeck_code.intel.lookup import NameLookup
    from cuedeck_code.intel.store import GraphStore

#: Kinds of definitions whose coming or going changes nothing but the lookups of their
#: own name (a function has no members and, without ``extra``, calling it gives nothing).
PLAIN = frozenset({"function", "method"})


def owner_key(owner: str, defined: Counter[str]) -> str:
    """The definition a chain's edges start from: its owner, or the module (``""``)
    when the owner is no definition of the file (as :func:`.rows.edge_rows` maps it)."""
    return owner if owner in defined else ""


def owner_digests(facts: Facts) -> dict[str, int]:
    """Definition (``""``: the module) -> a CRC-32 of what resolving its chains reads
    of its file; none for a name defined twice (its edges are always resolved again).
    The material is serialised by :func:`marshal.dumps` at version 2, which writes
    values alone (no back-references, which hang on reference counts): the same in
    every process of one Python (a new one may change digests: one resolution more)."""
    defined = Counter(d[0] for d in facts["defs"])
    start = {d[0]: d[2] for d in facts["defs"] if defined[d[0]] == 1}
    own: dict[str, list[Any]] = {}  # a scope's bound names, without positions
    for scope, name, how, chain in facts["vars"]:
        own.setdefault(scope, []).append((name, how, [part[0] for part in chain]))
    for scope, local, target_ns, target_name, _line, _column in facts["binds"]:
        own.setdefault(scope, []).append((local, target_ns, target_name))
    around: dict[str, int] = {}

    def context(scope: str) -> int:
        found = around.get(scope)
        if found is None:
            outer = context(scope.rpartition(".")[0]) if scope else 0
            found = around[scope] = zlib.crc32(marshal.dumps((own.get(scope), outer), 2))
        return found

    # By owner: role, context and chain of each of its chains (lines counted from the
    # owner's first), then its imports; a name defined twice gets no digest: no material.
    material: dict[str, list[Any]] = {key: [] for key in ("", *start)}
    for scope, owner, role, chain in facts["refs"]:
        key = owner if owner in defined else ""
        items = material.get(key)
        if items is not None:
            base = start.get(key, 0)
            items.append(role)
            items.append(around.get(scope) or context(scope))
            items.append([(name, line - base, column) for name, line, column in chain])
    for scope, local, target_ns, target_name, line, column in facts["binds"]:
        key = owner_key(scope, defined)
        items = material.get(key)
        if items is not None:
            items.append((local, target_ns, target_name, line - start.get(key, 0), column))
    return {key: zlib.crc32(marshal.dumps(items, 2)) for key, items in material.items()}


def kept_owners(
    facts: Facts,
    digests: dict[str, int],
    before: dict[str, tuple[int, int, int | None]],
    changed: set[str],
) -> dict[str, int]:
    """Owner -> lines it moved, for each definition of a file read again that keeps
    its edges: its digest is the one ``before`` held (``name -> (id, line, digest)``),
    and none of its chains, nor any name bound in the file, mentions a short name in
    ``changed`` (the definitions that came or went)."""
    lines = {d[0]: d[2] for d in facts["defs"]}
    lines[""] = before.get("", (0, 1, None))[1]
    if changed:
        bound: set[str] = set()
        for _scope, name, _how, chain in facts["vars"]:
            bound.add(name)
            bound.update(str(part[0]) for part in chain)
        for _scope, local, _target_ns, target_name, _line, _column in facts["binds"]:
            bound.update((local, str(target_name)))
        if bound & changed:
            return {}
    mentions: dict[str, set[str]] = {}
    if changed:
        defined = Counter(d[0] for d in facts["defs"])
        for _scope, owner, _role, chain in facts["refs"]:
            words = mentions.setdefault(owner_key(owner, defined), set())
            words.update(str(part[0]) for part in chain)
    kept: dict[str, int] = {}
    for owner, digest in digests.items():
        old = before.get(owner)
        if old is None or old[2] != digest or mentions.get(owner, set()) & changed:
            continue
        kept[owner] = lines[owner] - old[1]
    return kept


def moved_edges(store: GraphStore, moved: dict[int, int]) -> list[tuple[int, int, int, int]]:
    """The syntactic edges of the definitions in ``moved`` (id -> lines) as the graph
    holds them, their positions moved by as many lines."""
    if not moved:
        return []
    marks = ",".join("?" * len(moved))
    return [
        (dst, src, pos + moved[src] * COLUMN, relation)
        for dst, src, pos, relation in store.query(
            f"SELECT dst, src, pos, relation FROM edges WHERE source = 0 AND src IN ({marks})",
            list(moved),
        )
    ]


def reusable(
    store: GraphStore,
    path: str,
    facts: dict[str, Facts | None],
    digests: dict[str, dict[str, int]],
    held: dict[str, tuple[int, str, str, str, str]],
    words: set[bytes] | None,
) -> dict[str, dict[str, int]]:
    """``{path: owner -> lines moved}`` of the definitions of ``path`` (the one file
    read again; ``held``: the graph's files, ``words``: the short names that came or
    went) that keep their edges (:func:`kept_owners`)."""
    found = facts.get(path)
    row = held.get(path)
    if found is None or row is None or row[3] != "syntactic" or row[4] != found["ns"]:
        return {}
    if words is None or path not in digests:
        return {}
    before: dict[str, tuple[int, int, int | None]] = {}
    seen: set[str] = set()
    for number, name, line, digest in store.query(
        "SELECT id, name, line, digest FROM names WHERE file = ?", (row[0],)
    ):
        if name in seen:  # defined twice: resolved again
            before.pop(name, None)
        else:
            before[name] = (number, line, digest)
        seen.add(name)
    changed = {word.decode() for word in words}
    kept = kept_owners(found, digests[path], before, changed)
    return {path: kept} if kept else {}


def file_rows(
    store: GraphStore,
    path: str,
    language: str,
    found: Facts,
    names: NameLookup,
    ids: dict[str, dict[str, int]],
    keep: dict[str, int] | None,
) -> tuple[list[tuple[int, int, int, int]], list[int] | None]:
    """The edge rows of one file resolved against ``names`` (``ids``: the definitions'
    ids by path); with ``keep`` (owner -> lines moved, :func:`reusable`), only the other
    definitions' chains are resolved, the kept ones' edges moved from the graph, and the
    ids of those that did not move are given too (their edges stay as they are)."""
    from cuedeck_code.intel.resolve import FileResolver
    from cuedeck_code.intel.rows import edge_rows

    if not keep:
        return edge_rows(FileResolver(path, language, found, names).edges(), ids), None
    defined = Counter(d[0] for d in found["defs"])
    chains = [r for r in found["refs"] if owner_key(r[1], defined) not in keep]
    edges = FileResolver(path, language, {**found, "refs": chains}, names).edges()
    own = ids.get(path) or {}
    kept = {own[name]: lines for name, lines in keep.items() if name in own}
    rows = [row for row in edge_rows(edges, ids) if row[1] not in kept]
    rows.extend(moved_edges(store, {n: m for n, m in kept.items() if m}))
    return rows, [number for number, lines in kept.items() if not lines]
