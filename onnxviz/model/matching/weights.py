"""Weights of A against their quantized counterparts in B (or the other way round), as onnxruntime's
``qdq_loss_debug.create_weight_matching`` pairs a float model's weights with the ``DequantizeLinear``
of a QDQ model's quantized weights - but through the node alignment instead of names, so renamed
weights pair too.

Two matched nodes read a weight at the same input position; when one side reads it through a
``DequantizeLinear`` of an initializer (its scale and zero point initializers too), that side's
weight is dequantized (per tensor, per axis or blocked) and measured against the other side's (a
float initializer, or another dequantized one): max |B - A|, max |B - A| / max |A|, cosine and SQNR
(A the signal). Weights neither side quantized are the structural diff's business (``weight_changed``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from onnx import helper

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.tensors import tensor_array
from onnxviz.model.matching.align import DEQUANTIZE, Alignment, GraphAlignment, GraphSide, input_pairs
from onnxviz.model.matching.formats import QuantizedWeight
from onnxviz.model.progress import CancelToken
from onnxviz.model.runner.compare import measure_arrays

WEIGHT_LIMIT_BYTES = 1 << 30  # a weight measured here is read whole below this (external data is mapped)


@dataclass(frozen=True)
class WeightPair:
    """Weight ``a`` of model A (in graph ``scope_a``) against weight ``b`` of model B; a quantized one
    (``quantized_a``/``quantized_b``) is measured through its DequantizeLinear. ``note`` says why a pair
    could not be measured (the measures are then NaN)."""

    a: str
    b: str
    scope_a: str
    scope_b: str
    quantized_a: bool
    quantized_b: bool
    max_abs: float
    max_rel: float
    cosine: float
    sqnr_db: float
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"a": self.a, "b": self.b, "max_abs": _finite(self.max_abs),
                               "max_rel": _finite(self.max_rel), "cosine": _finite(self.cosine),
                               "sqnr_db": _finite(self.sqnr_db), "quantized_a": self.quantized_a,
                               "quantized_b": self.quantized_b}
        if self.scope_a or self.scope_b:
            out.update(scope_a=self.scope_a, scope_b=self.scope_b)
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class _Weight:
    name: str                 # the initializer (the quantized one, for a dequantized weight)
    node: int                 # the DequantizeLinear reading it, or -1 for a plain initializer
    spec: QuantizedWeight | None = None  # a quantized op's integer weight (QOperator, dynamic, MatMulNBits...)

    @property
    def quantized(self) -> bool:
        return self.node >= 0 or self.spec is not None


def match_weights(alignment: Alignment, base_dir_a: Path | None = None, base_dir_b: Path | None = None,
                  token: CancelToken | None = None) -> list[WeightPair]:
    """Every weight pair of the aligned graphs where at least one side is quantized, in A's node order
    (main graph first); graphs without a DequantizeLinear on either side are passed at once."""
    graphs = sorted(alignment.graphs.values(), key=lambda g: (g.scope_a.startswith("fn:"), g.scope_a))
    out: list[WeightPair] = []
    for ga in graphs:
        if ga.sides is not None and any(side.float_ops or any(op in side.ops for op in DEQUANTIZE)
                                        for side in ga.sides):
            out += _graph_weights(ga, base_dir_a, base_dir_b, token)
    return out


def _graph_weights(ga: GraphAlignment, base_a: Path | None, base_b: Path | None,
                   token: CancelToken | None) -> list[WeightPair]:
    assert ga.sides is not None
    a, b = ga.sides
    seen: set[tuple[str, str]] = set()
    out = []
    for i in a.order:
        j = ga.nodes.get(i)
        if j is None:
            continue
        for x, y in input_pairs(a, i, b, j):
            wa, wb = _weight_of(a, x), _weight_of(b, y)
            if wa is None or wb is None or not (wa.quantized or wb.quantized) or (wa.name, wb.name) in seen:
                continue
            if token is not None:
                token.check()
            seen.add((wa.name, wb.name))
            out.append(_measure(ga, wa, wb, base_a, base_b))
    return out


def _weight_of(side: GraphSide, name: str) -> _Weight | None:
    """The weight value ``name`` is: an initializer, or the DequantizeLinear of initializers."""
    if not name:
        return None
    if name in side.quantized_weights:
        return _Weight(name, -1, side.quantized_weights[name])
    if name in side.initializers:
        return _Weight(name, -1)
    p = side.producer(name)
    if p < 0 or side.ops[p] not in DEQUANTIZE:
        return None
    inputs = side.inputs[p]
    if not inputs or not all(x in side.initializers for x in inputs if x):
        return None
    return _Weight(inputs[0], p)


def _measure(ga: GraphAlignment, wa: _Weight, wb: _Weight, base_a: Path | None, base_b: Path | None) -> WeightPair:
    assert ga.sides is not None
    a, b = ga.sides
    made = (ga.scope_a, ga.scope_b, wa.quantized, wb.quantized)
    nan = math.nan
    try:
        xa, xb = _array(a, wa, base_a), _array(b, wb, base_b)
    except (OnnxvizError, ValueError) as exc:
        return WeightPair(wa.name, wb.name, *made, nan, nan, nan, nan, f"not read: {exc}")
    if xa.shape != xb.shape:
        return WeightPair(wa.name, wb.name, *made, nan, nan, nan, nan,
                          f"shapes differ: {list(xa.shape)} vs {list(xb.shape)}")
    if xa.dtype.kind not in "biuf" or xb.dtype.kind not in "biuf":
        return WeightPair(wa.name, wb.name, *made, nan, nan, nan, nan, "not numeric")
    d = measure_arrays(xa, xb)
    return WeightPair(wa.name, wb.name, *made, d.max_abs, d.max_rel, d.cosine, d.sqnr_db)


def _array(side: GraphSide, w: _Weight, base_dir: Path | None) -> np.ndarray:
    """The weight's values: the initializer, or DequantizeLinear's output computed from its initializers,
    or a quantized op's weight dequantized as that op reads it."""
    if w.spec is not None:
        return _op_weight(side, w.spec, base_dir)
    if w.node < 0:
        return tensor_array(side.initializers[w.name], base_dir, WEIGHT_LIMIT_BYTES)
    node = side.nodes[w.node]
    inputs = list(node.input) + [""] * 3
    q = tensor_array(side.initializers[inputs[0]], base_dir, WEIGHT_LIMIT_BYTES)
    scale = tensor_array(side.initializers[inputs[1]], base_dir, WEIGHT_LIMIT_BYTES)
    zero = tensor_array(side.initializers[inputs[2]], base_dir, WEIGHT_LIMIT_BYTES) if inputs[2] else None
    attrs = {attr.name: helper.get_attribute_value(attr) for attr in node.attribute}
    return dequantize(q, scale, zero, int(attrs.get("axis", 1)), int(attrs.get("block_size", 0)))


