"""A big edited model is saved a piece at a time (io.streaming): the same bytes as SerializeToString, never
the whole file in memory, with progress in bytes, cancel, and the document's checks kept."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import onnxviz
from onnxviz.model import document, process_tuning
from onnxviz.model.errors import Cancelled, SaveError
from onnxviz.model.io import saving, streaming
from onnxviz.model.io.saving import EscapedTextError, FileChangedError, SaveOptions, TooLargeError
from onnxviz.model.io.streaming import StreamedModel, stream_model

SMALL_STREAM = 16  # elements: in these tests a tensor this big is "big"


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stream tensors of 16 elements and models of 1 KiB, so that small test models take the big path."""
    monkeypatch.setattr(streaming, "STREAM_ELEMENTS", SMALL_STREAM)
    monkeypatch.setattr(saving, "STREAM_ABOVE", 1024)
    monkeypatch.setattr(document, "STREAM_ABOVE", 1024)
    process_tuning.reuse_big_blocks()  # as in the window: a big tensor's copy goes to a block made ready for it
    monkeypatch.setattr(process_tuning, "BIG_BLOCK", SMALL_STREAM)


def _written(streamed: StreamedModel) -> bytes:
    out = io.BytesIO()
    streamed.write(out.write)
    return out.getvalue()


@st.composite
def tensors(draw: st.DrawFn, name: str) -> TensorProto:
    """A raw, typed-field or external tensor, big or small, with optional fields around raw_data."""
    count = draw(st.sampled_from([1, 3, SMALL_STREAM, 40]))
    kind = draw(st.sampled_from(["raw", "typed", "external", "malformed"]))
    values = np.arange(count, dtype=np.float32) * draw(st.floats(-2, 2, allow_nan=False, width=32))
    if kind == "typed":
        return helper.make_tensor(name, TensorProto.FLOAT, [count], values.tolist())
    tensor = numpy_helper.from_array(values, name)
    if kind == "malformed":  # raw_data of another size than its dims say
        tensor.raw_data += bytes(draw(st.sampled_from([1, 4, 12])))
    if kind == "external":
        tensor.ClearField("raw_data")
        tensor.data_location = TensorProto.EXTERNAL
        tensor.external_data.add(key="location", value="w.bin")
    if draw(st.booleans()):
        tensor.doc_string = draw(st.text(max_size=5))
        tensor.metadata_props.add(key="k", value="v")
    return tensor


@st.composite
def models(draw: st.DrawFn) -> onnx.ModelProto:
    """Main-graph initializers of every kind, a subgraph with its own, a function, metadata."""
    inits = [draw(tensors(f"w{i}")) for i in range(draw(st.integers(0, 5)))]
    branch = helper.make_graph([helper.make_node("Identity", ["b0"], ["o"])], "branch", [],
                               [helper.make_tensor_value_info("o", TensorProto.FLOAT, None)], [draw(tensors("b0"))])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch, name="if"),
             helper.make_node("Fn", ["y"], ["z"], domain="local")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    function = helper.make_function("local", "Fn", ["a"], ["b"], [helper.make_node("Identity", ["a"], ["b"])],
                                    [helper.make_opsetid("", 17)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                              functions=[function] if draw(st.booleans()) else [])
    helper.set_model_props(model, {"who": draw(st.text(max_size=4))})
    return model


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=models())
def test_streamed_bytes_are_the_serialization(small_thresholds: None, model: onnx.ModelProto) -> None:
    streamed = stream_model(model, lambda: None)
    try:
        data = _written(streamed)
    except streaming.SizeGuessWrong:  # a malformed big tensor: the save measures them all (see SavePlan.write)
        streamed = streamed.measured()
        data = _written(streamed)
    assert data == model.SerializeToString() and streamed.size == len(data)
    assert onnx.ModelProto.FromString(data) == model


