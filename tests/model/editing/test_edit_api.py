"""Every edit kind from Python: it changes what it says, undo restores the bytes, redo re-applies."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxviz
from onnxviz.model import document as document_module
from onnxviz.model.document import Document
from onnxviz.model.errors import EditError


@pytest.fixture(autouse=True)
def paranoid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Failing edits must leave the model byte-identical (Document.execute asserts it)."""
    monkeypatch.setattr(document_module, "_PARANOID", True)


@pytest.fixture
def doc(example_path: Path) -> Document:
    return onnxviz.open(example_path)


def node(doc: Document, name: str) -> onnx.NodeProto:
    return next(n for n in doc.model.graph.node if n.name == name)


def roundtrip(doc: Document, edit: Callable[[], object]) -> None:
    """Run ``edit``; it must change the model; undo restores it exactly; redo reproduces the edit."""
    before, was_dirty = doc.model.SerializeToString(), doc.is_dirty
    edit()
    after = doc.model.SerializeToString()
    assert after != before
    assert doc.is_dirty
    doc.undo()
    assert doc.model.SerializeToString() == before
    assert doc.is_dirty == was_dirty
    doc.redo()
    assert doc.model.SerializeToString() == after


def refused(doc: Document, edit: Callable[[], object], phrase: str) -> None:
    before = doc.model.SerializeToString()
    with pytest.raises(EditError) as info:
        edit()
    assert phrase in info.value.message
    assert "\n" not in info.value.message
    assert doc.model.SerializeToString() == before
    assert not doc.undo_stack.commands or doc.undo_stack.undo_label() != ""


CONV = "/stem/conv/Conv"


# -- attributes ------------------------------------------------------------------------------
def test_set_attribute_keeps_its_position_and_label(doc: Document) -> None:
    names = [a.name for a in node(doc, CONV).attribute]
    roundtrip(doc, lambda: doc.edit.set_attribute(CONV, "strides", [1, 1]))
    assert [a.name for a in node(doc, CONV).attribute] == names
    assert helper.get_attribute_value(next(a for a in node(doc, CONV).attribute if a.name == "strides")) == [1, 1]
    assert doc.undo_stack.undo_label() == f"Set {CONV}.strides"


def test_attribute_values_are_checked_against_the_schema(doc: Document) -> None:
    refused(doc, lambda: doc.edit.set_attribute(CONV, "strides", "wide"), "expects a list of integers")
    refused(doc, lambda: doc.edit.set_attribute(CONV, "group", 1.5), "expects an integer")
    refused(doc, lambda: doc.edit.set_attribute(CONV, "colour", 1), "Conv has no attribute 'colour'")
    refused(doc, lambda: doc.edit.set_attribute("nope", "group", 1), "there is no node 'nope'")


def test_add_attribute_with_schema_default_and_remove(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.add_attribute(CONV, "group"))
    assert helper.get_attribute_value(node(doc, CONV).attribute[-1]) == 1
    refused(doc, lambda: doc.edit.add_attribute(CONV, "group"), "already has attribute 'group'")
    roundtrip(doc, lambda: doc.edit.remove_attribute(CONV, "pads"))
    assert "pads" not in [a.name for a in node(doc, CONV).attribute]


def test_an_attribute_the_operator_does_not_have_can_be_removed(doc: Document) -> None:
    """Such an attribute is a problem ('Change Operator' keeps them "until you remove them"); removing it
    was refused: "Relu has no attribute 'alpha' (allowed: none)"."""
    relu = next(n for n in doc.model.graph.node if n.op_type == "Relu")
    relu.attribute.append(helper.make_attribute("alpha", 0.5))
    doc = Document(doc.model)
    roundtrip(doc, lambda: doc.edit.remove_attribute(relu.name, "alpha"))
    assert not node(doc, relu.name).attribute


def test_tensor_attribute_from_array(tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Constant", [], ["c"], name="k",
                                                value=numpy_helper.from_array(np.zeros(2, np.float32)))],
                              "g", [], [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])])
    d = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    roundtrip(d, lambda: d.edit.set_attribute("k", "value", np.arange(3, dtype=np.float32)))
    assert numpy_helper.to_array(d.model.graph.node[0].attribute[0].t).tolist() == [0, 1, 2]


