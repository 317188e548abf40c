"""Code intelligence (issue 38): the syntactic graph against the official SCIP indexers,
its speed over MCP, and what it costs the index.

Quality: for each repository (a checkout whose SCIP index was made beforehand with
``scip-python index . --project-name=NAME --project-version=1`` or ``scip-typescript
index --infer-tsconfig``, passed as ``NAME=TREE:INDEX``), the truth is every reference
the SCIP index makes, in a file both hold, to a function, method or class the
repository defines (mapped onto the graph's definitions exactly as ``scip_generate``
loads an index); the prediction is every syntactic edge to one. A reference matches
when its file, line, column and target agree. Recall is the share of the truth the
syntactic graph finds, precision the share of its edges the truth holds. Where the
index itself slips (a class named at an attribute of a ``__slots__`` class, a symbol
defined at several places: ``_artefacts``), the place counts on neither side;
``recall_all`` is the recall with those counted as truth.

Speed: a workspace of Django's source (benchmarks/django_set.py's sdist), served by
``cue mcp`` over stdio to the official MCP client; each tool is called on a spread of
names, warm, and its median reported.

Cost: a cold ``cue index`` of that workspace as a user runs it (the graph left to the
detached builder: the command's path, ``path_*``), the same with ``--graph-wait`` (the
graph in the foreground: its own seconds in the reply, the rest is the index without
it), the graph's whole cold build again in this process (its CPU, forked workers
included), the build lock's cost, a one-file refresh of the graph, and the sizes of the
two SQLite files; this process collects garbage as ``cue`` does.

    uv run python benchmarks/code_intel.py quality click=/path/click:/path/click.scip ...
    uv run python benchmarks/code_intel.py speed --django-sdist Django-5.1.4.tar.gz
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on sys.path and "mcp" would name
# benchmarks/mcp.py instead of the MCP SDK.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
LINKED = ("class", "function", "method")


def _workspace(tree: Path) -> Any:
    import cuedeck

    (tree / ".cuedeck").mkdir(exist_ok=True)
    if not (tree / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
        subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
    return cuedeck.open_workspace(tree)


def quality(name: str, tree: Path, index_path: Path) -> dict[str, Any]:
    """Recall and precision of the syntactic graph's references against the SCIP index."""
    from cuedeck_code.intel.scip_load import scip_edges
    from cuedeck_code.intel.scip_wire import read_index

    workspace = _workspace(tree)
    workspace.refresh()
    intel = workspace.service("code_intel")
    intel.store.path.unlink(missing_ok=True)  # built anew: what this version resolves
    started = time.perf_counter()
    store = intel.ready()
    built = time.perf_counter() - started
    kinds = dict(store.query("SELECT id, kind FROM names"))
    file_of = dict(store.query("SELECT n.id, f.path FROM names n JOIN files f ON f.id = n.file"))
    index = read_index(index_path.read_bytes())
    truth_edges, covered = scip_edges(workspace, store, index)
    paths = {path for _, path in covered}
    canon = _canonical(store)
    truth = {(file_of[s], pos, canon[d]) for s, d, pos, _ in truth_edges if kinds.get(d) in LINKED}
    predicted = {
        (file_of[s], pos, canon[d])
        for s, d, pos in store.query("SELECT src, dst, pos FROM edges WHERE source = 0")
        if kinds.get(d) in LINKED and file_of.get(s) in paths
    }
    stubs = {canon[d] for d, p in file_of.items() if p.endswith(".pyi") and d in canon}
    predicted = _stubbed(truth, predicted, stubs)
    classes = {canon[d] for d, k in kinds.items() if k == "class" and d in canon}
    artefacts = _artefacts(tree, store, index, truth, canon, classes)
    counted = {k: len(v) for k, v in artefacts.items()}
    everything = len(truth), len(truth & predicted)
    left_out = {place for places in artefacts.values() for place in places}
    truth = {item for item in truth if (item[0], item[1]) not in left_out}
    predicted = {item for item in predicted if (item[0], item[1]) not in left_out}
    kinds = {canon[d]: k for d, k in kinds.items() if d in canon and k in LINKED}
    hits = len(truth & predicted)
    # Where the indexer named something (it could not resolve what its environment lacks,
    # a package not installed): a prediction elsewhere is neither right nor wrong.
    named = _named(index)
    judged = {item for item in predicted if (item[0], item[1]) in named}
    by_kind: dict[str, list[int]] = {}
    for item in truth:
        by_kind.setdefault(kinds[item[2]], [0, 0])[0] += 1
        if item in predicted:
            by_kind[kinds[item[2]]][1] += 1
    return {
        "repository": name,
        "files": len(paths),
        "truth": len(truth),
        "predicted": len(predicted),
        "matched": hits,
        "recall": round(hits / len(truth), 3) if truth else None,
        "precision": round(hits / len(judged), 3) if judged else None,
        "precision_all": round(hits / len(predicted), 3) if predicted else None,
        "recall_by_kind": {k: round(v[1] / v[0], 3) for k, v in sorted(by_kind.items()) if v[0]},
        # The index's own slips, left out of both sides (see _artefacts), and the recall
        # with them counted as truth.
        "left_out": counted,
        "recall_all": round(everything[1] / everything[0], 3) if everything[0] else None,
        "graph_seconds": round(built, 2),
        "indexer": f"{index.tool} {index.version}",
    }


