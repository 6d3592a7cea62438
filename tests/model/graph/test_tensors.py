"""Tensor reading and chunked statistics agree with numpy; malformed tensors give OnnxvizError."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.tensors import stats_of_array, tensor_array, tensor_stats
from onnxviz.model.progress import CancelToken


def _assert_matches_numpy(stats, values: np.ndarray) -> None:
    finite = values[np.isfinite(values)].astype(np.float64)
    assert stats.numel == values.size
    assert stats.minimum == pytest.approx(finite.min())
    assert stats.maximum == pytest.approx(finite.max())
    assert stats.mean == pytest.approx(finite.mean(), rel=1e-9, abs=1e-12)
    assert stats.std == pytest.approx(finite.std(), rel=1e-9, abs=1e-12)
    assert stats.zero_fraction == pytest.approx(np.count_nonzero(values == 0) / values.size)
    expected, edges = np.histogram(finite, bins=len(stats.hist_counts), range=(finite.min(), finite.max()))
    np.testing.assert_array_equal(stats.hist_counts, expected)
    np.testing.assert_allclose(stats.hist_edges, edges)


@pytest.mark.parametrize("chunk", [7, 1000, 1 << 20])
def test_chunked_stats_equal_numpy_on_whole_array(chunk: int) -> None:
    rng = np.random.default_rng(0)
    values = (rng.standard_normal((37, 129)) * 3 + 1).astype(np.float32)
    values[0, :5] = 0
    stats = tensor_stats(numpy_helper.from_array(values, "w"), chunk=chunk)
    _assert_matches_numpy(stats, values)
    assert stats.storage == "inline raw_data"
    assert stats.shape == (37, 129) and stats.dtype == "float32" and stats.nbytes == values.nbytes


def test_nan_and_inf_are_counted_and_excluded() -> None:
    values = np.array([1.0, np.nan, np.inf, -np.inf, 3.0, 0.0, np.nan], np.float32)
    stats = tensor_stats(numpy_helper.from_array(values, "x"), chunk=3)
    assert (stats.nan_count, stats.inf_count) == (2, 2)
    assert (stats.minimum, stats.maximum) == (0.0, 3.0)
    assert stats.mean == pytest.approx(4 / 3)
    assert stats.hist_counts.sum() == 3


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_precision_types(dtype: type) -> None:
    values = np.linspace(-2, 5, 1001).astype(dtype)
    tensor = numpy_helper.from_array(values, "h")
    stats = tensor_stats(tensor, chunk=100)
    _assert_matches_numpy(stats, values.astype(np.float64))
    assert stats.nbytes == 2002
    np.testing.assert_array_equal(tensor_array(tensor), values)


def test_float16_in_typed_int32_data() -> None:
    values = np.array([1.5, -2.0, 0.0], np.float16)
    tensor = helper.make_tensor("t", TensorProto.FLOAT16, [3], values.view(np.uint16).astype(np.int32).tolist())
    tensor.ClearField("raw_data")
    tensor.int32_data[:] = values.view(np.uint16).astype(np.int32).tolist()
    stats = tensor_stats(tensor)
    assert stats.storage == "inline typed data (int32_data)"
    assert (stats.minimum, stats.maximum) == (-2.0, 1.5)


@pytest.mark.parametrize("data_type,values", [
    (TensorProto.INT4, np.array([-8, -1, 0, 3, 7], np.int8)),
    (TensorProto.UINT4, np.array([0, 15, 4, 9, 1, 2], np.uint8)),
])
def test_four_bit_types_unpack_across_chunks(data_type: int, values: np.ndarray) -> None:
    tensor = helper.make_tensor("q", data_type, [values.size], values.tolist())
    stats = tensor_stats(tensor, chunk=3)
    _assert_matches_numpy(stats, values.astype(np.float64))
    assert stats.nbytes == (values.size + 1) // 2
    np.testing.assert_array_equal(tensor_array(tensor).astype(np.int64), values)


def test_int_and_bool_and_string() -> None:
    ints = tensor_stats(numpy_helper.from_array(np.arange(-5, 6, dtype=np.int64), "i"))
    assert (ints.minimum, ints.maximum, ints.mean) == (-5, 5, 0)
    flags = tensor_stats(numpy_helper.from_array(np.array([True, False, True]), "b"))
    assert flags.mean == pytest.approx(2 / 3)
    strings = tensor_stats(helper.make_tensor("s", TensorProto.STRING, [2], [b"ab", b"c"]))
    assert not strings.numeric and strings.minimum is None and strings.nbytes == 3
    assert list(tensor_array(helper.make_tensor("s", TensorProto.STRING, [2], [b"ab", b"c"]))) == ["ab", "c"]


def test_external_data_is_read_through_a_memory_map(tmp_path: Path) -> None:
    values = np.arange(1000, dtype=np.float32).reshape(10, 100)
    tensor = numpy_helper.from_array(values, "ext")
    (tmp_path / "weights.bin").write_bytes(b"\0" * 16 + values.tobytes())
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    for k, v in {"location": "weights.bin", "offset": "16", "length": str(values.nbytes)}.items():
        tensor.external_data.add(key=k, value=v)
    stats = tensor_stats(tensor, tmp_path, chunk=64)
    _assert_matches_numpy(stats, values)
    assert stats.storage == "external: weights.bin @ 16, 4,000 bytes"
    array = tensor_array(tensor, tmp_path, limit_bytes=10)  # memory-mapped: not counted
    assert array.shape == (10, 100) and array[3, 7] == 307
    with pytest.raises(OnnxvizError, match="no folder"):
        tensor_stats(tensor, None)


def test_stats_of_array_for_activations() -> None:
    values = np.random.default_rng(1).random((4, 5, 6))
    stats = stats_of_array(values, "act", chunk=11)
    _assert_matches_numpy(stats, values)
    assert stats.dtype == "float64" and stats.shape == (4, 5, 6)


def test_progress_and_cancel() -> None:
    seen: list[float] = []
    tensor_stats(numpy_helper.from_array(np.ones(100, np.float32), "p"), progress=lambda f, _t: seen.append(f),
                 chunk=10)
    assert seen[-1] == 1.0 and seen == sorted(seen)
    token = CancelToken()
    token.cancel()
    from onnxviz.model.errors import Cancelled
    with pytest.raises(Cancelled):
        tensor_stats(numpy_helper.from_array(np.ones(100, np.float32), "p"), cancel=token)


def _malformed() -> list[tuple[TensorProto, str]]:
    short = numpy_helper.from_array(np.ones(4, np.float32), "short")
    short.dims[:] = [10]
    huge = numpy_helper.from_array(np.ones(1, np.float32), "huge")
    huge.dims[:] = [1 << 20, 1 << 21]
    unknown = numpy_helper.from_array(np.ones(1, np.float32), "unknown")
    unknown.data_type = 99
    both = numpy_helper.from_array(np.ones(2, np.float32), "both")
    both.float_data.extend([1.0, 2.0])
    typed_short = onnx.TensorProto(name="typed", dims=[5], data_type=TensorProto.FLOAT, float_data=[1.0, 2.0])
    negative = onnx.TensorProto(name="neg", dims=[-1], data_type=TensorProto.FLOAT)
    undefined = onnx.TensorProto(name="undef", dims=[1])
    return [(short, "needs 40"), (huge, "claims"), (unknown, "unknown data type"), (both, "both"),
            (typed_short, "needs 5"), (negative, "negative"), (undefined, "no data type")]


@pytest.mark.parametrize("tensor,message", _malformed(), ids=lambda x: getattr(x, "name", ""))
def test_malformed_tensors_give_a_clear_error(tensor: TensorProto, message: str) -> None:
    with pytest.raises(OnnxvizError, match=message):
        tensor_stats(tensor)
    with pytest.raises(OnnxvizError):
        tensor_array(tensor)


def test_tensor_array_refuses_copies_above_the_limit() -> None:
    with pytest.raises(OnnxvizError, match="too large"):
        tensor_array(numpy_helper.from_array(np.ones(1000, np.float32), "big"), limit_bytes=100)


def test_every_tensor_is_found_in_onnx_order() -> None:
    """Initializers of the main graph and of nested bodies, then tensor attributes of every graph's nodes
    (a node's bodies right after its own), then those of the functions: the order onnx's external-data
    helper walks them, which saving relies on (it pairs a model's tensors with its copy's)."""
    from onnx import external_data_helper

    from onnxviz.model.io.external import iter_all_tensors

    def const(name: str) -> onnx.NodeProto:
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.zeros(1, np.float32), name))

    inner = helper.make_graph([const("c_inner")], "inner", [], [helper.make_tensor_value_info("c_inner", 1, [1])],
                              initializer=[numpy_helper.from_array(np.ones(2, np.float32), "w_inner")])
    loop = helper.make_node("If", ["cond"], ["o1"], then_branch=inner, else_branch=inner)
    then = helper.make_graph([const("c_then"), loop], "then", [], [helper.make_tensor_value_info("o1", 1, [1])],
                             initializer=[numpy_helper.from_array(np.ones(3, np.float32), "w_then")])
    top_if = helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=inner)
    graph = helper.make_graph([const("c_top"), top_if, const("c_last")], "g",
                              [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", 1, [1])],
                              initializer=[numpy_helper.from_array(np.ones(4, np.float32), f"w{k}") for k in range(3)])
    function = helper.make_function("local", "F", ["a"], ["b"], [const("c_fn"), helper.make_node("Add", ["a", "c_fn"], ["b"])],
                                    [helper.make_opsetid("", 18)])
    model = helper.make_model(graph, functions=[function], opset_imports=[helper.make_opsetid("", 18)])

    ours = [t.name for t in iter_all_tensors(model)]
    assert ours == [t.name for t in external_data_helper._get_all_tensors(model)]
    assert ours[:3] == ["w0", "w1", "w2"] and "w_inner" in ours and ours[-1] == "c_fn"
