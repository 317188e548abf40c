"""Token counters: the estimate, the offline-only o200k loader, caching and selection."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from cuedeck import open_workspace
from cuedeck.errors import InvalidInput
from cuedeck.token_counts import CachedCounter, EstimateCounter, O200kCounter, find_o200k_file
from tests.conftest import MakeWorkspace


def test_estimate_grows_with_text_and_charges_more_for_non_ascii() -> None:
    estimate = EstimateCounter()
    assert estimate.count("") == 0
    assert estimate.count("hello") >= 1
    words = "The quick brown fox jumps over the lazy dog. " * 50
    assert estimate.count(words * 2) > 1.9 * estimate.count(words)
    # o200k_base spends 501 tokens on it: the estimate is in that range, not wildly off.
    assert 350 <= estimate.count(words) <= 650
    assert estimate.count("日本語のテキスト" * 20) > estimate.count("ascii text" * 20)


class Counting:
    name = "counting"
    exact = False

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text)


def test_cached_counter_memoises_long_texts_by_hash() -> None:
    inner = Counting()
    cached = CachedCounter(inner, size=2)
    long = "x" * 1000
    assert cached.count(long) == cached.count(long) == 1000
    assert inner.calls == 1
    cached.count("a" * 300)
    cached.count("b" * 300)  # evicts the first
    cached.count(long)
    assert inner.calls == 4


def test_a_wrong_encoding_file_is_ignored_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "o200k_base.tiktoken"
    fake.write_bytes(b"not the encoding\n")
    monkeypatch.setenv("CUEDECK_O200K_FILE", str(fake))
    assert find_o200k_file() == fake
    assert O200kCounter.load() is None
    assert fake.read_bytes() == b"not the encoding\n"


@pytest.mark.skipif(
    importlib.util.find_spec("tiktoken") is None or find_o200k_file() is None,
    reason="needs tiktoken and a local o200k_base file (docs/tokens.md)",
)
def test_o200k_counts_exactly_when_installed() -> None:
    counter = O200kCounter.load()
    assert counter is not None
    assert counter.count("hello world") == 2


def test_auto_falls_back_to_the_estimate(make_workspace: MakeWorkspace) -> None:
    workspace = open_workspace(make_workspace())
    expected = "o200k" if O200kCounter.load() else "estimate"
    assert workspace.token_counter.name == expected


def test_an_unavailable_counter_is_a_config_error(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CUEDECK_O200K_FILE", str(tmp_path / "missing"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    if find_o200k_file() is not None:
        pytest.skip("an o200k file is installed here")
    root = make_workspace(config='[tokens]\ncounter = "o200k"\n')
    with pytest.raises(InvalidInput) as caught:
        _ = open_workspace(root).token_counter
    assert caught.value.data["field"] == "tokens.counter"
    assert "available: estimate" in caught.value.message


@pytest.mark.slow
def test_bpe_openai_gives_exact_o200k_counts_by_default(make_workspace: Any) -> None:
    pytest.importorskip("bpe_openai")
    workspace = open_workspace(make_workspace({"docs/a.md": "# A\n"}))
    assert (workspace.token_counter.name, workspace.token_counter.exact) == ("o200k", True)
    assert workspace.count_tokens("hello world, this is a test") == 7


def test_a_tampered_encoding_falls_back_to_the_estimate_with_a_warning(
    make_workspace: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("bpe_openai")
    from cuedeck.doctor import diagnose

    tampered = tmp_path / "o200k_base.tiktoken"
    tampered.write_bytes(b"aGVsbG8= 0\n")  # one token: not the published file
    monkeypatch.setenv("CUEDECK_O200K_FILE", str(tampered))
    workspace = open_workspace(make_workspace({"docs/a.md": "# A\n"}))
    assert workspace.token_counter.name == "estimate"
    warned = [p for p in diagnose(workspace) if p.code == 1008 and "o200k" in p.message]
    assert warned and warned[0].severity == "warning"
    assert "does not have the published o200k_base sha256" in warned[0].message


@pytest.mark.slow
def test_a_scene_stays_within_its_budget_by_exact_count(fastapi_docs: Path, tmp_path: Path) -> None:
    pytest.importorskip("bpe_openai")
    import shutil

    from cuedeck.scene import build_scene

    root = tmp_path / "ws"
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    shutil.copytree(fastapi_docs, root / ".cuedeck" / "docs")
    (root / ".cuedeck" / "cards" / "aaa111.md").write_text(
        "---\ntitle: Testing\nstatus: active\n---\n# Testing\n\n@doc/tutorial/testing\n"
        "@doc/tutorial/security/index and @doc/advanced/testing-dependencies\n"
    )
    workspace = open_workspace(root)
    assert workspace.token_counter.exact
    for limit in (2000, 8000):
        scene = build_scene(workspace, token_limit=limit)
        assert workspace.count_tokens(scene.text) <= limit
        assert scene.manifest["tokens"] == workspace.count_tokens(scene.text)
