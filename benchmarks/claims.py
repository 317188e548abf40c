"""Agents racing for cards over MCP: claims per second, claim latency, takeovers, and the
audit trail checked (every card done once, never two holders at once, expired claims
taken over within one lease).

    uv run python benchmarks/claims.py [--agents 16] [--cards 200] [--lease 2]
        [--work 0.5:5] [--die 0.05] [--seconds 60] [--transports stdio,http]

Each agent is a process with the MCP SDK's client: over stdio it starts its own ``cue
mcp`` (separate server processes racing on one claims file), over HTTP all talk to one
``uvicorn cuedeck_mcp.asgi:app --workers 2``; ``direct`` runs the same loop (no work, no
deaths) in as many Python processes calling the tools in-process, without MCP. An agent
loops: ``next_task`` (timed), work
for a random time while renewing its claim every third of the lease, then ``release_task``
with ``done``; with probability ``--die`` it exits mid-work instead, holding its claim, and
the driver starts a new agent in its place. The run ends when every card is done or at
``--seconds``. tests/tasks/test_claim_race.py runs a short race with the same code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CUE = str(Path(sys.executable).with_name("cue"))

AGENT = r"""
import json, os, random, sys, time
import anyio

transport, target, name, lease, work_low, work_high, die, seed, log_path = sys.argv[1:10]
lease, work_low, work_high, die = float(lease), float(work_low), float(work_high), float(die)
rng = random.Random(int(seed))
log = open(log_path, "a", buffering=1)


def note(**record):
    log.write(json.dumps({"agent": name, **record}) + "\n")


async def main():
    from mcp.client import Client
    if transport == "stdio":
        from mcp.client.stdio import StdioServerParameters
        cue = os.path.join(os.path.dirname(sys.executable), "cue")
        env = {**os.environ, "CUEDECK_MCP_RESIDENT": "0"}  # a server process of its own
        params = StdioServerParameters(command=cue, args=["-C", target, "mcp"], env=env)
        opened = Client(params, mode="legacy")
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        http = httpx2.AsyncClient(timeout=120)
        opened = Client(streamable_http_client(target, http_client=http), mode="legacy")
    async with opened as client:
        async def tool(tool_name, **arguments):
            result = await client.call_tool(tool_name, arguments)
            return result.structured_content
        await tool("list_tasks", status=["todo"])  # warm: the server loads its tools
        note(event="ready", at=time.time())
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)  # every agent starts at once
        while True:
            start = time.perf_counter()
            try:
                taken = await tool("next_task", agent=name, lease_seconds=lease)
            except Exception as exc:
                note(event="error", what=str(exc)[:200])
                raise
            ms = (time.perf_counter() - start) * 1000
            note(event="next", ms=ms, card=taken["id"], at=time.time())
            if taken["id"] is None:
                if taken["held"] == 0:  # no ready card left, free or held (dead or alive)
                    note(event="finished")
                    return
                await anyio.sleep(lease / 8)  # an agent with nothing to do looks again soon
                continue
            card = taken["id"]
            busy_until = time.monotonic() + rng.uniform(work_low, work_high)
            dies = rng.random() < die
            while time.monotonic() < busy_until:
                await anyio.sleep(min(lease / 3, max(0.0, busy_until - time.monotonic())))
                if time.monotonic() < busy_until:
                    await tool("renew_task", id=card, agent=name)
            if dies:
                note(event="died", card=card, at=time.time())
                log.flush()
                os._exit(3)  # gone, holding the claim
            start = time.perf_counter()
            try:
                await tool("release_task", id=card, agent=name, done=True)
                ms = (time.perf_counter() - start) * 1000
                note(event="done", card=card, at=time.time(), ms=ms)
            except Exception as exc:  # its claim was taken over meanwhile
                note(event="lost", card=card, what=str(exc)[:200])

anyio.run(main)
"""


DIRECT = r"""
import json, sys, time
from cuedeck.workspace import open_workspace

root, name, out = sys.argv[1:4]
workspace = open_workspace(root)
tools = workspace.plugins.tools()
tools["list_tasks"].call(workspace, {"status": ["todo"]})  # warm
print("ready", flush=True)
sys.stdin.readline()
timings = []
while True:
    start = time.perf_counter()
    taken = tools["next_task"].call(workspace, {"agent": name, "lease_seconds": 30})
    timings.append((time.perf_counter() - start) * 1000)
    if taken["id"] is None:
        break
    tools["release_task"].call(workspace, {"id": taken["id"], "agent": name, "done": True})
