"""A team's repositories: registration, activation, composite search, and 20 concurrent
clients against four workers.

    uv run python benchmarks/repositories.py [--seconds 20] [--clients 20] [--workers 4]
        [--mirror DIR] [--no-embed]

The repositories are three public ones, as bare git directories the way the `fetch`
tool leaves them (``$MIRROR/<owner>+<name>/repo``, default /work/.mirror): pallets/click,
encode/httpx and Python-Markdown/markdown. Every measure starts from a fresh user cache
(vectors included), in a temporary folder; results are printed and written to
benchmarks/results/repositories.json.

1. Registration (``add_golden_repo``: clone, index, embed) against what a person does by
   hand for the same result: ``git clone`` + ``cue init`` + ``cue index --semantic``;
   both in fresh processes with a cold cache.
2. Activation (a member's working copy, its index seeded from the shared one): the
   median of five, against the first index of the repository (target: at most 10%) and
   against an activation whose index is built from nothing; disk it adds against a
   full copy of the shared repository (working tree, .git and index).
3. Search p50, hybrid and keyword, warm, over a composite of the three against one
   repository alone.
4. ``--clients`` clients for ``--seconds`` against ``uvicorn --workers N``: half read
   (read_context and read_doc on shared repositories, read tokens), half write (notes
   appended to a card in their own activation, write tokens; two clients per member, so
   writes race); p50/p95 per call, errors, and every acknowledged note found on disk.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

CUE = str(Path(sys.executable).with_name("cue"))
REPOSITORIES = {
    "click": "pallets+click",
    "httpx": "encode+httpx",
    "markdown": "Python-Markdown+markdown",
}
QUERIES = [
    "parse command line options",
    "HTTP client timeout",
    "markdown extension API",
    "how are tests run",
    "authentication with a token",
    "decorator that registers a command",
    "streaming a response body",
    "escape html in output",
    "configuration file",
    "release notes and changelog",
]
RATE_LIMITS_OFF = "".join(
    f"[rate_limits.{tool}]\nper_minute = 0\n"
    for tool in ("read_context", "read_doc", "update_task", "list_tasks")
)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 4)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2)


def _env(cache: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "CUEDECK_CACHE_DIR": str(cache), **extra}


def _run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


REGISTER = """
import json, sys
from pathlib import Path
from cuedeck_team.home import Team
from cuedeck_team.shared import register
reply = register(Team(Path(sys.argv[1])), sys.argv[2], sys.argv[3], by="bench",
                 embed=sys.argv[4] == "1")