def test_each_big_tensor_is_copied_into_a_block_made_ready_for_it(small_thresholds: None,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if process_tuning._glibc is None:
        pytest.skip("the heap is tuned with glibc only")
    readied: list[int] = []
    monkeypatch.setattr(process_tuning, "_touch", lambda lib, size: readied.append(size))
    model = helper.make_model(helper.make_graph([], "g", [], [], [
        numpy_helper.from_array(np.ones(40, np.float32), "big"), numpy_helper.from_array(np.ones(2, np.float32), "s"),
        numpy_helper.from_array(np.ones(20, np.int64), "big2")]))
    assert _written(stream_model(model)) == model.SerializeToString()
    assert readied == [40 * 4, 20 * 8]  # before each copy of a big tensor's raw_data, none for the small one


def test_big_tensors_are_read_only_when_written(small_thresholds: None) -> None:
    model = helper.make_model(helper.make_graph([], "g", [], [], [
        numpy_helper.from_array(np.ones(40, np.float32), "big"), numpy_helper.from_array(np.ones(2, np.float32), "s")]))
    streamed = stream_model(model)
    assert sum(isinstance(p, bytes) for p in streamed.pieces) < len(streamed.pieces)  # a piece left to read
    assert 40 * 4 not in [len(p) for p in streamed.pieces if isinstance(p, bytes)]


def test_unknown_fields_are_kept(small_thresholds: None) -> None:
    model = helper.make_model(helper.make_graph([], "g", [], [], [numpy_helper.from_array(np.ones(40, np.float32), "w")]))
    odd = onnx.ModelProto.FromString(model.SerializeToString() + bytes([0xF8, 0x07, 0x2A]))  # field 127
    assert _written(stream_model(odd)) == odd.SerializeToString()
    tensor = odd.graph.initializer[0]
    tensor.ParseFromString(tensor.SerializeToString() + bytes([0xF8, 0x07, 0x2A]))
    assert _written(stream_model(odd)) == odd.SerializeToString()


def test_a_tensor_changed_after_planning_fails_the_save(small_thresholds: None) -> None:
    model = helper.make_model(helper.make_graph([], "g", [], [], [numpy_helper.from_array(np.ones(40, np.float32), "w")]))
    streamed = stream_model(model)
    model.graph.initializer[0].raw_data = b"\0" * 8
    with pytest.raises(SaveError, match="changed while the model was being saved"):
        _written(streamed)


def test_planning_takes_big_tensors_sizes_from_their_dims_and_copies_no_weight(small_thresholds: None) -> None:
    """Measuring a 256 MiB raw_data copies it out of protobuf (~0.1 s of held GIL; the window paused 0.6 s
    planning a 1 GiB model's save): a big tensor's size comes from its dims and type, checked when written."""
    model = helper.make_model(helper.make_graph([], "g", [], [], [
        numpy_helper.from_array(np.ones(40, np.float32), "f32"), numpy_helper.from_array(np.ones(20, np.int64), "i64"),
        helper.make_tensor("i4", TensorProto.INT4, [40], np.zeros(20, np.uint8).tobytes(), raw=True)]))
    raws = [p for p in stream_model(model).pieces if isinstance(p, streaming._Raw)]  # noqa: SLF001
    assert [(r.tensor.name, r.size, r.guessed) for r in raws] == [("f32", 160, True), ("i64", 160, True),
                                                                  ("i4", 20, False)]  # 4-bit: measured


def test_a_big_tensor_not_the_size_its_dims_say_is_saved_as_it_is(small_thresholds: None, tmp_path: Path) -> None:
    """A malformed weight (raw_data of another size than its dims) is written as read: the first try stops at it
    having written nothing, and the save measures every big tensor and writes again, the progress counting once."""
    path = _big_file(tmp_path)
    model = onnx.load(str(path))
    model.graph.initializer[1].raw_data = bytes(600 * 4 + 12)  # 3 more elements than its dims say
    onnx.save(model, str(path))
    doc = onnxviz.open(path)
    doc.edit.set_metadata("k", "v")
    plan = doc.plan_save(tmp_path / "copy.onnx", SaveOptions())
    assert isinstance(plan.data, StreamedModel)
    with pytest.raises(streaming.SizeGuessWrong, match="not the size its dims say"):
        _written(plan.data)
    seen: list[float] = []
    plan.write(lambda fraction, _text: seen.append(fraction))
    assert (tmp_path / "copy.onnx").read_bytes() == doc.model.SerializeToString()
    assert max(seen) == seen[-1] == 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.onnx", "copy.onnx"]


def _big_file(folder: Path, node: str = "add") -> Path:
    path = folder / "big.onnx"
    weights = [numpy_helper.from_array(np.full(600, i, np.float32), f"w{i}") for i in range(3)]
    graph = helper.make_graph([helper.make_node("Add", ["w0", "w1"], ["y"], name=node)], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [600])], weights)
    onnx.save(helper.make_model(graph), str(path))
    return path


