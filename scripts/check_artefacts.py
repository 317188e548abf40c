"""List what each built sdist and wheel holds, and fail on what none should ship.

    uv build --all-packages --out-dir DIR && uv run python scripts/check_artefacts.py DIR

Refused in every artefact: caches and tool state (``.hypothesis/``, ``__pycache__``,
``.pytest_cache``, ``.mypy_cache``, ``.ruff_cache``, ``.tox``, ``.venv``, a workspace's
``.cuedeck/.cache``, compiled ``*.pyc``), the repository's tests, benchmarks, corpora and
example workspaces, and model files (``*.onnx``, ``*.safetensors``...) in a distribution
that is not one of :data:`MODEL_CARRIERS`. An artefact of any other distribution over
:data:`MAX_BYTES` fails too: nothing but a model makes a CueDeck package that large.
Exit status 1 names every offending file.
"""

from __future__ import annotations

import argparse
import re
import sys
import tarfile
import zipfile
from pathlib import Path

import attrs

#: Distributions that may carry model files (the ONNX MiniLM and its tokenizer).
MODEL_CARRIERS = frozenset({"cuedeck-search"})
#: The most an artefact of any other distribution may weigh.
MAX_BYTES = 2_000_000
_CACHE = re.compile(
    r"(^|/)(\.hypothesis|__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|\.tox|\.venv"
    r"|\.cuedeck/\.cache)(/|$)|\.py[co]$"
)
#: Repository folders that are not part of any distribution, at an sdist's top level.
_REPOSITORY = re.compile(r"^(tests|benchmarks|corpora|examples/demo|\.ci)(/|$)")
_MODEL = re.compile(r"\.(onnx|safetensors|pt|pth|ckpt|gguf|tflite)$")


@attrs.frozen
class Artefact:
    """One built file: its distribution (normalised name), members and size."""

    path: Path
    distribution: str
    members: tuple[str, ...]
    size: int

    @property
    def kind(self) -> str:
        return "wheel" if self.path.suffix == ".whl" else "sdist"


def read(path: Path) -> Artefact:
    """The members of an sdist (``.tar.gz``, its top folder dropped) or a wheel."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as archive:
            members = tuple(info.filename for info in archive.infolist() if not info.is_dir())
        name = path.name.split("-")[0]
    else:
        with tarfile.open(path) as archive:
            members = tuple(
                member.name.split("/", 1)[1] if "/" in member.name else member.name
                for member in archive.getmembers()
                if member.isfile()
            )
        name = path.name.removesuffix(".tar.gz").rsplit("-", 1)[0]
    return Artefact(path, name.replace("_", "-").lower(), members, path.stat().st_size)


def problems(artefact: Artefact) -> list[str]:
    """What ``artefact`` must not hold, one line each."""
    found = []
    for member in artefact.members:
        if _CACHE.search(member):
            found.append(f"{member}: a cache or tool state")
        elif artefact.kind == "sdist" and _REPOSITORY.match(member):
            found.append(f"{member}: the repository's, not the distribution's")
        elif _MODEL.search(member) and artefact.distribution not in MODEL_CARRIERS:
            found.append(f"{member}: a model file in {artefact.distribution}")
    if artefact.distribution not in MODEL_CARRIERS and artefact.size > MAX_BYTES:
        found.append(f"{artefact.size:,} bytes, over {MAX_BYTES:,}")
    return found


def check(folder: Path) -> tuple[list[Artefact], dict[Path, list[str]]]:
    """Every artefact of ``folder`` and the problems of those that have some."""
    artefacts = [read(path) for path in sorted(folder.iterdir()) if _is_artefact(path)]
    return artefacts, {a.path: found for a in artefacts if (found := problems(a))}


def _is_artefact(path: Path) -> bool:
    return path.suffix == ".whl" or path.name.endswith(".tar.gz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where `uv build --all-packages` wrote")
    folder = parser.parse_args().folder
    artefacts, failing = check(folder)
    if not artefacts:
        raise SystemExit(f"no sdist or wheel in {folder}")
    for artefact in artefacts:
        files = len(artefact.members)
        print(f"{artefact.path.name:52} {artefact.size:>12,} bytes {files:>5} files")
    for path, found in failing.items():
        print(f"\n{path.name}:", file=sys.stderr)
        for line in found:
            print(f"  {line}", file=sys.stderr)
    if failing:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
