"""The embedding cache in the user cache directory: shared by workspaces and processes,
kept by ``cue clean``, emptied by ``cue clean --all``, resumed after a kill."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck_search import user_cache
from tests.conftest import MakeWorkspace
from tests.search.conftest import FILES

pytestmark = pytest.mark.slow  # real model, subprocesses

CUE = str(Path(sys.executable).with_name("cue"))


def cached_rows() -> int:
    with sqlite3.connect(user_cache.database_path()) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])


def integrity() -> str:
    with sqlite3.connect(user_cache.database_path()) as connection:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])


def embed_all(root: Path) -> tuple[int, int, int]:
    """Embed a fresh workspace object of ``root``: (sections, loaded, embedded)."""
    engine = open_workspace(root).service("search")
    engine.embed_all()
    return (
        len({s.hash for s in engine.sections}),
        engine.stats.chunks_loaded,
        (engine.stats.chunks_embedded),
    )


def notes(count: int, words: str = "of a long list of notes") -> dict[str, str]:
    return {
        f"docs/note{i:03}.md": f"# Note {i}\n\nItem number {i} {words}.\n" for i in range(count)
    }


def test_the_user_cache_is_where_the_environment_says(tmp_path: Path) -> None:
    assert user_cache.database_path().parent == Path(os.environ["CUEDECK_CACHE_DIR"])
    assert not str(user_cache.database_path()).startswith(str(Path.home() / ".cache"))


def test_a_second_workspace_with_the_same_docs_embeds_nothing(
    make_workspace: MakeWorkspace,
) -> None:
    first = make_workspace(FILES)
    sections, loaded, embedded = embed_all(first)
    assert (loaded, embedded) == (0, sections)
    clone = make_workspace(FILES)  # a second clone, elsewhere
    assert embed_all(clone) == (sections, sections, 0)
    # Another branch: one doc differs; only its changed section is embedded.
    branch = make_workspace(
        {**FILES, ".cuedeck/docs/deploy.md": FILES[".cuedeck/docs/deploy.md"] + "\nNew line.\n"}
    )
    sections, loaded, embedded = embed_all(branch)
    assert (loaded, embedded) == (sections - 1, 1)


def test_cue_clean_keeps_the_user_cache_and_all_empties_it(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(FILES)

    def cue(*args: str) -> str:
        done = subprocess.run(
            [CUE, "-C", str(root), *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    cue("index", "--semantic")
    rows = cached_rows()
    assert rows > 0
    assert "removed .cuedeck/.cache/" in cue("clean")
    assert not (root / ".cuedeck/.cache").exists()
    assert cached_rows() == rows
    sections, loaded, embedded = embed_all(root)
    assert (loaded, embedded) == (sections, 0)  # nothing embedded again after cue clean

    out = cue("clean", "--all")
    assert "removed the user cache" in out
    assert not user_cache.database_path().exists()
    assert embed_all(root) == (sections, 0, sections)


EMBED_ALL = """
import sys
from cuedeck import open_workspace
engine = open_workspace(sys.argv[1]).service("search")
engine.embed_all()
print(engine.stats.chunks_loaded, engine.stats.chunks_embedded)
"""


def test_two_processes_embedding_one_workspace_share_the_cache(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(notes(600))
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", EMBED_ALL, str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=600) for process in processes]
    for process, (_, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
        assert "Traceback" not in err
    assert integrity() == "ok"
    assert cached_rows() == 600
    for out, _ in outputs:
        loaded, embedded = map(int, out.split())
        assert loaded + embedded == 600
    assert embed_all(root) == (600, 600, 0)  # every vector is there, readable


KILLED_RUN = """
import sys
from cuedeck import open_workspace
from cuedeck_search.vectors import CHUNK
engine = open_workspace(sys.argv[1]).service("search")
missing = engine.missing_sections()
engine.embed_sections(missing[:CHUNK])
print("saved", flush=True)
engine.embed_all()
"""


def test_a_killed_embedding_resumes_where_it_stopped(make_workspace: MakeWorkspace) -> None:
    """SIGKILL: no handler runs, so only committed batches can be there, and they are."""
    root = make_workspace(notes(1200, "of a long list of notes, each with a few more words"))
    with subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        assert process.stdout is not None
        assert process.stdout.readline() == "saved\n"  # the first chunk is committed
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    saved = cached_rows()
    assert 0 < saved < 1200, "the run finished before it could be killed"
    assert integrity() == "ok"
    assert embed_all(root) == (1200, saved, 1200 - saved)
