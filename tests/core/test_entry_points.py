"""What `cue` remembers between starts: the entry points while the installation is
unchanged, the tokenizer file's checked hash, and masking without a workspace."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from cuedeck.masking.session import MaskSession
from cuedeck.plugins import entry_points as module
from cuedeck.plugins.entry_points import entry_points
from cuedeck.settings import MaskingSettings
from cuedeck.system.remembered import file_key, recall, remember

SETTLED = time.time() - 60  # a modification time older than SETTLE_SECONDS


def _distribution(folder: Path, name: str, *entries: str, when: float = SETTLED) -> Path:
    """Install ``name`` 1.0 in ``folder`` declaring ``entries``, its folder dated ``when``."""
    dist = folder / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "".join(f"{entry} = {name}_module\n" for entry in entries)
    (dist / "entry_points.txt").write_text(f"[cuedeck-test]\n{lines}")
    os.utime(dist, (when, when))
    return dist


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    _distribution(folder, "first", "one")
    monkeypatch.syspath_prepend(str(folder))
    return folder


def _counting_scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    scans: list[str] = []
    scan = module._scan

    def counted(group: str) -> Any:
        scans.append(group)
        return scan(group)

    monkeypatch.setattr(module, "_scan", counted)
    return scans


def test_entry_points_are_read_once_while_the_installation_is_unchanged(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans = _counting_scans(monkeypatch)
    first = entry_points("cuedeck-test")
    again = entry_points("cuedeck-test")
    assert [(e.name, e.value, e.distribution, e.version) for e in first] == [
        ("one", "first_module", "first", "1.0")
    ]
    assert again == first
    assert scans == ["cuedeck-test"]

    _distribution(site, "second", "two")  # an install adds a distribution
    assert sorted(e.name for e in entry_points("cuedeck-test")) == ["one", "two"]
    assert len(scans) == 2

    shutil.rmtree(site / "second-1.0.dist-info")  # a removal
    assert [e.name for e in entry_points("cuedeck-test")] == ["one"]
    assert len(scans) == 3


def test_a_reinstall_of_the_same_version_is_read_again(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editable install synced after its entry points changed keeps its folder's name."""
    scans = _counting_scans(monkeypatch)
    assert [e.name for e in entry_points("cuedeck-test")] == ["one"]
    shutil.rmtree(site / "first-1.0.dist-info")
    _distribution(site, "first", "one", "three", when=SETTLED + 1)
    assert [e.name for e in entry_points("cuedeck-test")] == ["one", "three"]
    assert len(scans) == 2


def test_bytecode_written_beside_the_distributions_changes_nothing(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run of a fresh install writes site-packages' `__pycache__` (changing the
    folder's time): the next start still uses what the first one read."""
    scans = _counting_scans(monkeypatch)
    entry_points("cuedeck-test")
    (site / "__pycache__").mkdir()
    (site / "__pycache__" / "typing_extensions.cpython-311.pyc").write_bytes(b"")
    (site / "typing_extensions.py").write_text("")
    assert [e.name for e in entry_points("cuedeck-test")] == ["one"]
    assert scans == ["cuedeck-test"]


def test_a_distribution_that_just_changed_is_read_again_next_time(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans = _counting_scans(monkeypatch)
    os.utime(site / "first-1.0.dist-info")  # now: a change in the same tick would go unseen
    entry_points("cuedeck-test")
    entry_points("cuedeck-test")
    assert len(scans) == 2


def test_an_entry_point_loads_its_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = "class Outer:\n    class Inner:\n        x = 1\n"
    (tmp_path / "cuedeck_ep_module.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = module.PluginEntry("x", "cuedeck_ep_module:Outer.Inner", None, None)
    assert entry.load().x == 1


def test_remembered_answers_hold_for_their_key_only(tmp_path: Path) -> None:
    remember("test/answer.json", ["a", (1, 2)], {"value": 3})
    assert recall("test/answer.json", ["a", (1, 2)]) == {"value": 3}
    assert recall("test/answer.json", ["a", (1, 3)]) is None
    assert recall("test/missing.json", ["a"]) is None
    target = tmp_path / "file"
    target.write_bytes(b"one")
    before = file_key(str(target))
    target.write_bytes(b"other")
    assert before is not None and file_key(str(target)) != before
    assert file_key(str(tmp_path / "absent")) is None


def test_the_tokenizer_file_is_hashed_once_while_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("bpe_openai")
    from cuedeck import token_counts as tokens

    assert tokens.O200kCounter.load() is not None  # checked and remembered
    hashed: list[int] = []
    real = tokens.hashlib.sha256

    def counting(data: bytes = b"") -> Any:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(tokens.hashlib, "sha256", counting)
    counter = tokens.O200kCounter.load()
    assert counter is not None and counter.count("hello world, this is a test") == 7
    assert hashed == []


def test_masking_without_a_workspace_uses_the_masking_defaults() -> None:
    session = MaskSession()
    defaults = MaskingSettings()
    assert session.enabled == defaults.enabled
    assert not (defaults.disabled_rules or defaults.allow_values or defaults.allow_paths)
    assert not defaults.patterns
    key = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54"
    assert session.mask(f"key {key}") == "key [REDACTED:stripe-secret-key#1]"
