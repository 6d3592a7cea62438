"""A model's bytes built in slices from a background thread equal SerializeToString's, byte for byte; a model
parsed in slices equals the one parsed whole."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
from conftest import REPO
from onnx_data import model_id, node_cases

import onnxviz
from onnxviz.model import process_tuning
from onnxviz.model.errors import Cancelled
from onnxviz.model.io import loading
from onnxviz.model.io.slices import parse_in_slices, serialize_in_slices
from onnxviz.model.io.wire import WireError
from onnxviz.model.progress import CancelToken

EXAMPLE = REPO / "resources" / "examples" / "example.onnx"
MODELS = [EXAMPLE, *sorted(node_cases().glob("*/model.onnx"))[::25]]  # every 25th operator case


@pytest.mark.parametrize("items", [1, 3, 2000])
@pytest.mark.parametrize("path", MODELS, ids=[model_id(p) for p in MODELS])
def test_sliced_bytes_equal_the_whole_serialization(path: Path, items: int) -> None:
    model = onnx.load(str(path))
    assert serialize_in_slices(model, lambda: None, items) == model.SerializeToString()


@pytest.mark.parametrize("items", [1, 3, 2000])
@pytest.mark.parametrize("path", MODELS, ids=[model_id(p) for p in MODELS])
def test_a_model_parsed_in_slices_equals_the_whole_parse(path: Path, items: int) -> None:
    data = path.read_bytes()
    model = parse_in_slices(data, lambda: None, items)
    assert model == onnx.ModelProto.FromString(data) and model.SerializeToString() == data


def test_a_graph_written_twice_and_unknown_fields_parse_as_protobuf_merges_them(example_path: Path) -> None:
    """Protobuf merges a field that comes twice (the second graph's nodes follow the first's, its name wins)."""
    model = onnx.load(str(example_path))
    extra = onnx.ModelProto()
    extra.graph.name = "second"
    extra.graph.node.add(op_type="Relu", input=["x"], output=["y"], name="late")
    data = model.SerializeToString() + bytes([0xF8, 0x07, 0x2A]) + extra.SerializeToString()
    pauses: list[int] = []
    parsed = parse_in_slices(data, lambda: pauses.append(1), 2)
    assert parsed == onnx.ModelProto.FromString(data) and parsed.graph.node[-1].name == "late"
    assert parsed.graph.name == "second" and len(pauses) > len(model.graph.node) // 2


def test_bytes_that_are_no_model_fail_to_parse_in_slices(example_path: Path) -> None:
    data = example_path.read_bytes()
    with pytest.raises(WireError):
        parse_in_slices(data[: len(data) // 2], lambda: None)  # the file ends inside the graph


def test_a_big_file_is_read_in_slices_and_a_broken_one_still_explained(example_path: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loading, "SLICED_PARSE_BYTES", 0)  # every file counts as big
    pauses: list[int] = []
    model, data = loading.read_model_file(example_path, lambda: pauses.append(1))
    assert pauses and model == onnx.load(str(example_path)) and data == example_path.read_bytes()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(loading.LoadError, match="truncated"):
        loading.read_model_file(cut, lambda: None)


def test_slices_pause_between_them(example_path: Path) -> None:
    model = onnx.load(str(example_path))
    pauses: list[int] = []
    assert serialize_in_slices(model, lambda: pauses.append(1), 3) == model.SerializeToString()
    assert len(pauses) > 3


def test_a_message_with_unknown_fields_keeps_them(example_path: Path) -> None:
    model = onnx.load(str(example_path))
    data = model.SerializeToString() + bytes([0xF8, 0x07, 0x2A])  # field 127 (varint 42): no ONNX field
    odd = onnx.ModelProto.FromString(data)
    assert serialize_in_slices(odd, lambda: None, 2) == odd.SerializeToString()


def test_a_pause_that_raises_stops_the_serialization(example_path: Path) -> None:
    model = onnx.load(str(example_path))

    def pause() -> None:
        raise Cancelled()

    with pytest.raises(Cancelled):
        serialize_in_slices(model, pause, 2)


def test_background_bytes_of_a_state_the_document_left_are_refused(example_copy: Path) -> None:
    from onnxviz.ui.validation import document_bytes_in_thread

    unedited = onnxviz.open(example_copy)
    assert document_bytes_in_thread(unedited, unedited.generation, CancelToken()) == example_copy.read_bytes()
    doc = onnxviz.open(example_copy)
    state = doc.generation
    doc.edit.rename_node(0, "renamed")
    with pytest.raises(Cancelled):
        document_bytes_in_thread(doc, state, CancelToken())
    edited = document_bytes_in_thread(doc, doc.generation, CancelToken())
    assert edited == doc.model.SerializeToString() and doc.serialize() is edited  # one serialization per state


def test_a_model_of_big_weights_is_parsed_in_slices_without_copies_of_its_bytes() -> None:
    """Each big initializer is parsed where it lies in the file's bytes, a record per slice: the peak of memory
    allocated while parsing is the model's own (the slices were once copied out, and copied again to be merged:
    a 1 GiB model took 5 GB to open)."""
    import tracemalloc

    model = onnx.ModelProto(ir_version=8)
    for k in range(4):
        model.graph.initializer.add(name=f"w{k}", data_type=onnx.TensorProto.FLOAT, dims=[1 << 20],
                                    raw_data=bytes(4 << 20))
    data = model.SerializeToString()
    pauses: list[int] = []
    tracemalloc.start()
    parsed = parse_in_slices(data, lambda: pauses.append(1))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < len(data) // 4  # Python objects only: nothing the size of a weight
    assert parsed == model and len(pauses) >= 4  # a slice per weight


def test_a_big_record_is_merged_into_a_block_made_ready_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before protobuf copies a big record (a weight) with the GIL held, a block of its size is made ready
    (onnxviz.model.process_tuning.big_blocks: in the window, its pages are touched first with the GIL released)."""
    if not process_tuning.reuse_big_blocks():
        pytest.skip("the heap is tuned with glibc only")
    monkeypatch.setattr(process_tuning, "BIG_BLOCK", 1 << 20)
    readied: list[int] = []
    monkeypatch.setattr(process_tuning, "_touch", lambda lib, size: readied.append(size))
    model = onnx.ModelProto(ir_version=8)
    for k in range(3):
        model.graph.initializer.add(name=f"w{k}", data_type=onnx.TensorProto.FLOAT, dims=[1 << 20],
                                    raw_data=bytes([k]) * (4 << 20))
    model.graph.node.add(op_type="Relu", input=["w0"], output=["y"])
    parsed = parse_in_slices(model.SerializeToString(), lambda: None)
    assert parsed == model
    assert len(readied) == 3 and all(4 << 20 <= size < (4 << 20) + 64 for size in readied)  # one per weight


def test_a_file_that_grew_since_it_was_measured_is_read_to_its_end(example_path: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The read asks for the file's size (asking for the 2 GiB limit allocated that much first, outside the
    heap the window reuses); a file that grew after it was measured is still read whole."""
    data = example_path.read_bytes()
    path = tmp_path / "grown.onnx"
    path.write_bytes(data)
    real_stat = Path.stat

    def measured_before_it_grew(self: Path, **kwargs: bool) -> os.stat_result:
        found = real_stat(self, **kwargs)
        if self != path:
            return found
        return os.stat_result((*found[:6], found.st_size // 2, *found[7:10]))

    monkeypatch.setattr(Path, "stat", measured_before_it_grew)
    model, read = loading.read_model_file(path)
    assert read == data and model == onnx.ModelProto.FromString(data)