print(json.dumps(reply))
"""


def registration(
    sources: dict[str, Path], tmp: Path, home: Path, cache: Path, embed: bool
) -> dict[str, Any]:
    """Registering each repository against a plain clone plus ``cue index``."""
    out = {}
    for name, source in sources.items():
        plain_cache = tmp / f"cache-plain-{name}"
        plain = tmp / "plain" / name
        started = time.perf_counter()
        _run(["git", "clone", "--quiet", str(source), str(plain)], _env(plain_cache))
        _run([CUE, "-C", str(plain), "init"], _env(plain_cache))
        index = [CUE, "-C", str(plain), "index", "--json"] + (["--semantic"] if embed else [])
        _run(index, _env(plain_cache))
        plain_seconds = time.perf_counter() - started
        started = time.perf_counter()
        reply = json.loads(
            _run(
                [
                    sys.executable,
                    "-c",
                    REGISTER,
                    str(home),
                    str(source),
                    name,
                    "1" if embed else "0",
                ],
                _env(cache),
            ).splitlines()[-1]
        )
        out[name] = {
            "files": reply["files"],
            "sections_embedded": reply["embedded"],
            "plain_clone_and_index_s": round(plain_seconds, 2),
            "register_s": round(time.perf_counter() - started, 2),
            "first_index_s": reply["seconds"],
        }
    return out


def activation(home: Path, names: list[str], first: dict[str, Any]) -> dict[str, Any]:
    """Activations of each shared repository: time and disk, seeded and not."""
    from cuedeck_team import activations
    from cuedeck_team.disk import footprint, remove_tree
    from cuedeck_team.home import Team, index_workspace, prepare_workspace

    team = Team(home)
    out = {}
    for name in names:
        golden = f"{name}-global"
        times, own = [], []
        for n in range(5):
            started = time.perf_counter()
            reply = activations.activate(team, "bench", golden, f"{name}-{n}", None)
            times.append(time.perf_counter() - started)
            record = team.registry.find_activation("bench", f"{name}-{n}")
            assert record is not None
            assert reply["parsed"] == 0
            own.append(footprint(team.user_path(record)).own)
            activations.deactivate(team, "bench", f"{name}-{n}")
        # The same working copy with its index built from nothing (no seed): what the
        # seed saves.
        source = team.shared_path(golden)
        bare = team.folder / "bench-unseeded" / name
        started = time.perf_counter()
        activations.checkout(source, bare, team.registry.find_shared(golden).branch)  # type: ignore[union-attr]
        prepare_workspace(bare, config_from=source)
        with team.open(bare) as workspace:
            index_workspace(workspace, embed=False)
        unseeded = time.perf_counter() - started
        remove_tree(bare)
        full = footprint(source).total
        median = statistics.median(times)
        out[name] = {
            "activation_s": round(median, 3),
            "unseeded_activation_s": round(unseeded, 3),
            "first_index_s": first[name]["first_index_s"],
            "activation_share_of_first_index": round(median / first[name]["first_index_s"], 3),
            "activation_disk_mb": round(statistics.median(own) / 2**20, 2),
            "full_copy_mb": round(full / 2**20, 2),
            "disk_share_of_full_copy": round(statistics.median(own) / full, 3),
        }
    return out


def composite_search(home: Path, names: list[str], rounds: int = 5) -> dict[str, Any]:
    """p50 of a warm search over a composite of every repository and over one alone."""
    from cuedeck_team import composites
    from cuedeck_team.home import Team

    team = Team(home)
    started = time.perf_counter()
    made = composites.create(team, "bench", "all-three", [f"{name}-global" for name in names])
    created = time.perf_counter() - started
    record = team.registry.find_activation("bench", "all-three")
    assert record is not None
    folder = team.user_path(record)
    out: dict[str, Any] = {}
    started = time.perf_counter()
    with team.open(folder) as workspace:
        # Docs' vectors come from the cache; code sections name their path (which names
        # the component here), so those are embedded again.
        embedded = workspace.service("search").embed_all()
    out["composite"] = {
        "files": made["files"],
        "created_s": round(created, 2),
        "sections_embedded_again": embedded,
        "embedding_s": round(time.perf_counter() - started, 2),
    }
    for mode in ("hybrid", "keyword"):
        for label, root in (
            ("composite of 3", folder),
            *((name, team.shared_path(f"{name}-global")) for name in names),
        ):
            with team.open(root) as workspace:
                workspace.search(QUERIES[0], mode=mode, limit=10)  # warm: model, postings
                times = []
                for _ in range(rounds):
                    for query in QUERIES:
                        started = time.perf_counter()
                        workspace.search(query, mode=mode, limit=10)
                        times.append((time.perf_counter() - started) * 1000)
            out[f"{mode}: {label}"] = {"p50_ms": _median(times), "p95_ms": _p95(times)}
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _token(home: Path, name: str, role: str) -> str:
    return _run(
        [CUE, "-C", str(home), "mcp", "token", "add", name, "--role", role], os.environ
    ).strip()


async def _clients(
    url: str,
    readers: list[str],
    writers: list[tuple[str, str, str]],
    seconds: float,
    names: list[str],
) -> dict[str, Any]:
    """Readers and writers calling for ``seconds`` (raw JSON-RPC POSTs: the transport is
    stateless, and the SDK client would spend more CPU than the server)."""
    import anyio
    import httpx2

    latencies: dict[str, list[float]] = {"read_context": [], "read_doc": [], "update_task": []}
    errors: list[str] = []
    acknowledged: dict[str, list[str]] = {}
    deadline = time.monotonic() + seconds
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }

    async def post(http: Any, token: str, tool: str, arguments: dict[str, Any]) -> bool:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        started = time.perf_counter()
        reply = await http.post(
            url, json=body, headers={**headers, "authorization": f"Bearer {token}"}
        )
        latencies[tool].append((time.perf_counter() - started) * 1000)
        ok = reply.status_code == 200 and '"isError":false' in reply.text
        if not ok:
            errors.append(f"{tool}: {reply.status_code} {reply.text[:200]}")
        return ok

    async def reader(http: Any, token: str, number: int) -> None:
        n = 0
        while time.monotonic() < deadline:
            repo = f"{names[(number + n) % len(names)]}-global"
            if n % 2:
                await post(
                    http,
                    token,
                    "read_doc",
                    {"repository_alias": repo, "path": "README.md", "limit": 40},
                )
            else:
                query = QUERIES[(number + n) % len(QUERIES)]
                await post(
                    http,
                    token,
                    "read_context",
                    {"repository_alias": repo, "query": query, "mode": "keyword"},
                )
            n += 1

    async def writer(http: Any, token: str, alias: str, card: str, label: str) -> None:
        n = 0
        while time.monotonic() < deadline:
            note = f"bench note {label}-{n:06d}."  # no note is a prefix of another
            if await post(
                http,
                token,
                "update_task",
                {"repository_alias": alias, "id": card, "updates": {"notes": note}},
            ):
                acknowledged.setdefault(label, []).append(note)
            n += 1

    limits = httpx2.Limits(max_connections=len(readers) + len(writers))
    async with (
        httpx2.AsyncClient(timeout=120, limits=limits) as http,
        anyio.create_task_group() as group,
    ):
        for number, token in enumerate(readers):
            group.start_soon(reader, http, token, number)
        for number, (token, alias, card) in enumerate(writers):
            group.start_soon(writer, http, token, alias, card, f"w{number:02d}")
    return {"latencies": latencies, "errors": errors, "acknowledged": acknowledged}


def concurrent_clients(
    home: Path, cache: Path, names: list[str], clients: int, workers: int, seconds: float
) -> dict[str, Any]:
    """``clients`` clients, half reading and half writing, against ``workers`` workers."""
    import anyio

    from cuedeck_tasks.tools import create_task
    from cuedeck_team import activations
    from cuedeck_team.home import Team

    config = home / ".cuedeck" / "config.toml"
    before = config.read_text(encoding="utf-8") if config.exists() else ""
    config.write_text(before + RATE_LIMITS_OFF, encoding="utf-8")
    team = Team(home)
    readers = [_token(home, f"reader-{n:02d}", "read") for n in range(clients // 2)]
    writers: list[tuple[str, str, str]] = []
    cards: dict[str, Path] = {}
    for n in range((clients - clients // 2 + 1) // 2):  # two clients per writing member
        member = f"writer-{n:02d}"
        token = _token(home, member, "write")
        activations.activate(team, member, f"{names[0]}-global", "work", None)
        record = team.registry.find_activation(member, "work")
        assert record is not None
        with team.open(team.user_path(record)) as workspace:
            card = create_task(workspace, f"Bench card of {member}")
        cards[member] = team.user_path(record) / card["path"]
        writers += [(token, "work", card["id"])] * 2
    writers = writers[: clients - len(readers)]
    port = _free_port()
    env = _env(cache, CUEDECK_MCP_TEAM=str(home), CUEDECK_MCP_PORT=str(port))
    argv = [
        sys.executable,
        "-m",
        "uvicorn",
        "cuedeck_mcp.asgi:app",
        "--workers",
        str(workers),
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
    ]
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while True:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        anyio.run(_clients, url, readers, writers, 5.0, names)  # warm every worker
        result = anyio.run(_clients, url, readers, writers, seconds, names)
    finally:
        process.terminate()
        process.wait(30)
    text = "\n".join(path.read_text(encoding="utf-8") for path in cards.values())
    notes = [note for batch in result["acknowledged"].values() for note in batch]
    lost = [note for note in notes if note not in text]
    summary: dict[str, Any] = {
        "clients": f"{len(readers)} readers, {len(writers)} writers",
        "workers": workers,
        "seconds": seconds,
        "errors": len(result["errors"]),
        "first_errors": result["errors"][:3],
        "writes_acknowledged": len(notes),
        "writes_lost": len(lost),
    }
    for tool, values in result["latencies"].items():
        if values:
            summary[tool] = {
                "calls": len(values),
                "p50_ms": _median(values),
                "p95_ms": _p95(values),
            }
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument(
        "--mirror", type=Path, default=Path(os.environ.get("MIRROR", "/work/.mirror"))
    )
    parser.add_argument("--no-embed", action="store_true", help="registration without vectors")
    options = parser.parse_args()
    sources = {name: options.mirror / folder / "repo" for name, folder in REPOSITORIES.items()}
    missing = [str(path) for path in sources.values() if not path.is_dir()]
    if missing:
        raise SystemExit(f"fetch the repositories first (the fetch tool): {missing}")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="cuedeck-repos-") as tmp_name:
        tmp = Path(tmp_name)
        home, cache = tmp / "home", tmp / "cache"
        (home / ".cuedeck").mkdir(parents=True)
        os.environ["CUEDECK_CACHE_DIR"] = str(cache)
        print("registration ...", flush=True)
        results["registration"] = registration(sources, tmp, home, cache, not options.no_embed)
        print(json.dumps(results["registration"], indent=1), flush=True)
        print("activation ...", flush=True)
        results["activation"] = activation(home, list(sources), results["registration"])
        print(json.dumps(results["activation"], indent=1), flush=True)
        print("composite search ...", flush=True)
        results["search"] = composite_search(home, list(sources))
        print(json.dumps(results["search"], indent=1), flush=True)
        print("concurrent clients ...", flush=True)
        results["clients"] = concurrent_clients(
            home, cache, list(sources), options.clients, options.workers, options.seconds
        )
        print(json.dumps(results["clients"], indent=1), flush=True)
    out = HERE / "results" / "repositories.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"wrote {out.relative_to(HERE.parent)}")
    return 0 if results["clients"]["errors"] == 0 and results["clients"]["writes_lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