# -- nodes -----------------------------------------------------------------------------------
def test_rename_node_and_refuse_taken_name(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.rename_node(CONV, "stem_conv"))
    assert doc.edit.locate("stem_conv") == ("", 0)
    refused(doc, lambda: doc.edit.rename_node("stem_conv", "/res/Add"), "already exists")


def test_refusals_quote_names_escaped_and_cut(doc: Document) -> None:
    """A refusal is one sentence for a dialog: it quoted a 100,000-character name whole, and a name's line
    break or right-to-left override raw (the sentence read backwards after it)."""
    long, evil = "n" * 100_000, "a\u202eb\nc"
    doc.edit.rename_node(CONV, long)
    doc.edit.rename_node("/res/Add", evil)
    refused(doc, lambda: doc.edit.rename_node(evil, long), f"a node named '{'n' * 80}... (+99,920 characters)' already")
    refused(doc, lambda: doc.edit.rename_node(long, evil), "a node named 'a\\u202eb\\x0ac' already exists")
    refused(doc, lambda: doc.edit.set_attribute(long, "colour", 1), "Conv has no attribute 'colour'")
    with pytest.raises(EditError) as info:
        doc.edit.set_input(evil, 0, long)
    assert len(info.value.message) < 200 and "\u202e" not in info.value.message


def test_change_op_type_flags_attributes_the_new_schema_does_not_allow(doc: Document) -> None:
    relu = "/stem/relu/Relu"
    roundtrip(doc, lambda: doc.edit.set_op_type(relu, "Sigmoid"))
    assert node(doc, relu).op_type == "Sigmoid"
    doc.edit.set_op_type(CONV, "Relu")
    problems = [p for p in doc.check() if p.node_name == CONV]
    assert any("has no attribute 'strides'" in p.message for p in problems)
    refused(doc, lambda: doc.edit.set_op_type(relu, "NoSuchOp"), "no operator NoSuchOp")


def test_remove_node_plain_and_reconnected(doc: Document) -> None:
    relu = "/res/relu1/Relu"
    ids = list(doc.node_ids)
    roundtrip(doc, lambda: doc.edit.remove_node(relu, reconnect=True))
    assert relu not in [n.name for n in doc.model.graph.node]
    conv2 = node(doc, "/res/conv2/Conv")
    assert conv2.input[0] == "res.conv1"  # its consumer now reads the Relu's input
    assert doc.node_ids == ids[:5] + ids[6:]
    assert doc.check() == []
    doc.undo()
    roundtrip(doc, lambda: doc.edit.remove_node(relu))
    assert any("res.relu1" in p.message for p in doc.problems)


def test_reconnect_refused_when_shapes_differ(doc: Document) -> None:
    doc.check()
    refused(doc, lambda: doc.edit.remove_node("/stem/pool/MaxPool", reconnect=True), "input is")


def test_insert_node_after_its_inputs_and_on_an_edge(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.insert_node("Relu", ["stem.pool"], ["extra"], name="extra_relu"))
    names = [n.name for n in doc.model.graph.node]
    assert names.index("extra_relu") == names.index("/stem/pool/MaxPool") + 1
    refused(doc, lambda: doc.edit.insert_node("Relu", ["nothing"], ["y2"]), "input 'nothing' is not defined")
    refused(doc, lambda: doc.edit.insert_node("Relu", ["stem.pool"], ["extra"]), "already exists")
    refused(doc, lambda: doc.edit.insert_node("Relu", ["stem.pool"], ["z"], attributes={"alpha": 1.0}),
            "Relu has no attribute 'alpha'")
    before = [list(n.input) for n in doc.model.graph.node if "stem.pool" in n.input]
    roundtrip(doc, lambda: doc.edit.insert_on_value("stem.pool", "LeakyRelu", attributes={"alpha": 0.2}))
    assert all("stem.pool" not in n.input for n in doc.model.graph.node if n.op_type != "LeakyRelu")
    assert len(before) == sum("stem.pool_leakyrelu" in n.input for n in doc.model.graph.node)
    assert doc.check() == []