def _artefacts(
    tree: Path, store: Any, index: Any, truth: set[Any], canon: dict[int, Any], classes: set[Any]
) -> dict[str, set[tuple[str, int]]]:
    """``(path, position)`` of the references where the index slips, by kind:

    - ``slots``: a class named at an attribute of its instance (``self._attrs``, in a
      class with ``__slots__``: scip-python names the class there, not the attribute);
    - ``ambiguous``: a symbol the index defines at two or more of the graph's
      definitions (scip-python names a function nested in a method without the method:
      each method's own ``hook`` is ``C#hook().``), so which one is meant is unknown.
    """
    from cuedeck_code.intel.scip_load import _innermost
    from cuedeck_code.intel.scip_wire import DEFINITION, descriptor_name

    lines: dict[str, list[str]] = {}

    def text(path: str) -> list[str]:
        if path not in lines:
            lines[path] = (tree / path).read_text(errors="replace").split("\n")
        return lines[path]

    slots = set()
    for path, pos, target in truth:
        if target not in classes:
            continue
        line = text(path)[pos // 4096 - 1]
        column = pos % 4096
        word = re.match(r"\w*", line[column:])
        if line[:column].endswith(".") and word and word[0] != target[1].rpartition(".")[2]:
            slots.add((path, pos))
    held = {path: row[0] for path, row in store.files().items()}
    by_file: dict[int, list[Any]] = {}
    for number, name, kind, file_id, line, end in store.query(
        "SELECT id, name, kind, file, line, end_line FROM names"
    ):
        by_file.setdefault(file_id, []).append(
            (number, name, name.rpartition(".")[2], line, end if kind != "module" else 1 << 30)
        )
    defined: dict[str, set[Any]] = {}
    for document in index.documents:
        file_id = held.get(document.path)
        for o in document.occurrences if file_id is not None else ():
            if o.roles & DEFINITION and not o.symbol.startswith("local "):
                wanted = descriptor_name(o.symbol)
                found = _innermost(by_file.get(file_id, []), o.line + 1, wanted)
                if wanted and found is not None and found[0] in canon:
                    defined.setdefault(o.symbol, set()).add(canon[found[0]])
    twice = {symbol for symbol, where in defined.items() if len(where) > 1}
    ambiguous = {
        (document.path, (o.line + 1) * 4096 + min(o.column, 4095))
        for document in index.documents
        for o in document.occurrences
        if o.symbol in twice and not o.roles & DEFINITION
    }
    return {"slots": slots, "ambiguous": ambiguous}


def _named(index: Any) -> set[tuple[str, int]]:
    """``(path, position)`` of each place where the index names a symbol not local."""
    return {
        (document.path, (o.line + 1) * 4096 + min(o.column, 4095))
        for document in index.documents
        for o in document.occurrences
        if o.symbol and not o.symbol.startswith("local ")
    }


def _canonical(store: Any) -> dict[int, tuple[str, str]]:
    """Each definition as ``(path, name)``, a stub's (``x.pyi``) as its module's
    (``x.py``): the type checker behind scip-python resolves to the stub when both
    exist, the syntactic graph to the code; both name the same definition."""
    found = {}
    for number, path, name in store.query(
        "SELECT n.id, f.path, n.name FROM names n JOIN files f ON f.id = n.file"
    ):
        found[number] = (path[:-1] if path.endswith(".pyi") else path, name)
    return found


def _stubbed(truth: set[Any], predicted: set[Any], stubs: set[Any]) -> set[Any]:
    """``predicted`` with each prediction at a place where the truth names a stub's
    definition (a ``.pyi`` the type checker prefers, often another module's, as attrs'
    ``attrs/__init__.pyi`` declares ``define``) replaced by the truth's when both have the
    same name: the stub declares the definition the code graph found."""
    at = {(item[0], item[1]): item for item in truth if item[2] in stubs}
    out = set()
    for item in predicted:
        other = at.get((item[0], item[1]))
        if other is not None and other[2][1].rpartition(".")[2] == item[2][1].rpartition(".")[2]:
            out.add(other)
        else:
            out.add(item)
    return out


def misses(name: str, tree: Path, index_path: Path, count: int) -> None:
    """Print some references the syntactic graph missed and some it made wrongly."""
    from cuedeck_code.intel.scip_load import scip_edges
    from cuedeck_code.intel.scip_wire import read_index

    workspace = _workspace(tree)
    workspace.refresh()
    intel = workspace.service("code_intel")
    intel.store.path.unlink(missing_ok=True)  # built anew, as quality() does
    store = intel.ready()
    kinds = dict(store.query("SELECT id, kind FROM names"))
    names = dict(store.query("SELECT id, name FROM names"))
    file_of = dict(store.query("SELECT n.id, f.path FROM names n JOIN files f ON f.id = n.file"))
    index = read_index(index_path.read_bytes())
    truth_edges, covered = scip_edges(workspace, store, index)
    paths = {path for _, path in covered}
    canon = _canonical(store)
    stubs = {canon[d] for d, p in file_of.items() if p.endswith(".pyi") and d in canon}
    names = {canon[d]: n for d, n in names.items() if d in canon}
    truth = {(file_of[s], pos, canon[d]) for s, d, pos, _ in truth_edges if kinds.get(d) in LINKED}
    predicted = {
        (file_of[s], pos, canon[d])
        for s, d, pos in store.query("SELECT src, dst, pos FROM edges WHERE source = 0")
        if kinds.get(d) in LINKED and file_of.get(s) in paths
    }
    predicted = _stubbed(truth, predicted, stubs)
    kinds_of = {canon[d]: k for d, k in kinds.items() if d in canon}
    classes = {target for target, kind in kinds_of.items() if kind == "class"}
    artefacts = _artefacts(tree, store, index, truth, canon, classes)
    left_out = {place for places in artefacts.values() for place in places}
    truth = {item for item in truth if (item[0], item[1]) not in left_out}
    predicted = {item for item in predicted if (item[0], item[1]) not in left_out}

    def show(item: tuple[str, int, Any]) -> str:
        path, pos, target = item
        line = (tree / path).read_text(errors="replace").split("\n")[pos // 4096 - 1].strip()
        return f"{path}:{pos // 4096}:{pos % 4096} -> {names[target]}  | {line[:100]}"

    print(f"== {name}: missed")
    for item in sorted(truth - predicted)[:: max(1, len(truth - predicted) // count)][:count]:
        print("  ", show(item))
    named = _named(index)
    wrong = {item for item in predicted - truth if (item[0], item[1]) in named}
    print(f"== {name}: wrong (where the index names a symbol, as precision counts)")
    for item in sorted(wrong)[:: max(1, len(wrong) // count)][:count]:
        print("  ", show(item))


def django_tree(sdist: Path, into: Path) -> Path:
    """Django's source (the sdist's django/ package) as a git workspace."""
    root = into / "django"
    if root.exists():
        return root
    with tarfile.open(sdist) as tar:
        tar.extractall(into / "x", filter="data")
    source = next((into / "x").iterdir())
    shutil.move(str(source), str(root))
    shutil.rmtree(into / "x")
    (root / ".cuedeck").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return root


SPEED_NAMES = [
    "QuerySet.filter",
    "Model.save",
    "HttpResponse",
    "reverse",
    "Field.clean",
    "get_object_or_404",
    "Form.is_valid",
    "Q",
    "SQLCompiler.as_sql",
    "slugify",
]
CHAINS = [
    ("BaseHandler.get_response", "URLResolver.resolve"),
    ("Model.save", "SQLInsertCompiler.execute_sql"),
    ("ModelForm.save", "Model.save_base"),
    ("QuerySet.get", "SQLCompiler.execute_sql"),
]


async def _serve_and_ask(root: Path, rounds: int) -> dict[str, Any]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    cue = str(Path(sys.executable).with_name("cue"))
    params = StdioServerParameters(
        command=cue, args=["-C", str(root), "mcp", "--tools", "all"], env=dict(os.environ)
    )
    timings: dict[str, list[float]] = {}
    async with Client(params, mode="legacy") as session:
        await session.call_tool("scip_status", {})  # the graph in step, warm

        async def timed(tool: str, arguments: dict[str, Any]) -> None:
            started = time.perf_counter()
            result = await session.call_tool(tool, arguments)
            elapsed = (time.perf_counter() - started) * 1000
            if result.is_error:
                raise RuntimeError(f"{tool} {arguments}: {result.content}")
            timings.setdefault(tool, []).append(elapsed)

        for _ in range(rounds):
            for name in SPEED_NAMES:
                await timed("scip_definition", {"symbol": name})
                await timed("scip_references", {"symbol": name, "exact": True})
                await timed("scip_impact", {"symbol": name, "depth": 3, "exact": True})
            for start, end in CHAINS:
                await timed(
                    "scip_callchain",
                    {"from_symbol": start, "to_symbol": end, "max_depth": 10, "exact": True},
                )
    return {
        tool: {
            "p50_ms": round(statistics.median(v), 1),
            "p95_ms": round(sorted(v)[int(0.95 * (len(v) - 1))], 1),
            "calls": len(v),
        }
        for tool, v in timings.items()
    }


def _cpu(*, children: bool) -> float:
    """CPU seconds of this process, or of its waited-for children (``cue``, workers)."""
    import resource

    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _cue_index(cue: str, root: Path, *options: str) -> tuple[float, float, dict[str, Any]]:
    """``cue index --json`` of ``root``, cold: with a user cache of its own (parses are
    shared there between workspaces: a second run would find them); its wall seconds,
    its CPU seconds (forked workers included) and its reply."""
    cache = tempfile.mkdtemp(prefix="user-cache-", dir=root.parent)  # removed with the tree
    env = {**os.environ, "CUEDECK_CACHE_DIR": cache}
    started = time.perf_counter()
    children = _cpu(children=True)
    done = subprocess.run([cue, "-C", str(root), "index", "--json", *options],
                          capture_output=True, text=True, check=True, env=env)  # fmt: skip
    seconds = time.perf_counter() - started
    return seconds, _cpu(children=True) - children, json.loads(done.stdout)


def _builder_ended(pid: int) -> float:
    """Wait for the detached builder ``pid`` (not this process's child) to end; how long
    it ran."""
    from cuedeck.system.readable import readable

    started = time.perf_counter()
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return 0.0
    try:
        readable([handle], None)
    finally:
        os.close(handle)
    return time.perf_counter() - started


def _lock_cost(root: Path, times: int = 200) -> dict[str, float]:
    """Median microseconds of taking and releasing the graph's build lock (every sync
    does)."""
    from cuedeck_code.intel.detached import build_lock

    spent, cpu = [], time.process_time()
    for _ in range(times):
        started = time.perf_counter()
        with build_lock(root):
            pass
        spent.append((time.perf_counter() - started) * 1e6)
    cpu_us = (time.process_time() - cpu) * 1e6 / times
    return {"wall_us": round(statistics.median(spent), 1), "cpu_us_mean": round(cpu_us, 1)}


#: Refreshes of each kind timed (their median is reported): a collection of the older
#: generations lands in one now and then.
REFRESHES = 15


def speed(sdist: Path, rounds: int, *, mcp: bool = True) -> dict[str, Any]:
    import gc

    # Collected as `cue` collects (a server is `cue mcp`): young collections every
    # 50,000 allocations. At Python's default 700, a refresh in this process, which
    # also holds a cold build's objects, spent about 3 ms more collecting.
    gc.set_threshold(50_000, 20, 20)
    with tempfile.TemporaryDirectory() as folder:
        root = django_tree(sdist, Path(folder))
        # Settled as a user's checkout is: just after `git add`, every file's mtime is
        # git's index's own, and the first command to ask git hashes them all again
        # (seconds, which landed in whichever `cue index` ran first).
        subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, check=True)
        import cuedeck

        # The cold `cue index` a user runs: the index, search's keyword postings, then
        # the code graph, left to the detached builder (not this process's child: its CPU
        # is not counted here; the graph's whole CPU is measured below).
        cue = str(Path(sys.executable).with_name("cue"))
        path_seconds, path_cpu, reply = _cue_index(cue, root)
        building = reply["code_graph"]["background"]
        path_graph = reply["code_graph"]["seconds"]  # weighing and starting the builder
        builder_seconds = _builder_ended(building["pid"]) if building else 0.0
        # The same cold `cue index` with the graph built in its foreground, as before the
        # builder: the graph's own seconds are in the reply.
        shutil.rmtree(root / ".cuedeck" / ".cache")
        command_seconds, command_cpu, reply = _cue_index(cue, root, "--graph-wait")
        graph_seconds = reply["code_graph"]["seconds"]
        index_seconds = command_seconds - graph_seconds
        workspace = cuedeck.open_workspace(root)
        stats = workspace.refresh()
        intel = workspace.service("code_intel")
        synced = intel.sync()
        # The graph's cold build again, here, for its CPU (forked workers included).
        intel.store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{intel.store.path}{suffix}").unlink(missing_ok=True)
        intel.forget()
        cpu = _cpu(children=True) + _cpu(children=False)
        started = time.perf_counter()
        rebuilt = intel.sync()
        graph_wall = time.perf_counter() - started
        graph_cpu = _cpu(children=True) + _cpu(children=False) - cpu
        edges = reply["code_graph"]["edges"]
        cache = root / ".cuedeck" / ".cache"
        intel.store.close()
        sizes = {}
        for name in ("index.sqlite3", "code-intel.sqlite3"):
            import sqlite3

            connection = sqlite3.connect(cache / name)  # its write-ahead log folded in
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
            sizes[name] = (cache / name).stat().st_size
        others = sum(
            p.stat().st_size for p in cache.rglob("*") if p.is_file() and "code-intel" not in p.name
        )
        lock_us = _lock_cost(root)
        target = root / "django/utils/text.py"
        refreshes, refreshes_cpu = [], []
        original = target.read_text()
        for n in range(REFRESHES):
            target.write_text(original + f"\n\ndef _bench_{n}():\n    return slugify('x')\n")
            workspace.index.refresh_paths(["django/utils/text.py"])
            started, cpu = time.perf_counter(), time.process_time()
            intel.sync()
            refreshes.append((time.perf_counter() - started) * 1000)
            refreshes_cpu.append((time.process_time() - cpu) * 1000)
        body, body_cpu = [], []
        for n in range(REFRESHES):  # an edit inside a body: its interface stays the same
            target.write_text(
                original.replace(
                    "def slugify(value, allow_unicode=False):",
                    f"def slugify(value, allow_unicode=False):\n    _ = {n}",
                )
            )
            workspace.index.refresh_paths(["django/utils/text.py"])
            started, cpu = time.perf_counter(), time.process_time()
            intel.sync()
            body.append((time.perf_counter() - started) * 1000)
            body_cpu.append((time.process_time() - cpu) * 1000)
        renamed, renamed_cpu = [], []
        for n in range(REFRESHES):  # a definition renamed: the files that use it are read again
            target.write_text(original.replace("def slugify(", f"def slugify_{n}("))
            workspace.index.refresh_paths(["django/utils/text.py"])
            started, cpu = time.perf_counter(), time.process_time()
            intel.sync()
            renamed.append((time.perf_counter() - started) * 1000)
            renamed_cpu.append((time.process_time() - cpu) * 1000)
        target.write_text(original)
        workspace.index.refresh_paths(["django/utils/text.py"])
        intel.sync()
        intel.store.close()
        found = {
            "files": stats.seen,
            "cue_index_seconds": round(command_seconds, 1),
            "cold_index_without_graph_seconds": round(index_seconds, 1),
            "graph_seconds": round(graph_seconds, 1),
            "graph_share_of_index": round(graph_seconds / index_seconds, 3),
            "cue_index_cpu_seconds": round(command_cpu, 1),
            # The command's path with the builder: what `cue index` costs the user.
            "background": building,
            "path_seconds": round(path_seconds, 1),
            "path_cpu_seconds": round(path_cpu, 1),
            "path_share_of_index": round(path_seconds / index_seconds - 1, 3),
            "path_graph_seconds": path_graph,
            "path_graph_share": round(path_graph / (path_seconds - path_graph), 4),
            "index_without_graph_cpu_seconds": round(command_cpu - graph_cpu, 1),
            "path_cpu_share_of_index": round(path_cpu / (command_cpu - graph_cpu) - 1, 3),
            "builder_seconds": round(builder_seconds, 1),
            "lock": lock_us,
            "graph_rebuilt_seconds": round(graph_wall, 1),
            "graph_rebuilt_cpu_seconds": round(graph_cpu, 1),
            "graph_rebuilt_edges": rebuilt.edges,
            "edges": edges,
            "edges_now": synced.edges,
            "one_file_refresh_ms_new_function": round(statistics.median(refreshes), 1),
            "one_file_refresh_ms_body_edit": round(statistics.median(body), 1),
            "one_file_refresh_ms_rename": round(statistics.median(renamed), 1),
            "one_file_refresh_cpu_ms": {
                "new_function": round(statistics.median(refreshes_cpu), 1),
                "body_edit": round(statistics.median(body_cpu), 1),
                "rename": round(statistics.median(renamed_cpu), 1),
            },
            "index_sqlite_bytes": sizes.get("index.sqlite3"),
            "graph_sqlite_bytes": sizes.get("code-intel.sqlite3"),
            "cache_without_graph_bytes": others,
        }
        print(json.dumps(found), flush=True)
        if mcp:
            found["mcp"] = asyncio.run(_serve_and_ask(root, rounds))
        return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="what", required=True)
    q = sub.add_parser("quality")
    q.add_argument("repositories", nargs="+", help="NAME=TREE:INDEX")
    q.add_argument("--misses", type=int, default=0)
    s = sub.add_parser("speed")
    s.add_argument("--django-sdist", type=Path, required=True)
    s.add_argument("--rounds", type=int, default=3)
    s.add_argument("--no-mcp", action="store_true", help="the cost figures only")
    arguments = parser.parse_args()
    if arguments.what == "quality":
        rows = []
        for spec in arguments.repositories:
            name, _, rest = spec.partition("=")
            tree, _, index = rest.partition(":")
            if arguments.misses:
                misses(name, Path(tree), Path(index), arguments.misses)
                continue
            rows.append(quality(name, Path(tree), Path(index)))
            print(json.dumps(rows[-1]), flush=True)
        if rows:
            recall = statistics.mean(r["recall"] for r in rows)
            precision = statistics.mean(r["precision"] for r in rows)
            print(
                json.dumps({"mean_recall": round(recall, 3), "mean_precision": round(precision, 3)})
            )
        return 0
    found = speed(arguments.django_sdist, arguments.rounds, mcp=not arguments.no_mcp)
    print(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