def _op_weight(side: GraphSide, spec: QuantizedWeight, base_dir: Path | None) -> np.ndarray:
    def read(name: str) -> np.ndarray:
        if name in side.initializers:
            return tensor_array(side.initializers[name], base_dir, WEIGHT_LIMIT_BYTES)
        raise ValueError(f"'{name}' is not a weight of the model")

    q = read(spec.name)
    scale = read(spec.scale.scale)
    zero = read(spec.scale.zero) if spec.scale.zero else None
    if spec.packed == "matmulnbits":
        return matmul_nbits_weight(q, scale, zero, spec.shape, spec.bits, spec.scale.block)
    if spec.packed == "gatherblock":
        if q.dtype == np.uint8 and spec.shape is not None and q.shape != spec.shape:
            q = _unpack_nibbles(q, spec.shape[spec.scale.axis % len(spec.shape)], spec.scale.axis)
        zero = zero if zero is not None else np.full(scale.shape, 8 if q.dtype.kind == "u" else 0, np.uint8)
        if zero.shape != scale.shape and zero.dtype == np.uint8:  # 4-bit zero points, two a byte
            zero = _unpack_nibbles(zero, scale.shape[spec.scale.axis % scale.ndim], spec.scale.axis)
        return dequantize(q, scale, zero, spec.scale.axis, spec.scale.block)
    if spec.transposed:  # DynamicQuantizeLSTM: [directions, input, 4 * hidden], scales along the last axis
        s = scale.reshape(scale.shape[:-1] + (1,) + scale.shape[-1:]) if scale.ndim >= 2 else scale
        z = zero.reshape(s.shape) if zero is not None and zero.size == s.size else zero
        values = (np.asarray(q, np.float64) - (0 if z is None else np.asarray(z, np.float64))) * s
        return np.swapaxes(values, -1, -2).astype(scale.dtype)
    return dequantize(q, scale, zero, spec.scale.axis, spec.scale.block)