def test_stable_ids_for_unnamed_nodes(tmp_path: Path) -> None:
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["b"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    d = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    d.edit.insert_on_value("x", "Neg", name="")
    assert d.node_ids == ["#2", "#0", "#1"]
    d.edit.rename_node("#1", "second")
    assert d.model.graph.node[2].name == "second"
    d.undo()
    d.undo()
    assert d.node_ids == ["#0", "#1"]


def test_set_input_rewires_and_refuses_cycles(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.set_input("/res/Add", 1, "stem.pool"))
    assert list(node(doc, "/res/Add").input)[1] == "stem.pool"
    refused(doc, lambda: doc.edit.set_input(CONV, 0, "res.out"), "depend on itself")
    refused(doc, lambda: doc.edit.set_input(CONV, 0, "nothing"), "no value 'nothing'")


# -- values and graph inputs/outputs -------------------------------------------------------------
def test_rename_value_everywhere() -> None:
    then_g = helper.make_graph([helper.make_node("Relu", ["a"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Identity", ["a"], ["a_out"])], "else", [],
                               [helper.make_tensor_value_info("a_out", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
                                           helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])])
    d = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10))
    roundtrip(d, lambda: d.edit.rename_value("a", "b"))
    text = d.model.SerializeToString()
    assert b"\n\x01a" not in text  # no input/output/name field still says "a"
    assert d.model.graph.node[1].attribute[0].g.node[0].input[0] == "b"
    assert d.model.graph.output[1].name == "b"
    assert d.check() == []
    refused(d, lambda: d.edit.rename_value("b", "x"), "a value named 'x' already exists")
    assert d.undo_stack.undo_label() == "Rename value a -> b"


def test_graph_inputs_outputs_and_types(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.add_input("mask", "int64", ["batch", 4]))
    refused(doc, lambda: doc.edit.add_input("image"), "already exists")
    roundtrip(doc, lambda: doc.edit.remove_input("mask"))
    roundtrip(doc, lambda: doc.edit.add_output("stem.pool"))
    out = doc.model.graph.output[-1]
    assert out.name == "stem.pool" and out.type.tensor_type.elem_type == TensorProto.FLOAT
    refused(doc, lambda: doc.edit.add_output("stem.pool"), "already a graph output")
    roundtrip(doc, lambda: doc.edit.remove_output("stem.pool"))
    roundtrip(doc, lambda: doc.edit.set_value_type("image", shape=[1, 3, 32, 32]))  # fix the batch to 1
    dims = doc.model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_value == 1 and dims[3].dim_value == 32
    assert doc.check() == []
    roundtrip(doc, lambda: doc.edit.set_value_type("image", dtype="float16", shape=[None, 3, 32, 32]))
    assert doc.model.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT16
    assert not doc.model.graph.input[0].type.tensor_type.shape.dim[0].HasField("dim_value")
    refused(doc, lambda: doc.edit.set_value_type("image", dtype="complex1024"), "not an element type")


# -- weights -------------------------------------------------------------------------------------
def test_replace_initializer_and_mismatch_explained(doc: Document) -> None:
    w = doc.model.graph.initializer[0]
    old = numpy_helper.to_array(w)
    roundtrip(doc, lambda: doc.edit.replace_initializer(w.name, old + 1))
    assert np.array_equal(numpy_helper.to_array(doc.model.graph.initializer[0]), old + 1)
    refused(doc, lambda: doc.edit.replace_initializer(w.name, old.astype(np.float64)), "float")
    refused(doc, lambda: doc.edit.replace_initializer(w.name, old[:1]), "consumers expect")


def test_constant_and_initializer_convert_both_ways(doc: Document) -> None:
    name = doc.model.graph.initializer[0].name
    made: list[str] = []
    roundtrip(doc, lambda: made.append(doc.edit.initializer_to_constant(name)))
    assert doc.model.graph.node[0].op_type == "Constant"
    assert name not in [t.name for t in doc.model.graph.initializer]
    assert doc.check() == []
    roundtrip(doc, lambda: doc.edit.constant_to_initializer(made[-1]))
    assert doc.model.graph.initializer[-1].name == name
    refused(doc, lambda: doc.edit.constant_to_initializer(CONV), "not a Constant")


# -- model ---------------------------------------------------------------------------------------
def test_model_information_and_metadata(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.set_model_info(producer_name="me", producer_version="2", model_version=7,
                                              domain="org.example", doc_string="hello"))
    assert (doc.model.producer_name, doc.model.model_version) == ("me", 7)
    roundtrip(doc, lambda: doc.edit.set_metadata("licence", "MIT"))
    assert {p.key: p.value for p in doc.model.metadata_props}["licence"] == "MIT"
    roundtrip(doc, lambda: doc.edit.set_metadata("licence", "BSD"))
    roundtrip(doc, lambda: doc.edit.remove_metadata("licence"))
    refused(doc, lambda: doc.edit.remove_metadata("nothing"), "no metadata entry")
    roundtrip(doc, lambda: doc.edit.set_doc_string(CONV, "the stem"))
    refused(doc, lambda: doc.edit.set_model_info(model_version="x"), "whole number")


def test_convert_opset_is_one_step(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.convert_opset(17))
    assert [o.version for o in doc.model.opset_import if o.domain == ""] == [17]
    assert len(doc.undo_stack.commands) == 1
    refused(doc, lambda: doc.edit.convert_opset(999), "does not exist")


# -- clean-up --------------------------------------------------------------------------------------
def test_remove_unused_nodes_and_initializers(doc: Document) -> None:
    doc.edit.insert_node("Relu", ["stem.pool"], ["dead1"])
    doc.edit.insert_node("Neg", ["dead1"], ["dead2"])
    n = len(doc.model.graph.node)
    roundtrip(doc, lambda: doc.edit.remove_unused())
    assert len(doc.model.graph.node) == n - 2
    assert doc.edit.remove_unused() == (0, 0)


def test_sort_topologically(doc: Document) -> None:
    last = doc.model.graph.node[-1].name
    doc.edit.insert_node("Relu", ["probabilities"], ["after"], name="tail")
    first = doc.edit.locate("tail")[1]
    from onnxviz.model.editing.commands import Command
    from onnxviz.model.editing.ops import Reorder

    n = len(doc.model.graph.node)
    order = [first] + [i for i in range(n) if i != first]
    doc.execute(Command("shuffle", [Reorder(("graph", "node"), order)]))
    assert doc.index.main.unsorted
    roundtrip(doc, lambda: doc.edit.sort_topologically())
    assert not doc.index.main.unsorted
    assert doc.model.graph.node[-1].name == "tail" and doc.model.graph.node[-2].name == last


def test_extract_subgraph(doc: Document) -> None:
    part = doc.edit.extract(["stem.pool"], ["res.out"])
    assert [i.name for i in part.graph.input] == ["stem.pool"]
    onnx.checker.check_model(part)
    assert not doc.is_dirty
    with pytest.raises(EditError):
        doc.edit.extract(["stem.pool"], ["nothing"])


def test_selection_follows_the_selected_node_through_edits(doc: Document) -> None:
    doc.selection.select_node("", 5)  # /res/relu1/Relu
    doc.edit.insert_node("Relu", ["image"], ["early"], position=0)
    assert doc.selection.state.node == 6
    doc.undo()
    assert doc.selection.state.node == 5
    doc.edit.remove_node(5)
    assert doc.selection.state.is_empty


def test_edits_inside_a_subgraph() -> None:
    body = helper.make_graph([helper.make_node("LeakyRelu", ["a"], ["t"], name="inner", alpha=0.1)], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    other = helper.make_graph([helper.make_node("Identity", ["a"], ["e"], name="inner2")], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("If", ["c"], ["y"], name="if", then_branch=body, else_branch=other)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
                                           helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    d = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10))
    assert d.edit.locate("inner") == ("1.then_branch", 0)
    roundtrip(d, lambda: d.edit.set_attribute("inner", "alpha", 0.5))
    then_graph = next(a.g for a in d.model.graph.node[1].attribute if a.name == "then_branch")
    assert then_graph.node[0].attribute[0].f == 0.5
    roundtrip(d, lambda: d.edit.insert_on_value("a", "Neg", scope="1.then_branch"))
    then_graph = next(a.g for a in d.model.graph.node[1].attribute if a.name == "then_branch")
    assert [n.op_type for n in then_graph.node] == ["Neg", "LeakyRelu"]
    assert d.check() == []
    refused(d, lambda: d.edit.set_attribute(("9.body", 0), "alpha", 1.0), "no subgraph")


def test_insert_after_the_node_making_a_graph_output(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.insert_on_value("probabilities", "Identity", name="tail"))
    tail = node(doc, "tail")
    assert list(tail.output) == ["probabilities"]
    assert node(doc, "/head/Softmax").output[0] == tail.input[0] == "probabilities_before_identity"
    assert [o.name for o in doc.model.graph.output] == ["probabilities"]
    assert doc.check() == []


# -- deleting a branch ------------------------------------------------------------------------
def test_delete_node_with_what_only_feeds_it(doc: Document) -> None:
    ids = list(doc.node_ids)
    preview = doc.edit.node_branch("/res/conv2/Conv", "inputs")
    assert preview.labels == ("/res/conv1/Conv", "/res/relu1/Relu", "/res/conv2/Conv")
    assert preview.initializers == ("res.conv1.weight", "res.conv1.bias", "res.conv2.weight", "res.conv2.bias")
    roundtrip(doc, lambda: doc.edit.remove_node_with_inputs("/res/conv2/Conv"))
    names = [n.name for n in doc.model.graph.node]
    assert "/res/conv1/Conv" not in names and "/stem/pool/MaxPool" in names  # the pool also feeds the Add
    assert not {"res.conv1.weight", "res.conv2.bias"} & {t.name for t in doc.model.graph.initializer}
    assert doc.node_ids == ids[:4] + ids[7:]
    assert doc.undo_stack.undo_label() == "Delete /res/conv2/Conv and 2 nodes feeding only it"
    doc.undo()
    assert doc.node_ids == ids


def test_delete_with_inputs_takes_a_diamond_but_not_a_shared_or_output_node() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="A"), helper.make_node("Neg", ["a"], ["b"], name="B"),
             helper.make_node("Abs", ["a"], ["c"], name="C"), helper.make_node("Add", ["b", "c"], ["d"], name="D"),
             helper.make_node("Relu", ["x"], ["e"], name="E"), helper.make_node("Add", ["d", "e"], ["y"], name="F")]
    value = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = helper.make_graph(nodes, "g", [value], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                                                    helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    doc = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert doc.edit.node_branch("D", "inputs").labels == ("A", "B", "C", "D")
    assert doc.edit.node_branch("F", "inputs").labels == ("A", "B", "C", "D", "F")  # E makes a graph output
    assert doc.edit.node_branch("B", "inputs").labels == ("B",)  # A also feeds C
    assert doc.edit.node_branch("A", "outputs").labels == ("A", "B", "C", "D")  # F also reads E
    roundtrip(doc, lambda: doc.edit.remove_node_with_outputs("A"))
    assert [n.name for n in doc.model.graph.node] == ["E", "F"]
    assert doc.undo_stack.undo_label() == "Delete A and 3 nodes only it feeds"


def test_delete_node_with_what_only_it_feeds(doc: Document) -> None:
    branch = doc.edit.node_branch("/head/fc/Gemm", "outputs")
    assert branch.labels == ("/head/fc/Gemm", "/head/Softmax") and branch.others == 1
    assert branch.outputs == ("probabilities",) and doc.edit.node_branch("/res/conv2/Conv", "inputs").outputs == ()
    roundtrip(doc, lambda: doc.edit.remove_node_with_outputs("/head/fc/Gemm"))
    assert [n.name for n in doc.model.graph.node][-1] == "/head/ReduceMean"
    assert {"head.fc.weight", "head.fc.bias"}.isdisjoint(t.name for t in doc.model.graph.initializer)
    refused(doc, lambda: doc.edit.remove_node_with_inputs("no such node"), "there is no node")


def test_insert_on_a_value_with_more_inputs_and_attributes(doc: Document) -> None:
    refused(doc, lambda: doc.edit.insert_on_value("stem.conv", "Add", extra_inputs=["stem.relu"]),
            "the new node would read 'stem.relu', which is made from its own output: that would be a cycle")
    refused(doc, lambda: doc.edit.insert_on_value("stem.conv", "Add", extra_inputs=["nothing"]), "'nothing' is not defined")
    roundtrip(doc, lambda: doc.edit.insert_on_value("stem.relu", "Add", extra_inputs=["stem.bn"]))
    add = doc.model.graph.node[3]
    assert list(add.input) == ["stem.relu", "stem.bn"] and doc.check() == []
    doc.undo()
    roundtrip(doc, lambda: doc.edit.insert_on_value("stem.pool", "Concat", {"axis": 1}, consumers=["/res/Add"],
                                               extra_inputs=["res.relu1"]))
    names = [n.name for n in doc.model.graph.node]
    assert names.index("Concat_0") == names.index("/res/relu1/Relu") + 1  # after the maker of its second input
    assert node(doc, "/res/Add").input[0] == "stem.pool_concat" and node(doc, "Concat_0").attribute[0].i == 1


# -- numbers as stored ----------------------------------------------------------------------
def test_float_attributes_read_as_the_shortest_text_of_their_float32() -> None:
    from onnxviz.model.editing.values import attribute_text, parse_attribute_text
    from onnxviz.model.graph import opdocs

    alpha = helper.make_attribute("alpha", 0.2)
    assert alpha.f != 0.2  # stored as float32: 0.20000000298023224 as a Python float
    assert attribute_text(alpha) == opdocs.attribute_text(alpha) == "0.2"
    precise = helper.make_attribute("epsilon", 0.12345679)
    assert attribute_text(precise) == opdocs.attribute_text(precise) == "0.12345679"  # the panel showed 0.123457
    scales = helper.make_attribute("scales", [0.1, 1e-7, 3.0])
    assert attribute_text(scales) == "0.1, 1e-07, 3.0" and opdocs.attribute_text(scales) == "[0.1, 1e-07, 3.0]"
    again = helper.make_attribute("scales", parse_attribute_text(attribute_text(scales), scales.type))
    assert again.SerializeToString() == scales.SerializeToString()  # the text reads back to the same bytes
    small = numpy_helper.from_array(np.array([0.2, 0.7], np.float32))
    assert opdocs.tensor_brief(small) == "float32[2] = [0.2, 0.7]"


def test_replace_initializer_cast_to_its_dtype(doc: Document) -> None:
    name = doc.model.graph.initializer[0].name
    old = numpy_helper.to_array(doc.model.graph.initializer[0])
    refused(doc, lambda: doc.edit.replace_initializer(name, old.astype(np.float64)), "consumers expect")
    roundtrip(doc, lambda: doc.edit.replace_initializer(name, old.astype(np.float64) * 2, cast=True))
    new = numpy_helper.to_array(doc.model.graph.initializer[0])
    assert new.dtype == np.float32 and np.array_equal(new, old * 2)
    refused(doc, lambda: doc.edit.replace_initializer("head.axes", np.array([1.5]), cast=True), "1 value does not fit in int64")


def test_constants_feeding_a_node_become_initializers_in_one_step() -> None:
    consts = [helper.make_node("Constant", [], [n], name=f"{n}_c", value=numpy_helper.from_array(np.array(v)))
              for n, v in (("lo", np.float32(0)), ("hi", np.float32(6)))]
    clip = helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")
    value = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = helper.make_graph([*consts, clip], "g", [value], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    doc = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10))
    assert doc.edit.constant_feeders("clip") == [("", 0), ("", 1)]
    roundtrip(doc, lambda: doc.edit.constants_to_initializers(doc.edit.constant_feeders("clip")))
    assert [n.name for n in doc.model.graph.node] == ["clip"] and doc.check() == []
    assert [t.name for t in doc.model.graph.initializer] == ["lo", "hi"]
    assert doc.undo_stack.undo_label() == "Make 2 Constants initializers"
    refused(doc, lambda: doc.edit.constants_to_initializers(["clip"]), "is not a Constant node")


