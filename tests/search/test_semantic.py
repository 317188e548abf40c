"""Semantic and hybrid modes with the real ONNX model, and the embedding cache."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cuedeck import open_workspace
from cuedeck_search import user_cache
from cuedeck_search.onnx_model import MAX_WORD_PIECES, load_embedder, model_file
from cuedeck_search.user_cache import EmbeddingCache
from tests.conftest import MakeWorkspace, interruptible_children

pytestmark = pytest.mark.slow  # loads the real model (about a second)


def cached_rows(root: Path | None = None) -> int:
    """Vectors in the user cache (every workspace of the test shares it)."""
    with sqlite3.connect(user_cache.database_path()) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])


def test_a_paraphrase_finds_the_right_doc(small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace)
    # No word in common with the billing doc's "Refunds" section.
    results = workspace.search("reimburse a buyer", mode="semantic")
    assert results[0].path == ".cuedeck/docs/billing.md"
    assert results[0].anchors[0] == "Refunds"
    assert results[0].keyword_score is None
    assert 0 < results[0].score == results[0].semantic_score <= 1
    assert open_workspace(small_workspace).search("bread baking", mode="semantic")[0].path == (
        "notes/cooking.md"
    )


def test_hybrid_says_how_much_came_from_each_side(small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace)
    for fusion in ("rrf", "weighted"):
        results = workspace.service("search").search("docker image", fusion=fusion)
        assert results[0].path == ".cuedeck/docs/deploy.md"
        for result in results:
            assert result.keyword_score is not None
            assert result.semantic_score is not None
            assert result.score == pytest.approx(
                result.keyword_score + result.semantic_score, abs=2e-6
            )
    weighted = workspace.service("search").search("docker image", fusion="weighted")[0]
    assert weighted.semantic_score == pytest.approx(0.7)  # best on both sides: 0.7 + 0.3
    assert weighted.keyword_score == pytest.approx(0.3)


def test_fusion_follows_the_config(small_workspace: Path) -> None:
    (small_workspace / ".cuedeck/config.toml").write_text(
        '[search]\nwait = true\nfusion = "weighted"\nsemantic_weight = 0.5\nkeyword_weight = 0.5\n'
    )
    top = open_workspace(small_workspace).search("docker image")[0]
    assert (top.semantic_score, top.keyword_score) == (pytest.approx(0.5), pytest.approx(0.5))


def test_restart_reuses_the_cache_and_an_edit_embeds_one_section(small_workspace: Path) -> None:
    first = open_workspace(small_workspace)
    first.search("rolling restarts", mode="semantic")
    cold = first.service("search").stats
    sections = len(first.service("search").sections)
    assert cold.chunks_embedded == sections == cached_rows(small_workspace)

    again = open_workspace(small_workspace)  # a new workspace: nothing in memory
    again.search("rolling restarts", mode="semantic")
    warm = again.service("search").stats
    assert (warm.chunks_embedded, warm.chunks_loaded) == (0, sections)

    path = small_workspace / ".cuedeck/docs/deploy.md"
    path.write_text(path.read_text().replace("one at a time", "two at a time"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    edited = open_workspace(small_workspace)
    edited.search("rolling restarts", mode="semantic")
    assert edited.service("search").stats.chunks_embedded == 1  # only the changed section
    assert cached_rows(small_workspace) == sections + 1


def test_embeddings_are_unit_vectors_and_long_texts_are_cut_at_128(small_workspace: Path) -> None:
    engine = open_workspace(small_workspace).service("search")
    embedder = engine.embedder
    long_text = "word " * 1000
    assert len(embedder.encode([long_text])[0]) == MAX_WORD_PIECES
    vectors = embedder.embed(["short text", long_text, "another one"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Padding a batch must not change a text's vector.
    alone = embedder.embed(["short text"])[0]
    assert np.allclose(alone, vectors[0], atol=1e-4)


def test_the_cache_evicts_least_recently_used_rows_past_its_cap(small_workspace: Path) -> None:
    cache = EmbeddingCache("test-model")
    vector = np.ones(384, dtype=np.float32)
    cache.store([(f"hash{i}", vector) for i in range(10)])
    with sqlite3.connect(user_cache.database_path()) as connection:
        connection.execute(
            "UPDATE embeddings SET used = 100 WHERE chunk_hash IN ('hash0', 'hash1')"
        )
    cap_mb = 8 * EmbeddingCache.ROW_BYTES / 2**20  # room for eight rows
    assert cache.enforce_cap(cap_mb) == 2
    assert set(cache.load([f"hash{i}" for i in range(10)])) == {f"hash{i}" for i in range(2, 10)}
    assert cache.enforce_cap(1 * EmbeddingCache.ROW_BYTES / 2**20, keep={"hash9"}) == 7
    assert set(cache.load(["hash9", "hash8"])) == {"hash9"}
    assert cache.count() == 1


def test_background_embedding_keeps_the_cache_within_its_cap(make_workspace: MakeWorkspace) -> None:
    from tests.search.conftest import FILES

    other = EmbeddingCache("another-model")  # some other workspace's old vectors
    rows = 700  # more than 1 MB of rows
    other.store([(f"old{i}", np.ones(384, dtype=np.float32)) for i in range(rows)])
    with sqlite3.connect(user_cache.database_path()) as connection:
        connection.execute("UPDATE embeddings SET used = 1 WHERE model = 'another-model'")

    root = make_workspace(FILES, config="[search]\nembedding_cache_mb = 1\n")
    workspace = open_workspace(root)
    engine = workspace.service("search")
    workspace.search("refunds", mode="hybrid")  # starts the background embedder
    assert engine.background_embedder().wait(120)
    with sqlite3.connect(user_cache.database_path()) as connection:
        size = connection.execute(
            "SELECT SUM(LENGTH(vector)) + COUNT(*) * ? FROM embeddings",
            (user_cache.ROW_OVERHEAD,),
        ).fetchone()[0]
    assert size <= 1024 * 1024
    assert other.count(every_model=False) < rows  # the oldest rows went
    # ... but none of this workspace's: every section still has its vector.
    assert {r.semantic_coverage for r in workspace.search("refunds", mode="hybrid")} == {1.0}
    assert engine.missing_hashes() == []


INTERRUPTED_RUN = """
import sys
from cuedeck import open_workspace
open_workspace(sys.argv[1]).service("search").embed_all()
"""


def test_an_interrupted_embedding_keeps_what_it_saved(make_workspace: MakeWorkspace) -> None:
    sections = 600
    notes = {
        f"docs/note{i:03}.md": f"# Note {i}\n\nItem number {i} of a long list of notes.\n"
        for i in range(sections)
    }
    root = make_workspace(notes)
    with interruptible_children():
        process = subprocess.Popen(
            [sys.executable, "-c", INTERRUPTED_RUN, str(root)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if cached_rows(root) > 0:
                break
        except sqlite3.Error:
            pass  # the table does not exist yet
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode != 0, "the run finished before it could be interrupted"
    assert "KeyboardInterrupt" in err
    saved = cached_rows(root)
    assert 0 < saved < sections

    workspace = open_workspace(root)
    workspace.service("search").embed_all()  # carries on where the killed run stopped
    stats = workspace.service("search").stats
    assert (stats.chunks_loaded, stats.chunks_embedded) == (saved, sections - saved)


def test_a_verified_model_is_remembered_by_path_size_and_mtime(small_workspace: Path) -> None:
    model = model_file()
    load_embedder(user_cache.connect, model=model)
    with sqlite3.connect(user_cache.database_path()) as connection:
        rows = connection.execute("SELECT key, sha256 FROM search_verified_models").fetchall()
    expected = set()
    for path, sha in ((model.path, model.sha256), (model.weights, model.weights_sha256)):
        stat = path.stat()
        expected.add((f"{path}|{stat.st_size}|{stat.st_mtime_ns}", sha))
    assert set(rows) == expected  # the graph and its weights file


def test_a_search_never_waits_for_embedding_and_says_how_much_it_used(
    make_workspace: MakeWorkspace,
) -> None:
    from tests.search.conftest import FILES

    workspace = open_workspace(make_workspace(FILES))  # [search] wait is off by default
    engine = workspace.service("search")
    first = workspace.search("refunds", mode="hybrid")
    assert first  # answered at once, by keyword alone
    assert {r.semantic_coverage for r in first} == {0.0}
    assert engine.stats.chunks_embedded == 0  # nothing was embedded before answering
    assert engine.background_embedder().wait(120)  # the rest is embedded meanwhile
    later = workspace.search("reimburse a buyer", mode="semantic")
    assert {r.semantic_coverage for r in later} == {1.0}
    assert later[0].path == ".cuedeck/docs/billing.md"  # found by meaning now
    assert engine.stats.chunks_embedded > 0


def test_the_cli_embeds_a_small_workspace_first_and_says_what_answered(
    make_workspace: MakeWorkspace,
) -> None:
    from tests.search.conftest import FILES

    root = make_workspace(FILES)
    cue = str(Path(sys.executable).with_name("cue"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUE")}
    env["CUEDECK_CACHE_DIR"] = os.environ["CUEDECK_CACHE_DIR"]  # never the real user cache
    quick = subprocess.run(
        [cue, "-C", str(root), "search", "--json", "--no-embed", "reimburse a buyer"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    reply = json.loads(quick.stdout)
    assert (reply["semantic_coverage"], reply["answered_by"]) == (0.0, "keyword")
    assert "ranked by keyword alone" in quick.stderr
    # Six files embed in well under the foreground limit: the next search embeds first.
    embedded = subprocess.run(
        [cue, "-C", str(root), "search", "--json", "--mode", "semantic", "reimburse a buyer"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    reply = json.loads(embedded.stdout)
    assert (reply["semantic_coverage"], reply["answered_by"]) == (1.0, "semantic")
    assert reply["results"][0]["path"] == ".cuedeck/docs/billing.md"
    assert embedded.stderr == ""
