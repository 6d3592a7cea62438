"""Quantized and converted copies of the repository's float exports, made by the field's own tools.

Each entry of :data:`FORMATS` is (reference model, how B is made): onnxruntime's ``quantize_static``
(QDQ, 16-bit activations through com.microsoft Q/DQ, QOperator), ``quantize_dynamic`` (ConvInteger,
MatMulInteger, DynamicQuantizeLSTM), the session's own optimizer over a dynamic model (DynamicQuantizeMatMul,
MatMulIntegerToFloat), ``MatMulNBitsQuantizer`` (MatMulNBits and GatherBlockQuantized, or blocked
DequantizeLinear in its QDQ format), onnxruntime's float16 converter (with and without float32 inputs and
outputs), bfloat16 weights read through Casts, and mixes of these. The first use writes each model into
``.cache/onnxviz-tests/quantized-ort<version>-v<N>/`` (a private file renamed into place), so pytest
processes started together never read half a file, and an onnxruntime upgrade makes them anew.

    python tests/quantized_models.py [NAME ...]   # write the models (all by default) and print the folder
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
from onnx import helper, numpy_helper

REPO = Path(__file__).resolve().parents[1]
EXPORTS = REPO / "tests" / "data" / "exports"
CACHE = REPO / ".cache" / "onnxviz-tests" / f"quantized-ort{onnxruntime.__version__}-v1"
CALIBRATION = 8  # calibration samples per static quantization


def sample(reference: str) -> dict[str, np.ndarray]:
    """The committed sample input of a reference export (``resnet_float`` ...)."""
    with np.load(EXPORTS / "inputs" / f"{reference}.npz") as f:
        return {k: f[k] for k in f.files}


def _samples(reference: str, count: int) -> list[dict[str, np.ndarray]]:
    """Calibration inputs: the sample's floats drawn anew, its token ids shuffled, per seed."""
    base = sample(reference)
    out = []
    for seed in range(count):
        rng = np.random.default_rng(seed)
        feeds = {}
        for name, x in base.items():
            if x.dtype.kind == "f":
                feeds[name] = rng.standard_normal(x.shape).astype(x.dtype)
            elif name == "input_ids" or name == "tokens":
                feeds[name] = rng.permuted(x, axis=-1)
            else:
                feeds[name] = x
        out.append(feeds)
    return out


class _Reader:
    """onnxruntime's CalibrationDataReader protocol over a list of feeds."""

    def __init__(self, feeds: list[dict[str, np.ndarray]]) -> None:
        self.feeds = iter(feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.feeds, None)

    def rewind(self) -> None:  # not used by the calibrators of one pass
        pass


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="onnxviz-quant-") as folder:
        yield Path(folder)


def _static(reference: str, fmt: str, activation: str = "QUInt8", contrib: bool = False,
            exclude: Callable[[onnx.ModelProto], list[str]] | None = None) -> Callable[[Path, Path], None]:
    def make(src: Path, out: Path) -> None:
        from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

        extra = {"UseQDQContribOps": True} if contrib else {}
        nodes = exclude(onnx.load(src)) if exclude else []
        quantize_static(str(src), str(out), _Reader(_samples(reference, CALIBRATION)),
                        quant_format=getattr(QuantFormat, fmt), activation_type=getattr(QuantType, activation),
                        weight_type=QuantType.QInt8, nodes_to_exclude=nodes, extra_options=extra)
    return make


def _dynamic(optimized: bool = False) -> Callable[[Path, Path], None]:
    def make(src: Path, out: Path) -> None:
        from onnxruntime.quantization import quantize_dynamic

        if not optimized:
            quantize_dynamic(str(src), str(out))
            return
        with _scratch() as tmp:
            quantize_dynamic(str(src), str(tmp / "dynamic.onnx"))
            options = onnxruntime.SessionOptions()
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            options.optimized_model_filepath = str(out)
            onnxruntime.InferenceSession(str(tmp / "dynamic.onnx"), options, providers=["CPUExecutionProvider"])
    return make