def test_a_model_without_graph_outputs_is_warned_about(doc: Document) -> None:
    assert doc.check() == []
    doc.edit.remove_output("probabilities")
    assert [(p.severity.value, p.message) for p in doc.check()] == [
        ("warning", "the model has no graph outputs, so running it gives nothing; mark a value as a graph output")]


@pytest.mark.parametrize("text", ["", "abc", "[1, 'a']", "[[1, 2], [3]]", "__import__('os')", "[" * 300 + "]" * 300,
                                  "9" * 5000, "[" + "1, " * 70_000 + "1]", "{1: 2}", "1 + 2"])
def test_typed_tensors_refuse_anything_but_numbers_in_one_sentence(text: str) -> None:
    from onnxviz.model.editing.values import parse_tensor_text

    with pytest.raises(EditError) as info:
        parse_tensor_text(text)
    assert "\n" not in info.value.message and len(info.value.message) < 300


def test_typed_tensors_keep_or_take_a_dtype() -> None:
    from onnxviz.model.editing.values import parse_tensor_text

    assert parse_tensor_text("[1, 2]").dtype == np.int64 and parse_tensor_text("0.5").dtype == np.float32
    assert parse_tensor_text("[[1, 2], [3, 4]]").shape == (2, 2)
    assert parse_tensor_text("[True, False]", np.bool_).tolist() == [True, False]
    assert parse_tensor_text("[1, 2]", np.float16).dtype == np.float16
    with pytest.raises(EditError, match="1 value does not fit in uint8"):
        parse_tensor_text("[300]", np.uint8)


