"""Small values fetched packed: the same values as fetching each one, and a safe way back when
the inferred shapes are wrong."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_data import LIGHT_MODELS

from onnxviz.model.runner import capture as capture_module
from onnxviz.model.runner.capture import Captured, capture, prepare_model
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.model.runner.packing import MEMBER_LIMIT, static_shapes


def _chain_model(layers: int = 30, batch: str | int = "N") -> onnx.ModelProto:
    """x[N,4] -> (Add, Relu, Mul) * layers, plus a big value, a scalar and an int64 shape on the side."""
    nodes, prev = [], "x"
    for i in range(layers):
        nodes += [helper.make_node("Add", [prev, "bias"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"]),
                  helper.make_node("Mul", [f"r{i}", "half"], [f"m{i}"])]
        prev = f"m{i}"
    nodes += [helper.make_node("Identity", [prev], ["y"]),
              helper.make_node("Shape", ["x"], ["x_shape"]),
              helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
              helper.make_node("Tile", ["big_seed", "reps"], ["big"]),
              helper.make_node("Identity", ["big"], ["big_out"])]
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4]),
         helper.make_tensor_value_info("big_out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.arange(4, dtype=np.float32) - 1.5, "bias"),
         numpy_helper.from_array(np.array(0.5, np.float32), "half"),
         numpy_helper.from_array(np.ones((1, 64), np.float32), "big_seed"),
         numpy_helper.from_array(np.array([MEMBER_LIMIT // 256, 1], np.int64), "reps")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


FEEDS = {"x": np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)}


@pytest.fixture(autouse=True)
def _pack_small_graphs(monkeypatch: pytest.MonkeyPatch) -> None:
    """These graphs are far below the size where the window packs; pack them anyway."""
    monkeypatch.setattr(capture_module, "PACK_MIN_VALUES", 0)


def test_small_graphs_are_not_packed_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    model = _chain_model()
    assert capture_module.packing_shapes(model, FEEDS, capture_module.RunOptions()) == {}
    monkeypatch.setattr(capture_module, "PACK_MIN_VALUES", 50)
    assert capture_module.packing_shapes(model, FEEDS, capture_module.RunOptions())
    assert capture_module.packing_shapes(model, FEEDS, capture_module.RunOptions(pack=False)) == {}


def _unpacked(model: onnx.ModelProto, feeds: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch) -> Captured:
    with monkeypatch.context() as patch:
        patch.setattr(capture_module, "static_shapes", lambda m, f: {})
        return capture(model, feeds)


def _assert_same_values(a: Captured, b: Captured) -> None:
    assert a.values.keys() == b.values.keys()
    for name, value in a.values.items():
        other = b.values[name]
        assert (value.dtype, value.shape) == (other.dtype, other.shape), name
        assert np.array_equal(value, other, equal_nan=True), name


def test_small_values_of_a_known_shape_are_packed_and_big_or_unknown_ones_are_not() -> None:
    model = _chain_model()
    prepared = prepare_model(model, True, static_shapes(model, FEEDS))
    packed = {name for pack in prepared.packs for name in pack.members}
    assert {f"a{i}" for i in range(30)} | {f"r{i}" for i in range(30)} <= packed  # shape [N,4] made known by the feed
    assert "y" not in packed and "big_out" not in packed  # the model's own outputs stay its own
    assert "big" not in packed  # bigger than a member may be
    assert "total" not in packed  # a scalar cannot be joined along axis 0
    assert len(prepared.packs) <= 3


def test_packed_capture_gives_the_same_values_as_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _chain_model()
    packed = capture(model, FEEDS)
    assert not packed.notes
    _assert_same_values(packed, _unpacked(model, FEEDS, monkeypatch))
    assert set(packed.engines.values()) == {"input", "onnxruntime"}
    assert packed.producers["r5"] == 16 and packed.producers["x"] == -1
    assert np.allclose(packed.values["m0"], np.maximum(FEEDS["x"] + np.arange(4) - 1.5, 0) * 0.5)


@pytest.mark.parametrize("name", ["shufflenet", "squeezenet", "inception_v1"])
def test_packing_keeps_real_models_values(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model = onnx.load(str(LIGHT_MODELS / f"light_{name}.onnx"))
    feeds = build_feeds(input_specs(model), {}, {}, seed=3)
    assert prepare_model(model, True, static_shapes(model, feeds)).packs
    _assert_same_values(capture(model, feeds), _unpacked(model, feeds, monkeypatch))


def test_only_fully_known_nonempty_tensor_shapes_count_as_static() -> None:
    """An unfed symbolic dimension, an empty tensor and a sequence have no static shape to pack by."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["known"]), helper.make_node("Relu", ["s"], ["symbolic"]),
         helper.make_node("Slice", ["x", "zero", "zero"], ["empty"]),
         helper.make_node("SequenceConstruct", ["x", "x"], ["seq"]),
         helper.make_node("Cast", ["x"], ["ints"], to=TensorProto.INT64)],
        "shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("known", "symbolic", "empty")]
        + [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None),
           helper.make_tensor_value_info("ints", TensorProto.INT64, None)],
        [numpy_helper.from_array(np.array([0], np.int64), "zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    assert static_shapes(model, {}) == {"known": (TensorProto.FLOAT, (3, 4)), "ints": (TensorProto.INT64, (3, 4))}
    fed = static_shapes(model, {"s": np.zeros((2, 4), np.float32)})
    assert fed["symbolic"] == (TensorProto.FLOAT, (2, 4)) and "empty" not in fed and "seq" not in fed


def _lying_shapes(change: str):  # noqa: ANN202 - a stand-in for static_shapes
    def shapes(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, tuple[int, tuple[int, ...]]]:
        shapes = static_shapes(model, feeds)
        if change == "first":  # every [3, 4] said to be [4, 4]
            return {n: (t, (s[0] + 1, *s[1:]) if len(s) == 2 else s) for n, (t, s) in shapes.items()}
        return {**shapes, "total": shapes["a0"]}  # a scalar said to be [3, 4]
    return shapes


@pytest.mark.parametrize("change", ["first", "rank"])
def test_wrong_inferred_shapes_fall_back_to_fetching_one_by_one(change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong first dimension gives a pack of the wrong size; a wrong rank makes the Concat fail."""
    model = _chain_model()
    expected = _unpacked(model, FEEDS, monkeypatch)
    monkeypatch.setattr(capture_module, "static_shapes", _lying_shapes(change))
    got = capture(model, FEEDS)
    assert any("each was fetched on its own" in note for note in got.notes)
    assert got.engine == "onnxruntime"
    _assert_same_values(got, expected)


def test_a_real_node_failure_is_still_reported_as_such() -> None:
    model = _chain_model()
    with pytest.raises(capture_module.RunError) as failure:
        capture(model, {"x": np.zeros((3, 5), np.float32)}, capture_module.RunOptions(engine="onnxruntime"))
    assert "pack" not in failure.value.message.lower()


class _FakeResult:
    def __init__(self) -> None:
        self.notes: list[str] = []


@pytest.mark.parametrize(("phase", "crashed"), [("planning", True), ("running", True), ("planning", False)])
def test_a_crash_while_planning_the_capture_runs_again_without_it(monkeypatch: pytest.MonkeyPatch,
                                                                  phase: str, crashed: bool) -> None:
    """A crash (SIGSEGV) while planning runs again without planning; a kill from outside is reported."""
    from onnxviz.model.runner import worker
    from onnxviz.model.runner.errors import RunError
    from onnxviz.model.runner.protocol import PLANNING, RunOptions

    calls: list[bool] = []

    def run_once(model, feeds, options, base_dir, out_dir, progress, token, on_start, generated=None):  # noqa: ANN001, ANN202
        calls.append(options.pack)
        if len(calls) == 1:
            progress(0.05, PLANNING if phase == "planning" else "Running on onnxruntime")
            signal = "SIGSEGV" if crashed else "SIGKILL"
            raise worker.WorkerEnded(f"the runtime process crashed with {signal}; your model is unchanged.", crashed)
        return _FakeResult()

    monkeypatch.setattr(worker, "_run_once", run_once)
    if phase == "running" or not crashed:
        with pytest.raises(RunError, match="SIGSEGV" if crashed else "SIGKILL"):
            worker.run_in_worker(b"", {}, RunOptions())
        assert calls == [True]
        return
    result = worker.run_in_worker(b"", {}, RunOptions())
    assert calls == [True, False]
    assert "fetched one by one" in result.notes[0]


def test_a_crash_while_reading_the_graph_for_input_sizes_runs_again_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shape inference of a malformed model may crash the worker while it looks for sizes of generated inputs:
    the run is made again without looking (the sizes it then tries are the ladder's)."""
    from onnxviz.model.runner import worker
    from onnxviz.model.runner.protocol import SIZING, RunOptions
    from onnxviz.model.runner.sizes import GeneratedInputs

    hints: list[bool] = []

    def run_once(model, feeds, options, base_dir, out_dir, progress, token, on_start, generated=None):  # noqa: ANN001, ANN202
        hints.append(generated.hints)
        if len(hints) == 1:
            progress(0.1, SIZING)
            raise worker.WorkerEnded("the runtime process crashed with SIGSEGV; your model is unchanged.", True)
        return _FakeResult()

    monkeypatch.setattr(worker, "_run_once", run_once)
    result = worker.run_in_worker(b"", {}, RunOptions(), generated=GeneratedInputs(()))
    assert hints == [True, False] and "none was suggested" in result.notes[0]