def _unpack_nibbles(packed: np.ndarray, count: int, axis: int) -> np.ndarray:
    """Two 4-bit values a byte (low nibble first) along ``axis``, cut to ``count``."""
    low, high = packed & 0x0F, packed >> 4
    both = np.stack([low, high], axis=-1) if axis % packed.ndim == packed.ndim - 1 else None
    if both is None:
        moved = np.moveaxis(packed, axis, -1)
        out = np.stack([moved & 0x0F, moved >> 4], axis=-1).reshape(moved.shape[:-1] + (-1,))[..., :count]
        return np.moveaxis(out, -1, axis)
    return both.reshape(packed.shape[:-1] + (-1,))[..., :count]


def matmul_nbits_weight(packed: np.ndarray, scales: np.ndarray, zero: np.ndarray | None,
                        shape: tuple[int, ...] | None, bits: int, block: int) -> np.ndarray:
    """com.microsoft MatMulNBits' B as the float [K, N] weight it stands for: B holds, for each of the N
    columns, blocks of ``block`` values along K, ``bits`` bits each (low bits first); a block's values are
    ``(q - zero) * scale``, the zero point 2^(bits - 1) when none is given."""
    if shape is None or bits != 4 or not block:
        raise ValueError("only 4-bit MatMulNBits weights of a known shape are read")
    k, n = shape
    blocks = -(-k // block)
    q = _unpack_nibbles(np.asarray(packed, np.uint8).reshape(n, blocks * (block // 2)), blocks * block, 1)
    s = np.asarray(scales).reshape(n, blocks)
    if zero is None:
        z = np.full((n, blocks), 8.0)
    elif zero.dtype == np.uint8:
        z = _unpack_nibbles(zero.reshape(n, -1), blocks, 1).astype(np.float64)
    else:
        z = np.asarray(zero, np.float64).reshape(n, blocks)
    values = (q.reshape(n, blocks, block).astype(np.float64) - z[..., None]) * s[..., None]
    return values.reshape(n, blocks * block)[:, :k].T.astype(scales.dtype)


def dequantize(q: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, axis: int = 1,
               block_size: int = 0) -> np.ndarray:
    """DequantizeLinear: ``(q - zero) * scale`` per tensor (a scalar scale), per axis (a 1-D scale along
    ``axis``) or blocked (``block_size`` elements along ``axis`` share a scale), in the scale's type."""
    values = np.asarray(q, np.float64)
    s = np.asarray(scale, np.float64)
    z = np.zeros_like(s) if zero is None else np.asarray(zero, np.float64)
    if s.size > 1 or block_size:
        axis = axis % max(values.ndim, 1)
        if block_size:
            s, z = (np.repeat(t, block_size, axis=axis).take(range(values.shape[axis]), axis=axis) for t in (s, z))
        else:
            shape = [1] * values.ndim
            shape[axis] = -1
            s, z = s.reshape(shape), z.reshape(shape)
    out = (values - z) * s
    return out.astype(scale.dtype if scale.dtype.kind == "f" else np.float32)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


__all__ = ["WeightPair", "dequantize", "match_weights", "matmul_nbits_weight"]
