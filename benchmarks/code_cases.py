"""Code localization cases mined from public repositories' own histories, cached as JSON.

    from benchmarks.code_cases import REPOSITORIES, load_cases, base_tree

Each case is a change on a repository's main line: its title is the query, the answer is
the non-test source files it modified and the definitions it modified in them. Every case
of a repository is answered against one base tree, the main line just before the oldest
case, so no answer holds the change it is asked about. This is benchmarks/localization.py's
click set made general: any of the languages below, changes merged as merge commits,
squashed ones (``Title (#123)``) or, for repositories whose maintainers commit directly,
plain commits.

Which repositories tune the ranking and which only test it is decided here, once, before
any tuning (benchmarks/README.md, "Code ranking"): never tune on a ``test`` repository.

Nothing fetched is committed. The repositories are git directories (the workplace's
``fetch`` snapshots, ``/work/.mirror/<owner>+<name>/repo``, or any clone); cases are cached
under ``WORK/cases/<owner>+<name>.json`` and base trees written under
``WORK/trees/<owner>+<name>/`` (``WORK`` is the ``--work`` folder of the scripts, outside
this repository), rebuilt when missing. A base tree is a git repository checked out at
the base, its objects borrowed from the mirror and no other ref kept: git knows the
history up to the base and nothing after it, as a clone checked out there would.

The JSON (``format`` ``cuedeck-code-cases/1``)::

    {"format": "cuedeck-code-cases/1", "repository": "pallets/click",
     "split": "tune" | "test", "language": "python", "head": SHA, "base": SHA,
     "cases": [{"commit": SHA, "parent": SHA, "query": "Title of the change",
                "files": ["src/click/core.py"],              # answer files, sorted
                "functions": [{"path": ..., "name": "Context.invoke", "kind": "method",
                               "line": 1, "end_line": 9}],   # in the base tree
                "lines": {"src/click/core.py": ["normalised modified line", ...]}}],
     "definitions": [{"path": ..., "name": "Text.wrap", "kind": "method", "line": 1,
                      "end_line": 9}]}                       # exact-name sample

``files``: the non-test source files (:func:`source_file`) the change modified that the
base tree holds. ``functions``: the innermost definitions (not the module) holding a
line the change removed (in the parent) or added (in the commit), kept when the same
file of the base tree defines that qualified name, with its lines there. ``lines``: per
answer file, the text of the lines the change removed (the line before, for a pure
addition), whitespace collapsed, lines of fewer than four word characters and lines the
base file does not hold left out (what benchmarks/code_scenes.py counts). A case has at
least one file and at most ``MAX_FILES``. ``definitions``: up to ``SAMPLE`` definitions
of the base tree's source files whose qualified name is defined once in the whole
repository (and whose last name part is too; ignoring case and leading underscores, as
search does), chosen by sha256 of ``path#name``, for the exact-name measure.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import attrs

FORMAT = "cuedeck-code-cases/1"
#: Cases per repository, newest first; changes scanned at most, and how far back in time
#: from the newest commit (an older base answers a recent title with code it never had).
TARGET = 80
SCAN = 800
YEARS = 3
MAX_FILES = 4
SAMPLE = 20
#: Where the workplace's ``fetch`` tool leaves its snapshots.
MIRRORS = Path("/work/.mirror")


@attrs.frozen
class Repository:
    """A repository of the benchmark and how its history is read."""

    name: str  # owner/name
    language: str
    split: str  # "tune" or "test": decided before tuning, never changed after
    #: Whether plain first-parent commits (no merge, no ``(#N)``) count as changes: for
    #: repositories whose maintainers commit to the main line directly.
    direct: bool = False
    #: Path prefixes that are no source of the project (sites, build helpers).
    exclude: tuple[str, ...] = ()

    @property
    def slug(self) -> str:
        """``owner+name``, as folders are named."""
        return self.name.replace("/", "+")


#: The benchmark's repositories and their split (benchmarks/README.md says why).
REPOSITORIES = (
    Repository("pallets/click", "python", "tune"),
    Repository("axios/axios", "javascript", "tune", exclude=("bin/", "sandbox/", "templates/")),
    Repository("spf13/cobra", "go", "tune"),
    Repository("BurntSushi/ripgrep", "rust", "tune", direct=True),
    Repository("google/gson", "java", "tune"),
    # Joined the tuning side 2026-11-29, before any figure of theirs was looked at.
    # pydantic/v1 is a copy of the 1.10 branch (update_v1.sh), release/ its release scripts,
    # pydantic-core/wasm-preview a browser test runner; scrapy's extras/ are bench helpers.
    Repository(
        "pydantic/pydantic",
        "python",
        "tune",
        exclude=("pydantic/v1/", "release/", "pydantic-core/wasm-preview/"),
    ),
    Repository("scrapy/scrapy", "python", "tune", exclude=("extras/",)),
    Repository("fastapi/typer", "python", "test"),
    Repository("sqlalchemy/alembic", "python", "test", direct=True),
    Repository("sindresorhus/got", "typescript", "test", direct=True),
    Repository("encode/starlette", "python", "test"),
    Repository("python-attrs/attrs", "python", "test", direct=True),
    Repository("expressjs/express", "javascript", "test"),
    Repository(
        "colinhacks/zod",
        "typescript",
        "test",
        exclude=tuple(
            f"packages/{p}/"
            for p in ("bench", "docs", "docs-v3", "integration", "resolution", "treeshake", "tsc")
        ),
    ),
    Repository("gin-gonic/gin", "go", "test"),
    Repository("urfave/cli", "go", "test"),
    Repository("clap-rs/clap", "rust", "test"),
    Repository("tokio-rs/axum", "rust", "test"),
    Repository("apache/commons-lang", "java", "test"),
)


def repository(name: str) -> Repository:
    """The repository called ``name`` (``owner/name`` or ``owner+name`` or ``name``)."""
    for repo in REPOSITORIES:
        if name in (repo.name, repo.slug, repo.name.split("/")[1]):
            return repo
    raise KeyError(name)


# --- what a source file is ------------------------------------------------------------------

SOURCE_SUFFIXES = (
    ".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs", ".java",
)  # fmt: skip
#: Folders that hold no source of the project itself (besides any starting with "test").
NOT_SOURCE = frozenset(
    (
        "__tests__", "__test__", "spec", "specs", "fixtures", "e2e", "examples", "example",
        "_examples", "benches", "bench", "benchmark", "benchmarks", "benchsuite", "docs", "doc",
        "docs_src", "fuzz", "scripts", "script", "tools", ".github", "vendor", "third_party",
        "node_modules", "dist", "build",
    )
)  # fmt: skip
_TEST_NAME = re.compile(
    r"^(test_.*\.py|.*_test\.py|conftest\.py|.*_test\.go|.*\.(test|spec)\.[cm]?[jt]sx?"
    r"|.*Tests?\.java|.*TestCase\.java"
    r"|setup\.py|noxfile\.py|conf\.py|.*\.config\.[cm]?[jt]s|[Gg]runtfile\.js|gulpfile\.js)$"
)


def source_file(path: str, repo: Repository) -> bool:
    """A non-test source file of the project: a source language's suffix, in no test,
    example, docs, benchmark or vendored folder, not named as a test nor a build script
    (``setup.py``, ``rollup.config.js``...)."""
    if not path.endswith(SOURCE_SUFFIXES) or path.startswith(repo.exclude):
        return False
    *folders, name = path.split("/")
    if any(f.startswith("test") or f in NOT_SOURCE for f in folders):
        return False
    return not _TEST_NAME.match(name)


# --- git -------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    """``git args`` in the git directory ``repo``, as text."""
    found = subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, check=True)
    return found.stdout.decode("utf-8", errors="replace")


def git_dir(repo: Repository, mirrors: Path = MIRRORS) -> Path:
    """The git directory of ``repo`` under ``mirrors``."""
    return mirrors / repo.slug / "repo"


_PR = re.compile(r"^Merge pull request #\d+ from \S+")
_GERRIT = re.compile(r'^Merge "(.+)" into \S+$')
#: Symbols before a title's first word (gitmoji: "🐛 Fix ...").
_LEAD = re.compile(r"^[^\w`'\"(\[]+")
_NUMBER = re.compile(r"\s*\(#\d+\)\.?\s*$")
_SKIP = re.compile(
    r"^(merge (branch|remote|tag)|release\b|releasing\b|bump\b|prepare\b|start version"
    r"|version \d|v?\d+\.\d+|[\w.-]+-\d+\.\d+\.\d+$|update (release notes|changelog)"
    r"|chore(\([^)]*\))?: (release|bump|update dep)|(chore|build)\((release|deps)"
    r"|\[maven-release|revert \")",
    re.IGNORECASE,
)


def _title(subject: str, body: str) -> str:
    """A merged change's title: a merge commit's body line (or a review merge's quoted
    title), else the subject less ``(#N)``; symbols before its first word dropped."""
    if _PR.match(subject):
        title = body.strip().splitlines()[0].strip() if body.strip() else ""
    elif gerrit := _GERRIT.match(subject):
        title = gerrit.group(1)
    else:
        title = _NUMBER.sub("", subject).strip()
    return _LEAD.sub("", title)


def changes(git_path: Path, repo: Repository, head: str) -> list[tuple[str, str, str]]:
    """``(commit, first parent, title)`` of the main line's changes, newest first."""
    newest = int(git(git_path, "log", "-1", "--format=%ct", head).strip())
    since = newest - YEARS * 365 * 86400
    log = git(
        git_path, "log", "--first-parent", f"-{SCAN}", f"--since={since}",
        "--format=%H%x1f%P%x1f%s%x1f%b%x1e", head,
    )  # fmt: skip
    found = []
    for record in log.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        commit, parents, subject, body = record.split("\x1f")
        parent_list = parents.split()
        if not parent_list:
            continue
        merged = len(parent_list) > 1 or _NUMBER.search(subject)
        if not merged and not repo.direct:
            continue
        title = _title(subject, body)
        if not title or not re.search(r"[A-Za-z]{3}", title):
            continue
        if _SKIP.match(title) or _SKIP.match(_LEAD.sub("", subject)) or "dependabot" in subject:
            continue
        found.append((commit, parent_list[0], title))
    return found


# --- definitions -----------------------------------------------------------------------------


def parse(path: str, data: bytes) -> list[dict[str, Any]]:
    """The definitions of a source file (cuedeck-code's parser), modules left out."""
    from cuedeck.index.parsers import ParseContext, SkipFile
    from cuedeck_code.parser import parse_code

    try:
        document = parse_code(path, data, ParseContext(count_tokens=lambda _: 0))
    except SkipFile:
        return []
    return [
        {"name": s.name, "kind": s.kind, "line": s.line, "end_line": s.end_line}
        for s in document.symbols
        if s.kind != "module"
    ]


def _innermost(symbols: list[dict[str, Any]], line: int) -> dict[str, Any] | None:
    holding = [s for s in symbols if s["line"] <= line <= s["end_line"]]
    return max(holding, key=lambda s: (s["line"], -s["end_line"])) if holding else None


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_WORD = re.compile(r"\w")


def norm(line: str) -> str:
    """A line with its whitespace collapsed (how modified lines are compared)."""
    return " ".join(line.split())


def _show(git_path: Path, commit: str, path: str) -> bytes:
    done = subprocess.run(
        ["git", f"--git-dir={git_path}", "show", f"{commit}:{path}"], capture_output=True
    )
    return done.stdout if done.returncode == 0 else b""


def _modified(
    git_path: Path, parent: str, commit: str, path: str, base_data: bytes
) -> tuple[set[str], list[str]]:
    """Names of the definitions a change touched in ``path`` and its modified lines."""
    diff = git(git_path, "diff", "-U0", parent, commit, "--", path)
    old_data, new_data = _show(git_path, parent, path), _show(git_path, commit, path)
    old_symbols, new_symbols = parse(path, old_data), parse(path, new_data)
    old_lines = old_data.decode("utf-8", errors="replace").split("\n")
    names: set[str] = set()
    texts: set[str] = set()
    for line in diff.split("\n"):
        hunk = _HUNK.match(line)
        if not hunk:
            continue
        start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
        new_start, new_count = int(hunk.group(3)), int(hunk.group(4) or 1)
        for at in range(start, start + count):
            if (found := _innermost(old_symbols, at)) is not None:
                names.add(found["name"])
            if at <= len(old_lines):
                texts.add(norm(old_lines[at - 1]))
        for at in range(new_start, new_start + new_count):
            if (found := _innermost(new_symbols, at)) is not None:
                names.add(found["name"])
        if count == 0 and 1 <= start <= len(old_lines):
            texts.add(norm(old_lines[start - 1]))
    base = {norm(x) for x in base_data.decode("utf-8", errors="replace").split("\n")}
    kept = sorted(x for x in texts if len(_WORD.findall(x)) >= 4 and x in base)
    return names, kept


# --- mining ----------------------------------------------------------------------------------


def mine(git_path: Path, repo: Repository, head: str = "HEAD") -> dict[str, Any]:
    """The cases of ``repo`` (see the module docstring), newest ``TARGET`` changes."""
    head = git(git_path, "rev-parse", head).strip()
    found = changes(git_path, repo, head)
    touched: list[tuple[str, str, str, list[str]]] = []
    for commit, parent, title in found:
        try:
            changed = git(git_path, "diff", "--name-only", parent, commit).splitlines()
        except subprocess.CalledProcessError:  # a snapshot without the parent's objects
            continue
        sources = sorted(p for p in changed if source_file(p, repo))
        if sources and len(sources) <= MAX_FILES:
            touched.append((commit, parent, title, sources))
    # The base is the parent of the oldest change taken; a change keeps the answer files
    # the base holds, so take changes until TARGET of them keep one.
    taken = min(len(touched), TARGET)
    while True:
        base = touched[taken - 1][1] if taken else head
        at_base = set(git(git_path, "ls-tree", "-r", "--name-only", base).splitlines())
        kept = [t for t in touched[:taken] if any(p in at_base for p in t[3])]
        if len(kept) >= TARGET or taken >= len(touched):
            break
        taken = min(len(touched), taken + TARGET - len(kept))
    base_symbols: dict[str, list[dict[str, Any]]] = {}
    base_data: dict[str, bytes] = {}
    cases = []
    for commit, parent, title, sources in reversed(kept):
        files = [p for p in sources if p in at_base]
        functions: list[dict[str, Any]] = []
        lines: dict[str, list[str]] = {}
        for path in files:
            if path not in base_data:
                base_data[path] = _show(git_path, base, path)
                base_symbols[path] = parse(path, base_data[path])
            names, texts = _modified(git_path, parent, commit, path, base_data[path])
            defined = {s["name"]: s for s in base_symbols[path]}
            functions.extend({"path": path, **defined[n]} for n in sorted(names) if n in defined)
            if texts:
                lines[path] = texts
        cases.append(
            {
                "commit": commit,
                "parent": parent,
                "query": title,
                "files": files,
                "functions": functions,
                "lines": lines,
            }
        )
    return {
        "format": FORMAT,
        "repository": repo.name,
        "split": repo.split,
        "language": repo.language,
        "head": head,
        "base": base,
        "cases": cases,
        "definitions": sample_definitions(git_path, repo, base),
    }


def sample_definitions(git_path: Path, repo: Repository, base: str) -> list[dict[str, Any]]:
    """Up to ``SAMPLE`` definitions whose qualified and last names are unique in ``repo``
    at ``base`` (every indexed source file counts, tests included, for uniqueness)."""
    paths = [
        p
        for p in git(git_path, "ls-tree", "-r", "--name-only", base).splitlines()
        if p.endswith(SOURCE_SUFFIXES) and not p.startswith(("node_modules/", "vendor/"))
    ]
    qualified: dict[str, int] = {}
    last: dict[str, int] = {}
    candidates: list[dict[str, Any]] = []
    for path in paths:
        for symbol in parse(path, _show(git_path, base, path)):
            name = symbol["name"].lower().lstrip("_")  # search ignores case and a lead _
            qualified[name] = qualified.get(name, 0) + 1
            tail = name.rsplit(".", 1)[-1]
            last[tail] = last.get(tail, 0) + 1
            if source_file(path, repo) and symbol["kind"] not in ("impl", "namespace"):
                candidates.append({"path": path, **symbol})
    key = [c["name"].lower().lstrip("_") for c in candidates]
    unique = [
        c
        for c, name in zip(candidates, key, strict=True)
        if qualified[name] == 1
        and last[name.rsplit(".", 1)[-1]] == 1
        and len(name.rsplit(".", 1)[-1]) >= 4
    ]
    unique.sort(key=lambda c: hashlib.sha256(f"{c['path']}#{c['name']}".encode()).hexdigest())
    return unique[:SAMPLE]


def load_cases(repo: Repository, work: Path, mirrors: Path = MIRRORS) -> dict[str, Any]:
    """The cases of ``repo``, from ``work/cases`` or mined now (and saved there)."""
    cached = work / "cases" / f"{repo.slug}.json"
    if cached.exists():
        found: dict[str, Any] = json.loads(cached.read_text(encoding="utf-8"))
        if found.get("format") == FORMAT:
            return found
    found = mine(git_dir(repo, mirrors), repo)
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    return found


def base_tree(repo: Repository, cases: dict[str, Any], work: Path, mirrors: Path = MIRRORS) -> Path:
    """The files of the base commit under ``work/trees/<slug>`` (made a CueDeck
    workspace, and a git repository at the base with its history), written when
    missing."""
    into = work / "trees" / repo.slug
    marker = into / ".cuedeck" / "base"
    if not (marker.exists() and marker.read_text().strip() == cases["base"]):
        if into.exists():  # another base's files: none of them may stay
            shutil.rmtree(into)
        into.mkdir(parents=True)
        archive = into.with_suffix(".tar")
        with archive.open("wb") as out:
            subprocess.run(
                ["git", f"--git-dir={git_dir(repo, mirrors)}", "archive", cases["base"]],
                stdout=out,
                check=True,
            )
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
        archive.unlink()
        for sub in ("docs", "cards"):
            (into / ".cuedeck" / sub).mkdir(parents=True, exist_ok=True)
        marker.write_text(cases["base"] + "\n", encoding="utf-8")
    head = subprocess.run(
        ["git", "-C", str(into), "rev-parse", "--verify", "--quiet", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if not (into / ".git").is_dir() or head != cases["base"]:
        with_history(into, cases["base"], git_dir(repo, mirrors))
    return into


def with_history(tree: Path, base: str, source: Path) -> None:
    """Make ``tree`` (the files of ``base``) a git repository checked out at ``base``, its
    objects borrowed from ``source``: HEAD's history is what git knew at the base, as in
    a clone checked out there (no other branch or tag, so nothing later is reachable)."""
    subprocess.run(["git", "init", "-q", "-b", "base", str(tree)], check=True)
    alternates = tree / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(str(source.resolve() / "objects") + "\n", encoding="utf-8")
    for args in (("update-ref", "refs/heads/base", base), ("read-tree", base)):
        subprocess.run(["git", "-C", str(tree), *args], check=True)


def main() -> None:
    """Mine (or load) every repository's cases and print how many each has."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--repos", default="", help="comma-separated names (default: all)")
    args = parser.parse_args()
    chosen = [repository(n) for n in args.repos.split(",") if n] or list(REPOSITORIES)
    for repo in chosen:
        found = load_cases(repo, args.work, args.mirrors)
        functions = sum(1 for c in found["cases"] if c["functions"])
        print(
            f"{repo.name:24} {repo.split:4} {repo.language:10} cases {len(found['cases']):3}"
            f"  with functions {functions:3}  definitions {len(found['definitions']):2}"
            f"  base {found['base'][:10]}",
            flush=True,
        )


if __name__ == "__main__":
    main()