def test_palette_knows_the_values_an_attribute_may_take() -> None:
    from onnxviz.model.editing.palette import palette

    attrs = {(e.name, a.name): a for e in palette() for a in e.attributes}
    assert attrs[("Cast", "to")].choices[:4] == ("float32", "float16", "bfloat16", "float64")  # common ones first,
    assert "float8e4m3fn" in attrs[("Cast", "to")].choices  # named as the window names types everywhere
    assert attrs[("RandomNormal", "dtype")].choices == ("float32", "float16", "bfloat16", "float64")
    assert attrs[("DequantizeLinear", "output_dtype")].choices[:2] == ("undefined", "float32")  # 0: as its scale
    assert attrs[("BitShift", "direction")].choices == ("RIGHT", "LEFT")
    assert attrs[("Einsum", "equation")].choices == () and attrs[("Concat", "axis")].choices == ()


def test_delete_a_branch_inside_a_local_function() -> None:
    body = [helper.make_node("Constant", [], ["two"], name="two", value_float=2.0),
            helper.make_node("CastLike", ["two", "x"], ["a"], name="castlike"),
            helper.make_node("Mul", ["x", "a"], ["y"], name="mul")]
    fn = helper.make_function("local", "Double", ["x"], ["y"], body, [helper.make_opsetid("", 17)])
    call = helper.make_node("Double", ["X"], ["Y"], domain="local", name="call")
    graph = helper.make_graph([call], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    doc = Document(helper.make_model(graph, functions=[fn], opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]))
    scope = "fn:local:Double:"
    branch = doc.edit.node_branch((scope, 2), "inputs")
    assert branch.labels == ("two", "castlike", "mul") and branch.outputs == ("y",) and branch.initializers == ()
    roundtrip(doc, lambda: doc.edit.remove_node_with_inputs((scope, 2)))
    assert len(doc.model.functions[0].node) == 0 and len(doc.model.graph.node) == 1