with open(out, "a") as log:
    log.write(json.dumps({"agent": name, "ms": timings, "end": time.time()}) + "\n")
"""


def direct(root: Path, processes: int) -> dict[str, Any]:
    """The same loop without MCP: ``processes`` Python processes calling next_task and
    release_task(done) through the tools in-process, no work, until every card is done
    (what the claims file and the card writes allow, with no server in between)."""
    folder = Path(tempfile.mkdtemp(prefix="claims-direct-"))
    script, log = folder / "direct.py", folder / "log.jsonl"
    script.write_text(DIRECT)
    started = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), f"p{n}", str(log)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        for n in range(processes)
    ]
    try:
        for process in started:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == b"ready"
        begin = time.time()
        for process in started:
            _go(process)
        for process in started:
            process.wait(600)
    finally:
        for process in started:
            _stop(process, terminate=True)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    shutil.rmtree(folder, ignore_errors=True)
    timings = sorted(ms for r in records for ms in r["ms"][:-1])  # the last found none
    end = max(r["end"] for r in records)
    return {
        "claims_per_s": round(len(timings) / (end - begin), 1),
        "next_task_p50_ms": round(timings[len(timings) // 2], 1),
        "next_task_p95_ms": round(timings[int(0.95 * len(timings))], 1),
        "seconds": round(end - begin, 1),
    }


def make_workspace(
    root: Path, cards: int, priorities: tuple[str, ...] = ("low", "medium", "high")
) -> None:
    """A git repository with ``cards`` todo cards, ``priorities`` in turn (cue init'ed)."""
    root.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    subprocess.run([CUE, "-C", str(root), "init", "--no-merge-driver"], check=True,
                   capture_output=True, env=env)  # fmt: skip
    with (root / ".cuedeck" / "config.toml").open("a", encoding="utf-8") as config:
        config.write('\n[mcp]\ntools = ["core", "claims"]  # the claim tools are opt-in\n')
    folder = root / ".cuedeck" / "cards"
    for number in range(cards):
        card = f"r{number:05d}"
        priority = priorities[number % len(priorities)]
        (folder / f"{card}.md").write_text(
            f"---\nid: {card}\ntitle: Race card {number}\nstatus: todo\npriority: {priority}\n"
            f'created: "2026-11-28T10:{number // 60 % 60:02d}:{number % 60:02d}Z"\n---\n'
            f"# Race card {number}\n",
            encoding="utf-8",
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve_http(root: Path, workers: int, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``uvicorn`` serving ``root`` in a process group of its own (its workers with it),
    its errors in ``folder``; once it accepts connections, the process and the URL."""
    port = _free_port()
    env = {**os.environ, "CUEDECK_MCP_WORKSPACES": f"race={root}", "CUEDECK_MCP_PORT": str(port)}
    argv = [sys.executable, "-m", "uvicorn", "cuedeck_mcp.asgi:app", "--workers", str(workers),
            "--port", str(port), "--log-level", "warning"]  # fmt: skip
    errors = folder / "server.err"
    with errors.open("wb") as err:  # a file: workers outliving the server hold no pipe open
        process = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
        )
    deadline = time.monotonic() + 300  # a loaded machine imports slowly
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}/mcp/race"
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                _stop_group(process)
                raise RuntimeError(errors.read_text(errors="replace")[-2000:]) from None
            time.sleep(0.05)  # polling a port: no event to wait on


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop the server ``process`` and every process of its group (uvicorn's workers)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(30)
    with contextlib.suppress(ProcessLookupError):  # what is left of the group, itself too
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _stop(process: subprocess.Popen[bytes], *, terminate: bool = False) -> None:
    """Wait for ``process`` to end (``terminate`` it first), killing it after 30 s, and
    close its pipes: no child of the race outlives it."""
    if terminate and process.poll() is None:
        process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def race(
    root: Path,
    *,
    transport: str,
    agents: int,
    lease: float,
    work: tuple[float, float],
    die: float,
    seconds: float,
    seed: int = 1,
) -> dict[str, Any]:
    """Run the agents on the workspace at ``root`` until its cards are done (or
    ``seconds`` pass); the agents' log records and the run's times."""
    folder = Path(tempfile.mkdtemp(prefix="claims-race-"))
    script = folder / "agent.py"
    script.write_text(AGENT)
    log = folder / "log.jsonl"
    server = None
    target = str(root)
    if transport == "http":
        server, target = _serve_http(root, workers=2, folder=folder)
    env = {k: v for k, v in os.environ.items() if k != "CUEDECK_AGENT"}
    started: list[subprocess.Popen[bytes]] = []
    count = 0

    def start(go: bool) -> subprocess.Popen[bytes]:
        nonlocal count
        count += 1
        numbers = (lease, work[0], work[1], die, seed * 1000 + count)
        argv = [sys.executable, str(script), transport, target, f"agent{count:03d}",
                *map(str, numbers), str(log)]  # fmt: skip
        process = subprocess.Popen(
            argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        started.append(process)
        if go:  # a late agent starts racing as soon as it is ready
            _go(process)
        return process

    begin = time.time()
    try:
        first = [start(go=False) for _ in range(agents)]
        for process in first:  # each says "ready" once its server answered
            assert process.stdout is not None
            if process.stdout.readline().strip() != b"ready":
                err = process.stderr.read().decode() if process.stderr else ""
                raise RuntimeError(f"an agent did not start: {err[-2000:]}")
        begin = time.time()
        for process in first:
            _go(process)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            running = [p for p in started if p.poll() is None]
            finished = [p for p in started if p.returncode == 0]
            if finished and not running:
                break
            for process in started:
                if process.returncode == 3 and not getattr(process, "replaced", False):
                    process.replaced = True  # type: ignore[attr-defined]
                    start(go=True)  # an agent died: another one takes its place
                elif process.returncode not in (None, 0, 3):
                    err = process.stderr.read().decode() if process.stderr else ""
                    raise RuntimeError(f"an agent failed ({process.returncode}): {err[-2000:]}")
            time.sleep(0.05)  # watching child processes: polled
    finally:
        for process in started:
            if process.poll() is None:
                process.terminate()
        for process in started:
            _stop(process)
        if server is not None:
            _stop_group(server)
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    shutil.rmtree(folder, ignore_errors=True)
    return {"records": records, "begin": begin, "end": time.time(), "agents_started": count}


def _go(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(b"go\n")
        process.stdin.flush()
    except BrokenPipeError:  # it died before it started: the driver sees its exit code
        pass


def audit(root: Path, lease: float) -> dict[str, Any]:
    """The audit trail of ``root``'s claims checked: each card's holders never overlap,
    each card is done exactly once (and done on disk), each expired claim was taken over
    within ``lease`` of its end. Returns the findings and figures."""
    from cuedeck_tasks.claims import ClaimStore
    from cuedeck_tasks.store import CardStore

    trail = ClaimStore(root).events()
    cards = CardStore(root).all()
    by_card: dict[str, list[Any]] = {}
    for event in trail:
        by_card.setdefault(event.card, []).append(event)
    overlaps: list[tuple[str, str, str, float]] = []
    takeovers: list[dict[str, Any]] = []
    done = {card: 0 for card in cards}
    for card, events in by_card.items():
        holder, until = None, 0.0
        for event in events:
            if event.event == "claim":
                if holder is not None and holder != event.agent:
                    overlaps.append((card, holder, event.agent, event.at))  # two at once
                if event.previous is not None:
                    takeovers.append(
                        {"card": card, "agent": event.agent, "expired": until, "at": event.at}
                    )
                holder, until = event.agent, event.until or 0.0
            elif event.event == "renew" and event.agent == holder:
                until = event.until or until
            elif event.event == "expire":
                if event.agent == holder and event.at <= until + 1e-6:
                    holder = None  # its lease ran out at event.at == until
            elif event.event in ("release", "done"):
                if event.event == "done":
                    done[card] = done.get(card, 0) + 1
                holder = None
    not_done_on_disk = sorted(card for card, c in cards.items() if c.status != "done")
    return {
        "cards": len(cards),
        "done_once": sum(1 for n in done.values() if n == 1),
        "done_twice": sorted(card for card, n in done.items() if n > 1),
        "never_done": sorted(card for card, n in done.items() if n == 0),
        "not_done_on_disk": not_done_on_disk,
        "overlaps": overlaps,
        "takeovers": takeovers,
        "claims": sum(1 for e in trail if e.event == "claim"),
        "renewals": sum(1 for e in trail if e.event == "renew"),
    }


def takeover_calls(run: dict[str, Any], checked: dict[str, Any]) -> list[float]:
    """For each takeover, how long after the claim expired the next_task call that took it
    over started (its agent's record: end time less its duration)."""
    calls = {
        (r["agent"], r["card"]): r["at"] - r["ms"] / 1000
        for r in run["records"]
        if r["event"] == "next" and r["card"]
    }
    return [
        calls[(t["agent"], t["card"])] - t["expired"]
        for t in checked["takeovers"]
        if (t["agent"], t["card"]) in calls
    ]


def figures(run: dict[str, Any], checked: dict[str, Any]) -> dict[str, Any]:
    """Claims per second, next_task latency (p50, p95) and what happened."""
    calls = [r for r in run["records"] if r["event"] == "next"]
    latencies = sorted(r["ms"] for r in calls)
    first: dict[str, int] = {}
    for number, record in enumerate(calls):
        first.setdefault(record["agent"], number)
    finishing = sorted(r["ms"] for r in run["records"] if r["event"] == "done")
    # Each agent's first call also loads the tools in its server: warm calls leave it out.
    warm = sorted(r["ms"] for n, r in enumerate(calls) if first[r["agent"]] != n)
    claimed = [r for r in run["records"] if r["event"] == "next" and r["card"]]
    last = max((r["at"] for r in run["records"] if r.get("at")), default=run["end"])
    span = max(last - run["begin"], 1e-9)  # from the start signal to the last card done

    delays = [t["at"] - t["expired"] for t in checked["takeovers"]]
    asked = takeover_calls(run, checked)

    def quantile(q: float, values: list[float] = latencies) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0

    return {
        "claims_per_s": round(len(claimed) / span, 2),
        "next_task_calls": len(latencies),
        "next_task_p50_ms": round(quantile(0.5), 1),
        "next_task_p95_ms": round(quantile(0.95), 1),
        "next_task_mean_ms": round(statistics.fmean(latencies), 1) if latencies else 0.0,
        "next_task_warm_p50_ms": round(quantile(0.5, warm), 1),
        "next_task_warm_p95_ms": round(quantile(0.95, warm), 1),
        "release_done_p50_ms": round(quantile(0.5, finishing), 1),
        "release_done_p95_ms": round(quantile(0.95, finishing), 1),
        "seconds": round(span, 1),
        "agents_started": run["agents_started"],
        "deaths": sum(1 for r in run["records"] if r["event"] == "died"),
        "lost_after_takeover": sum(1 for r in run["records"] if r["event"] == "lost"),
        **{k: v for k, v in checked.items() if k not in ("overlaps", "takeovers")},
        "overlaps": len(checked["overlaps"]),
        "takeovers": len(checked["takeovers"]),
        "takeover_max_s": round(max(delays, default=0.0), 2),
        "takeover_call_started_max_s": round(max(asked, default=0.0), 2),
    }


def _counts(checked: dict[str, Any]) -> dict[str, Any]:
    return {
        "done_once": checked["done_once"],
        "done_twice": len(checked["done_twice"]),
        "overlaps": len(checked["overlaps"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--cards", type=int, default=200)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--work", default="0.5:5", help="seconds of work per card, LOW:HIGH")
    parser.add_argument("--die", type=float, default=0.05)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--transports", default="stdio,http,direct")
    args = parser.parse_args()
    low, high = (float(x) for x in args.work.split(":"))
    results = {}
    for transport in args.transports.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "race"
            make_workspace(root, args.cards)
            if transport == "direct":
                results[transport] = {**direct(root, args.agents), **_counts(audit(root, 30))}
                print(transport, json.dumps(results[transport], indent=2), flush=True)
                continue
            run = race(root, transport=transport, agents=args.agents, lease=args.lease,
                       work=(low, high), die=args.die, seconds=args.seconds)  # fmt: skip
            results[transport] = figures(run, audit(root, args.lease))
            print(transport, json.dumps(results[transport], indent=2), flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "claims.json").write_text(json.dumps({"args": vars(args), "results": results}, indent=2))


if __name__ == "__main__":
    main()