def _int4(fmt: str = "QOperator", gather: bool = True) -> Callable[[Path, Path], None]:
    def make(src: Path, out: Path) -> None:
        from onnxruntime.quantization import QuantFormat
        from onnxruntime.quantization.matmul_nbits_quantizer import (
            DefaultWeightOnlyQuantConfig,
            MatMulNBitsQuantizer,
        )

        ops = ("MatMul", "Gather") if gather else ("MatMul",)
        config = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, op_types_to_quantize=ops,
                                              quant_format=getattr(QuantFormat, fmt))
        quantizer = MatMulNBitsQuantizer(onnx.load(src), algo_config=config)
        quantizer.process()
        onnx.save(quantizer.model.model, out)
    return make


def _float16(keep_io_types: bool) -> Callable[[Path, Path], None]:
    def make(src: Path, out: Path) -> None:
        from onnxruntime.transformers.float16 import convert_float_to_float16

        onnx.save(convert_float_to_float16(onnx.load(src), keep_io_types=keep_io_types), out)
    return make


def _bfloat16_weights(src: Path, out: Path) -> None:
    """Every float weight of two or more dimensions stored as bfloat16 and read through a Cast to float
    (as weight-compressed exports write them)."""
    import ml_dtypes

    model = onnx.load(src)
    graph = model.graph
    casts = []
    for t in graph.initializer:
        if t.data_type != onnx.TensorProto.FLOAT or len(t.dims) < 2:
            continue
        values = numpy_helper.to_array(t).astype(ml_dtypes.bfloat16)
        stored = f"{t.name}_bf16"
        bf16 = helper.make_tensor(stored, onnx.TensorProto.BFLOAT16, list(t.dims),
                                  values.view(np.uint16).tobytes(), raw=True)
        casts.append((t.name, bf16))
    for name, bf16 in casts:
        weight = next(t for t in graph.initializer if t.name == name)
        graph.initializer.remove(weight)
        graph.initializer.append(bf16)
        graph.node.insert(0, helper.make_node("Cast", [bf16.name], [name], name=f"{name}_cast",
                                              to=onnx.TensorProto.FLOAT))
    onnx.save(model, out)


