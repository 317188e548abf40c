"""Swappable embedders: the register_embedders hook, the onnx export, never mixing models."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from cuedeck import open_workspace
from cuedeck.errors import InvalidInput
from cuedeck.plugins.host import get_embedders, make_plugin_host
from cuedeck_search import user_cache
from cuedeck_search.onnx_model import int8_dot_products, minilm_id, model_file, tokenizer_file
from tests.conftest import MakeWorkspace
from tests.search import hashing_plugin
from tests.search.conftest import FILES

pytestmark = pytest.mark.slow  # loads the real model


def rows_by_model() -> dict[str, int]:
    with sqlite3.connect(user_cache.database_path()) as connection:
        rows = connection.execute("SELECT model, COUNT(*) FROM embeddings GROUP BY model")
        return {model: count for model, count in rows}


def write_config(root: Path, text: str) -> None:
    (root / ".cuedeck/config.toml").write_text(text, encoding="utf-8")


def test_hook_register_embedders(make_workspace: MakeWorkspace) -> None:
    """A plugin's embedder is used end to end, and its vectors never meet MiniLM's."""
    pm = make_plugin_host()
    pm.register(hashing_plugin, name="hashing-plugin")
    assert {"minilm", "minilm-float", "onnx", "hashing"} <= set(get_embedders(pm))
    assert pm.source_of("register_embedders", "minilm") == "search"
    assert pm.source_of("register_embedders", "hashing") == "hashing-plugin"

    root = make_workspace(FILES, config='[search]\nembedder = "hashing"\nwait = true\n')
    workspace = open_workspace(root, plugins=pm)
    engine = workspace.service("search")
    calls = hashing_plugin.EMBEDDER.calls
    results = workspace.search("refund money to the customer card", mode="semantic")
    assert results[0].path == ".cuedeck/docs/billing.md"
    assert engine.embedder is hashing_plugin.EMBEDDER
    assert hashing_plugin.EMBEDDER.calls > calls  # sections and the query went through it
    sections = len({s.hash for s in engine.sections})
    assert engine.stats.chunks_embedded == sections
    assert engine.available_vectors()[0].shape[1] == hashing_plugin.DIMENSIONS
    assert rows_by_model() == {"test-hashing-v1": sections}

    # The default model on the same texts: nothing of the plugin's is taken for it.
    write_config(root, "[search]\nwait = true\n")
    minilm = open_workspace(root, plugins=pm)
    assert minilm.search("reimburse a buyer", mode="semantic")[0].path == (
        ".cuedeck/docs/billing.md"
    )
    stats = minilm.service("search").stats
    assert (stats.chunks_loaded, stats.chunks_embedded) == (0, sections)
    assert minilm.service("search").available_vectors()[0].shape[1] == 384
    assert rows_by_model() == {
        "test-hashing-v1": sections,
        minilm_id(model_file().model_id): sections,
    }

    # And back: the plugin's vectors come from the cache, MiniLM's are not offered to it.
    write_config(root, '[search]\nembedder = "hashing"\nwait = true\n')
    again = open_workspace(root, plugins=pm)
    again.search("refund", mode="semantic")
    stats = again.service("search").stats
    assert (stats.chunks_loaded, stats.chunks_embedded) == (sections, 0)
    engine = again.service("search")
    with pytest.raises(InvalidInput, match="offered"):
        engine.add_vectors(
            minilm_id(model_file().model_id), [("x", np.zeros(384, dtype=np.float32))]
        )


def test_an_embedder_nothing_registered_is_a_config_error(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES, config='[search]\nembedder = "nope"\n')
    with pytest.raises(InvalidInput) as caught:
        open_workspace(root).search("refunds", mode="semantic")
    assert caught.value.code == 1004
    assert "minilm" in caught.value.message
    assert caught.value.data["line"] == 2


def test_a_config_pointed_onnx_export_is_its_own_model(make_workspace: MakeWorkspace) -> None:
    """The installed MiniLM files, copied as a user's export: same vectors when pooled the
    same way, but under their own id, so nothing is shared with the built-in model."""
    root = make_workspace(FILES, config='[search]\nwait = true\nembedder = "minilm-float"\n')
    export = root / "models/mini"
    (export / "onnx").mkdir(parents=True)
    model = model_file("float")
    shutil.copyfile(model.path, export / "onnx/model.onnx")
    shutil.copyfile(model.weights, export / "onnx" / model.weights.name)  # read beside it
    shutil.copyfile(tokenizer_file(), export / "tokenizer.json")
    builtin = open_workspace(root)
    builtin.search("reimburse a buyer", mode="semantic")
    builtin_engine = builtin.service("search")
    sections = builtin_engine.stats.chunks_embedded
    builtin_vectors = builtin_engine.available_vectors()[0]

    write_config(
        root,
        '[search]\nwait = true\nembedder = "onnx"\nonnx_dir = "models/mini"\n'
        "onnx_max_tokens = 128\n",
    )
    custom = open_workspace(root)
    results = custom.search("reimburse a buyer", mode="semantic")
    assert results[0].path == ".cuedeck/docs/billing.md"
    engine = custom.service("search")
    assert engine.embedder.model_id.startswith("onnx:")
    assert engine.embedder.model_id.endswith(":mean:norm:128")
    assert (engine.stats.chunks_loaded, engine.stats.chunks_embedded) == (0, sections)
    assert np.allclose(engine.available_vectors()[0], builtin_vectors, atol=1e-4)

    write_config(
        root,
        '[search]\nwait = true\nembedder = "onnx"\nonnx_dir = "models/mini"\n'
        'onnx_pooling = "cls"\n',
    )
    cls = open_workspace(root)
    cls.search("reimburse a buyer", mode="semantic")
    cls_engine = cls.service("search")
    assert cls_engine.embedder.model_id.endswith(":cls:norm:256")
    assert cls_engine.stats.chunks_embedded == sections  # another option, other vectors
    vectors = cls_engine.available_vectors()[0]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vectors, builtin_vectors, atol=1e-2)
    assert len(rows_by_model()) == 3


def test_an_onnx_dir_without_an_export_says_what_it_needs(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES, config='[search]\nembedder = "onnx"\nonnx_dir = "models/x"\n')
    (root / "models/x").mkdir(parents=True)
    with pytest.raises(InvalidInput, match=r"model\.onnx .* tokenizer\.json") as caught:
        open_workspace(root).search("refunds", mode="semantic")
    assert caught.value.data["field"] == "search.onnx_dir"
    write_config(root, '[search]\nembedder = "onnx"\n')
    with pytest.raises(InvalidInput, match="needs \\[search\\] onnx_dir"):
        open_workspace(root).search("refunds", mode="semantic")


def test_minilm_computes_in_int8_where_the_cpu_can_and_never_mixes_vectors(
    make_workspace: MakeWorkspace,
) -> None:
    """The shipped int8-arithmetic MiniLM against the published float-arithmetic file:
    its own vectors, each text's independent of the batch it ran in, close to the float
    ones, the same answers."""
    root = make_workspace(FILES, config="[search]\nwait = true\n")
    default = open_workspace(root)
    found = default.search("reimburse a buyer", mode="semantic")
    engine = default.service("search")
    expected = "int8-dynamic" if int8_dot_products() else "onnx-int8/"
    assert expected in engine.embedder.model_id
    int8_vectors = engine.available_vectors()[0]
    sections = engine.stats.chunks_embedded

    write_config(root, '[search]\nwait = true\nembedder = "minilm-float"\n')
    floating = open_workspace(root)
    assert [r.path for r in floating.search("reimburse a buyer", mode="semantic")] == [
        r.path for r in found
    ]
    float_engine = floating.service("search")
    assert float_engine.embedder.model_id == minilm_id(model_file("float").model_id)
    if int8_dot_products():  # another model: everything embedded again, nothing reused
        assert float_engine.stats.chunks_embedded == sections
        cosines = (float_engine.available_vectors()[0] * int8_vectors).sum(axis=1)
        assert cosines.min() > 0.98

    int8 = default.service("search").embedder
    texts = ["short text", "word " * 300, "another one, a little longer than the first"]
    together = int8.embed(texts)
    for n, text in enumerate(texts):  # one scale per text: no dependence on neighbours
        assert np.array_equal(int8.embed([text])[0], together[n])
