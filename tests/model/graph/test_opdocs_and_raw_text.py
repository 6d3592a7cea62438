"""Model-layer helpers behind the panels: operator docs, raw protobuf text, raw_data spans."""

from __future__ import annotations

import numpy as np
import onnx
from google.protobuf import text_format
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model import process_tuning
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.opdocs import attribute_text, op_doc
from onnxviz.model.graph.rawtext import (
    READ_RAW_BYTES,
    capped_copy,
    excerpt_text,
    model_excerpt,
    model_text,
    node_text,
    value_text,
)
from onnxviz.model.graph.tensors import load_tensor, raw_data_spans


def _model(nodes: int = 3, weight: np.ndarray | None = None) -> onnx.ModelProto:
    w = weight if weight is not None else np.arange(6, dtype=np.float32).reshape(2, 3)
    chain = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"relu{i}") for i in range(nodes)]
    chain.append(helper.make_node("MatMul", [f"v{nodes}", "w"], ["y"], name="mm"))
    graph = helper.make_graph(chain, "g", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, ["n", 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])],
                              [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_op_doc_uses_the_models_opset() -> None:
    model = _model()
    model.graph.node.append(helper.make_node("Clip", ["y"], ["z"]))
    doc = op_doc(model, model.graph.node[-1])
    assert doc is not None and doc.since_version == 13 and doc.model_opset == 13   # Clip v13, not the newest
    assert [f.name for f in doc.inputs] == ["input", "min", "max"] and doc.inputs[1].option == "optional"
    assert doc.type_constraints and "tensor(float)" in doc.type_constraints[0].allowed
    assert op_doc(model, helper.make_node("NoSuchOp", [], [])) is None
    conv = op_doc(model, helper.make_node("Conv", ["x", "w"], ["c"]))
    assert conv is not None and conv.attribute("group") is not None and conv.attribute("group").default == "1"


def test_attribute_text_summarises_every_kind() -> None:
    node = helper.make_node("X", [], [], ints=list(range(40)), f=0.5, s="same", t=numpy_helper.from_array(
        np.array([1, 2], np.int64)), big=numpy_helper.from_array(np.zeros((100, 100), np.float32)),
        g=helper.make_graph([], "body", [], []))
    texts = {a.name: attribute_text(a) for a in node.attribute}
    assert texts["ints"].startswith("[0, 1, 2") and "(40 items)" in texts["ints"]
    assert texts["f"] == "0.5" and texts["s"] == "'same'"
    assert texts["t"] == "int64[2] = [1, 2]" and texts["big"] == "float32[100×100]"
    assert texts["g"] == "graph 'body' (0 nodes)"


def test_model_text_is_protobuf_text_with_caps() -> None:
    model = _model(nodes=50, weight=np.ones((2, 1000), np.float32))
    raw = model_text(model, max_nodes=10, max_tensor_bytes=16)
    assert raw.truncated
    assert raw.text.startswith("# showing the first 10 of 51 nodes\n# tensor data is cut to 16 bytes per tensor\n")
    body = "".join(line + "\n" for line in raw.text.splitlines() if not line.startswith("#"))
    parsed = text_format.Parse(body, onnx.ModelProto())           # what protoc --decode would accept
    assert len(parsed.graph.node) == 10 and parsed.graph.initializer[0].dims == [2, 1000]
    assert parsed.graph.initializer[0].raw_data == bytes(np.ones(4, np.float32))  # 8 KB read, its first 16 bytes shown
    huge = _model(weight=np.ones((2, READ_RAW_BYTES // 4), np.float32))
    excerpt = model_excerpt(huge, max_tensor_bytes=16)
    assert excerpt.cut and not excerpt.shell.graph.initializer[0].HasField("raw_data")  # over 1 MiB: never read
    small = model_text(_model())
    assert not small.truncated and text_format.Parse(small.text, onnx.ModelProto()) == _model()


def test_node_and_value_text() -> None:
    model = _model()
    assert node_text(model.graph.node[0]).text == text_format.MessageToString(model.graph.node[0])
    index = ModelIndex(model)
    text = value_text(index, "", "w").text
    assert "# graph.initializer" in text and 'name: "w"' in text
    text = value_text(index, "", "v0").text
    assert text.startswith("# graph.input") and 'dim_param: "n"' in text
    assert "no ValueInfo" in value_text(index, "", "v2").text


def test_raw_data_spans_point_into_the_serialized_bytes() -> None:
    model = _model(weight=np.arange(12, dtype=np.float32).reshape(3, 4))
    data = model.SerializeToString()
    spans = raw_data_spans(data)
    start, end = spans["w"]
    assert data[start:end] == model.graph.initializer[0].raw_data
    array, stats = load_tensor(model.graph.initializer[0], raw=memoryview(data)[start:end])
    assert stats.maximum == 11 and array.base is not None           # a view of ``data``, not a copy
    _, stats = load_tensor(model.graph.initializer[0], raw=memoryview(data)[start:end - 4])
    assert stats.maximum == 11                                       # a wrong span is ignored
    assert raw_data_spans(b"\xff\xff\xff garbage") == {}
    assert raw_data_spans(b"") == {}


def test_the_model_text_never_copies_a_big_tensor_out_wherever_it_sits() -> None:
    """What the Raw panel copies on the GUI thread (model_excerpt) reads no big tensor's data: neither an
    initializer's nor one inside a Constant node, a subgraph or a function (a whole copy of a 1 GiB model held
    the GUI thread 2.4 s), and its text says the data was cut."""
    import tracemalloc

    big = numpy_helper.from_array(np.ones(1 << 21, np.float32), "w")  # 8 MiB
    body = helper.make_graph([helper.make_node("Constant", [], ["k"], value=big)], "body", [],
                             [helper.make_tensor_value_info("k", TensorProto.FLOAT, None)], [big])
    nodes = [helper.make_node("Constant", [], ["c"], value=big),
             helper.make_node("If", ["cond"], ["k"], then_branch=body, else_branch=body),
             helper.make_node("Fn", ["c"], ["y"], domain="local")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [big])
    function = helper.make_function("local", "Fn", ["a"], ["b"], [helper.make_node("Constant", [], ["b"], value=big)],
                                    [helper.make_opsetid("", 17)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                              functions=[function])
    lib = process_tuning._load_glibc()  # protobuf's own copies (CopyFrom) are C allocations: glibc counts them
    held = (lambda: lib.mallinfo2().uordblks + lib.mallinfo2().hblkhd) if lib is not None else (lambda: 0)
    before = held()
    tracemalloc.start()
    excerpt = model_excerpt(model)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20  # nothing the size of a tensor was read (7 of them: 1 + Constant + 2 bodies x 2 + function)
    assert held() - before < 1 << 20  # nor copied inside protobuf, while the excerpt holds its copies
    text = excerpt_text(excerpt).text
    assert text.count('name: "w"') == 7 and "raw_data" not in text and "# tensor data is cut to 64 bytes" in text
    node_excerpt, cut = capped_copy(model.graph.node[1], 64)
    assert cut and not node_excerpt.attribute[0].g.initializer[0].HasField("raw_data")
    assert node_excerpt.attribute[0].g.initializer[0].dims == [1 << 21]