def _then(first: Callable[[Path, Path], None], second: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    """``second`` applied to what ``first`` made (a mix of formats)."""
    def make(src: Path, out: Path) -> None:
        with _scratch() as tmp:
            first(src, tmp / "first.onnx")
            second(tmp / "first.onnx", out)
    return make


def _half_of(op_type: str) -> Callable[[onnx.ModelProto], list[str]]:
    """Every other node of ``op_type``: those stay float in a partly quantized model."""
    return lambda model: [n.name for n in model.graph.node if n.op_type == op_type][1::2]


FORMATS: dict[str, tuple[str, Callable[[Path, Path], None]]] = {
    "resnet_qdq": ("resnet_float", _static("resnet_float", "QDQ")),
    "resnet_qdq_a16w8": ("resnet_float", _static("resnet_float", "QDQ", "QUInt16", contrib=True)),
    "resnet_qdq_partial": ("resnet_float", _static("resnet_float", "QDQ", exclude=_half_of("Conv"))),
    "resnet_qoperator": ("resnet_float", _static("resnet_float", "QOperator")),
    "resnet_dynamic": ("resnet_float", _dynamic()),
    "resnet_fp16": ("resnet_float", _float16(False)),
    "resnet_fp16_keepio": ("resnet_float", _float16(True)),
    "resnet_bf16_weights": ("resnet_float", _bfloat16_weights),
    "bert_qdq": ("bert_legacy", _static("bert_legacy", "QDQ")),
    "bert_qoperator": ("bert_legacy", _static("bert_legacy", "QOperator")),
    "bert_dynamic": ("bert_legacy", _dynamic()),
    "bert_dynamic_optimized": ("bert_legacy", _dynamic(optimized=True)),
    "bert_int4": ("bert_legacy", _int4()),
    "bert_int4_qdq": ("bert_legacy", _int4("QDQ", gather=False)),
    "bert_fp16": ("bert_legacy", _float16(True)),
    "bert_fp16_int4": ("bert_legacy", _then(_float16(True), _int4(gather=False))),
    "bert_int4_dynamic": ("bert_legacy", _then(_int4(gather=False), _dynamic())),
    "lstm_dynamic": ("lstm_tagger", _dynamic()),
    "gpt2_dynamic": ("gpt2_legacy", _dynamic()),
    "gpt2_int4": ("gpt2_legacy", _int4(gather=False)),
}
"""B's name -> (A, the export it is made from; how B is made from it)."""


def reference(name: str) -> Path:
    """Model A of a pair: the float export B was made from."""
    return EXPORTS / f"{FORMATS[name][0]}.onnx"


@functools.cache
def quantized(name: str) -> Path:
    """Model B of a pair, made on first use."""
    final = CACHE / f"{name}.onnx"
    if not final.is_file():
        source, make = FORMATS[name]
        CACHE.mkdir(parents=True, exist_ok=True)
        with _scratch() as tmp:
            made = tmp / f"{name}.onnx"
            make(EXPORTS / f"{source}.onnx", made)
            onnxruntime.InferenceSession(str(made), providers=["CPUExecutionProvider"])  # it loads (not
            # onnx.checker: the float16 converter's keep_io_types writes its input Casts after their readers)
            fd, part = tempfile.mkstemp(dir=CACHE, prefix=f".{name}-", suffix=".onnx")
            os.close(fd)
            try:
                Path(part).write_bytes(made.read_bytes())
                os.chmod(part, 0o644)
                os.replace(part, final)
            finally:
                if os.path.exists(part):
                    os.unlink(part)
    return final


if __name__ == "__main__":
    for name in sys.argv[1:] or list(FORMATS):
        print(quantized(name))


# -- the tests' own rule of which value of B is which value of A (independent of the matcher) ---------
SUFFIXES = ("_DequantizeLinear_Output", "_QuantizeLinear_Output", "_output_quantized", "_quantized",
            "_DequantizeLinear", "_QuantizeLinear", "_dequantized")
SEE_THROUGH = frozenset({"Cast", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"})
FUSABLE = frozenset({"Relu", "Clip", "Cast"})  # ops a quantizer or optimizer folds into the op before them


def _strip(name: str) -> str:
    changed = True
    while changed:
        changed = False
        for suffix in SUFFIXES:
            if name.endswith(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def origins(model: onnx.ModelProto, name: str) -> set[str]:
    """The names a value of a quantized or converted model carries of the float value it stands for: its
    own without the quantizer's suffixes, and those of what a Cast or (De)QuantizeLinear reads or makes of it."""
    made = {o: n for n in model.graph.node for o in n.output}
    read: dict[str, list[onnx.NodeProto]] = {}
    for n in model.graph.node:
        for x in n.input:
            read.setdefault(x, []).append(n)
    out, work = set(), [name]
    while work:
        y = work.pop()
        if _strip(y) in out:
            continue
        out.add(_strip(y))
        p = made.get(y)
        if p is not None and p.op_type in SEE_THROUGH and p.input:
            work.append(p.input[0])
        users = read.get(y, [])
        if len(users) == 1 and users[0].op_type in SEE_THROUGH and users[0].output:
            work.append(users[0].output[0])
    return out


def classes(model: onnx.ModelProto) -> dict[str, set[str]]:
    """Each value of the float model A with the values a quantizer may compute in one step with it: an
    op's output and the Relu/Clip after it (folded by quantizers)."""
    out: dict[str, set[str]] = {}
    for n in model.graph.node:
        for o in n.output:
            out.setdefault(o, {o})
    for n in model.graph.node:
        if n.op_type in FUSABLE and n.input and n.input[0] in out:
            joined = out[n.input[0]] | out[n.output[0]]
            for v in joined:
                out[v] = joined
    return out


def right_pair(a: onnx.ModelProto, b: onnx.ModelProto, x: str, y: str) -> bool:
    """Whether B's value ``y`` is A's value ``x`` by name (shapes are checked on the runs' values)."""
    return bool(origins(b, y) & classes(a).get(x, {x}))
