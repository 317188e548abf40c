"""What the built sdists and wheels hold (scripts/check_artefacts.py, also run by .ci/run)."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from scripts.check_artefacts import MAX_BYTES, check
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
    _wheel(tmp_path, "cuedeck_tasks", {"cuedeck_tasks/big.bin": b"\0" * (MAX_BYTES + 1)})
    artefacts, failing = check(tmp_path)
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
    meta = next(a for a in artefacts if a.distribution == "cuedeck" and a.kind == "sdist")
    assert set(meta.members) <= {"pyproject.toml", "README.md", "PKG-INFO", ".gitignore"}
