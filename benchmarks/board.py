"""Board benchmark: first contentful paint of `cue board` in headless Chromium.

    uv run python benchmarks/board.py [--loads 7] [--screenshots docs/]

Measures the demo workspace and a workspace of 1,000 generated cards: for each, `cue
board --no-open` runs as a subprocess and Debian's Chromium (driven by Playwright) loads
the page ``--loads`` times in fresh tabs; the table shows the median first contentful
paint and the time until the cards are on the page. The peer in the same run is a static
page of the same size served by Python's http.server: the floor any local page pays.
With ``--screenshots DIR`` it also saves board-cards.png and board-scene.png (1280x800).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CUE = str(Path(sys.executable).with_name("cue"))
TARGETS_MS = {"demo": 300.0, "1,000 cards": 1000.0}
FCP = "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1"


def many_cards(into: Path, count: int = 1000) -> Path:
    """A workspace of ``count`` cards with tags, owners and dependencies."""
    root = into / "many"
    cards = root / ".cuedeck" / "cards"
    cards.mkdir(parents=True)
    (root / ".cuedeck" / "docs").mkdir()
    rng = random.Random(5)
    words = ["auth", "billing", "search", "deploy", "docs", "api", "ui", "cache"]
    ids = [f"b{n:05d}" for n in range(count)]
    for n, card in enumerate(ids):
        deps = rng.sample(ids[max(0, n - 50) : n], k=min(n, rng.randint(0, 2)))
        title = f"{rng.choice(words).title()} {rng.choice(words)} task {n}"
        status = rng.choice(["todo", "todo", "active", "done", "done", "archived"])
        cards.joinpath(f"{card}.md").write_text(
            f"---\nid: {card}\ntitle: {title}\nstatus: {status}\n"
            f"priority: {rng.choice(['low', 'medium', 'high', 'critical'])}\n"
            f"assignee: dev{n % 7}\ntags: [{rng.choice(words)}]\n"
            f"depends_on: [{', '.join(deps)}]\n---\n# {title}\n\nSome work.\n"
        )
    return root


class Board:
    """`cue board --no-open` on ``root`` while the block runs."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __enter__(self) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
        self.process = subprocess.Popen(
            [CUE, "-C", str(self.root), "board", "--no-open"],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, text=True,
        )  # fmt: skip
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/open/\S+", line)
        if not found:
            raise SystemExit(f"cue board did not start: {line}")
        return found.group(0)

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(15)


def measure(browser: Any, url: str, loads: int) -> dict[str, float]:
    """Median first contentful paint and time to the first card, over fresh tabs."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(url)  # trades the session token for the cookie
    page.wait_for_selector(".card")
    base = url.split("/open/")[0] + "/"
    paints, cards = [], []
    for _ in range(loads):
        tab = context.new_page()
        tab.goto(base)
        tab.wait_for_selector(".card")
        tab.wait_for_function(f"({FCP}) >= 0")
        paints.append(float(tab.evaluate(FCP)))
        cards.append(float(tab.evaluate("performance.now()")))
        tab.close()
    context.close()
    return {"fcp_ms": statistics.median(paints), "cards_ms": statistics.median(cards)}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log."""


def static_peer(browser: Any, loads: int) -> float:
    """Median first contentful paint of a static page of the same assets."""
    folder = Path(tempfile.mkdtemp())
    static = REPO / "packages" / "cuedeck-cli" / "src" / "cuedeck_cli" / "board" / "static"
    shutil.copytree(static, folder / "static")
    shutil.copy(static / "index.html", folder / "index.html")
    handler = partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = browser.new_page()
    paints = []
    for _ in range(loads):
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        page.wait_for_function(f"({FCP}) >= 0")
        paints.append(float(page.evaluate(FCP)))
    server.shutdown()
    shutil.rmtree(folder)
    return statistics.median(paints)


def screenshots(browser: Any, url: str, folder: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    page.wait_for_selector(".card")
    page.screenshot(path=str(folder / "board-cards.png"))
    page.click('.tab[data-view="scene"]')
    page.wait_for_selector("#manifest tbody tr")
    page.screenshot(path=str(folder / "board-scene.png"))
    page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--screenshots", type=Path)
    parser.add_argument("--json", type=Path, default=HERE / "results" / "board.json")
    options = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("install Debian's chromium (apt-get install chromium)")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        demo = Path(tmp) / "demo"
        shutil.copytree(REPO / "examples" / "demo", demo, ignore=shutil.ignore_patterns(".cache"))
        for label, root in (("demo", demo), ("1,000 cards", many_cards(Path(tmp)))):
            with Board(root) as url:
                results[label] = measure(browser, url, options.loads)
                if options.screenshots and label == "demo":
                    screenshots(browser, url, options.screenshots)
        results["peer: static page"] = {"fcp_ms": static_peer(browser, options.loads)}
        browser.close()
    print(f"{'workspace':20} {'FCP':>9} {'cards':>9} {'target':>9}")
    for label, row in results.items():
        target = TARGETS_MS.get(label)
        cards = f"{row['cards_ms']:7.0f}ms" if "cards_ms" in row else ""
        goal = f"< {target:g} ms" if target else ""
        print(f"{label:20} {row['fcp_ms']:7.0f}ms {cards:>9} {goal:>9}")
    options.json.parent.mkdir(parents=True, exist_ok=True)
    options.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