def test_an_edited_big_model_is_streamed_and_lets_go_of_the_file_bytes(small_thresholds: None, tmp_path: Path) -> None:
    path = _big_file(tmp_path)
    doc = onnxviz.open(path)
    doc.edit.set_metadata("k", "v")
    assert doc._disk is not None and doc._disk.data is None  # noqa: SLF001 - what this test is about
    plan = doc.plan_save(None, SaveOptions())
    assert isinstance(plan.data, StreamedModel)
    seen: list[float] = []
    plan.write(lambda fraction, _text: seen.append(fraction))
    doc.saved(plan)
    assert onnx.load(str(path)) == doc.model and not doc.is_dirty
    assert len(seen) >= 4 and seen[-1] == 1.0  # a step per piece, in bytes


def test_undo_to_the_file_state_saves_the_files_own_bytes(small_thresholds: None, tmp_path: Path) -> None:
    path = _big_file(tmp_path)
    original = path.read_bytes()
    doc = onnxviz.open(path)
    doc.edit.rename_node(0, "renamed")
    doc.undo()
    assert doc.serialize() == original  # read again from the unchanged file
    doc.save(tmp_path / "copy.onnx")
    assert (tmp_path / "copy.onnx").read_bytes() == original


def test_a_change_on_disk_is_still_noticed_once_the_bytes_are_let_go(small_thresholds: None, tmp_path: Path) -> None:
    path = _big_file(tmp_path)
    doc = onnxviz.open(path)
    doc.edit.set_metadata("k", "v")
    other = onnx.load(str(path))
    other.producer_name = "another program"
    onnx.save(other, str(path))
    with pytest.raises(FileChangedError):
        doc.save()
    assert onnx.load(str(path)).producer_name == "another program"
    doc.save(overwrite=True)
    assert onnx.load(str(path)) == doc.model


def test_a_cancelled_streamed_save_leaves_the_old_file(small_thresholds: None, tmp_path: Path) -> None:
    path = _big_file(tmp_path)
    original = path.read_bytes()
    doc = onnxviz.open(path)
    doc.edit.set_metadata("k", "v")
    plan = doc.plan_save(None, SaveOptions())
    calls: list[float] = []

    def progress(fraction: float, _text: str) -> None:
        calls.append(fraction)
        if len(calls) == 2:
            raise Cancelled()

    with pytest.raises(Cancelled):
        plan.write(progress)
    assert path.read_bytes() == original and sorted(p.name for p in tmp_path.iterdir()) == ["big.onnx"]
    assert doc.is_dirty


def test_text_not_valid_utf8_is_written_as_read_after_an_undo_and_asked_about_once_edited(
        small_thresholds: None, tmp_path: Path) -> None:
    path = _big_file(tmp_path, node="hostile")
    path.write_bytes(path.read_bytes().replace(b"hostile", b"host\xffle"))
    original = path.read_bytes()
    doc = onnxviz.open(path)
    doc.edit.set_metadata("k", "v")
    doc.undo()
    doc.save()  # the file's own bytes, read again: nothing to ask
    assert path.read_bytes() == original
    doc.edit.set_metadata("k", "v")
    with pytest.raises(EscapedTextError):
        doc.save()
    assert path.read_bytes() == original


def test_a_streamed_model_over_the_protobuf_limit_offers_a_data_file(
        small_thresholds: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _big_file(tmp_path)
    doc = onnxviz.open(path)
    doc.edit.set_metadata("k", "v")
    monkeypatch.setattr(saving, "MAX_PROTO_BYTES", 2000)
    with pytest.raises(TooLargeError) as asked:
        doc.save()
    assert [label for label, _ in asked.value.choices] == ["Save Weights Separately"]
    doc.save(external="file")
    assert (tmp_path / "big.onnx.data").stat().st_size > 2000 and not doc.is_dirty