def test_an_operator_without_inputs_cannot_go_on_an_edge(doc: Document) -> None:
    refused(doc, lambda: doc.edit.insert_on_value("stem.relu", "Constant"), "Constant takes no input, so it cannot go on")
    refused(doc, lambda: doc.edit.insert_on_value("stem.relu", "Relu", extra_inputs=["stem.bn"]),
            "Relu takes at most 1 input, so it cannot go on an edge with 2.")


def test_the_edits_are_the_editors_alone(doc: Document) -> None:
    """The edits are spelled ``doc.edit.<method>``: the document forwards none of them (the forwarder of the
    older spelling ``doc.rename_node(...)`` is gone, issue 36) and its own methods are not the editor's."""
    roundtrip(doc, lambda: doc.edit.rename_node(CONV, "stem_conv"))
    assert doc.undo_stack.undo_label() == f"Rename node {CONV} -> stem_conv"
    for missing in ("rename_node", "set_attribute", "node_label", "no_such_edit"):
        with pytest.raises(AttributeError, match=missing):
            getattr(doc, missing)


def test_an_edit_that_changes_nothing_records_no_command(doc: Document) -> None:
    doc.edit.rename_node(CONV, CONV)
    doc.edit.set_metadata("k", "v")
    doc.edit.set_metadata("k", "v")
    doc.edit.convert_opset(next(o.version for o in doc.model.opset_import if o.domain in ("", "ai.onnx")))
    assert [c.label for c in doc.undo_stack.commands] == ["Add metadata k"]
