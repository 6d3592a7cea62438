"""Edits that leave no problem they could have resolved, from Python: numbers as inputs, new constants and
initializers, dimensions made dynamic or static with everything that shares them, declared types that follow
a type change, stale value_info dropped, cycles and lossy casts refused, values chosen among those accepted, and
a value typed again as it was is no edit. Each edit is one undo step that gives back the exact bytes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from edit_models import classifier
from onnx import TensorProto, numpy_helper

import onnxviz
from onnxviz.model import document as document_module
from onnxviz.model.document import Document
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import topological_order


@pytest.fixture(autouse=True)
def paranoid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Failing edits must leave the model byte-identical (Document.execute asserts it)."""
    monkeypatch.setattr(document_module, "_PARANOID", True)


@pytest.fixture
def doc(example_path: Path) -> Document:
    return onnxviz.open(example_path)


def roundtrip(doc: Document, edit: Callable[[], object]) -> None:
    """``edit`` changes the model as one step: undo gives back the exact bytes, redo the edited ones."""
    before, steps = doc.model.SerializeToString(), doc.undo_stack.index
    edit()
    after = doc.model.SerializeToString()
    assert after != before and doc.undo_stack.index == steps + 1
    doc.undo()
    assert doc.model.SerializeToString() == before
    doc.redo()
    assert doc.model.SerializeToString() == after


def refused(doc: Document, edit: Callable[[], object], phrase: str) -> str:
    before = doc.model.SerializeToString()
    with pytest.raises(EditError) as info:
        edit()
    message = info.value.message
    assert phrase in message, message
    assert "\n" not in message and doc.model.SerializeToString() == before
    return message


def node(doc: Document, name: str) -> onnx.NodeProto:
    return next(n for n in doc.model.graph.node if n.name == name)


def declared(doc: Document, name: str) -> onnx.TypeProto:
    g = doc.model.graph
    return next(v.type for v in [*g.input, *g.output, *g.value_info] if v.name == name)


def dims(t: onnx.TypeProto) -> list[int | str]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.tensor_type.shape.dim]


def run_shapes(path: Path, batch: int) -> dict[str, tuple[int, ...]]:
    """Every value's shape in a run of ``path`` with a batch of ``batch`` (all values made graph outputs)."""
    model = onnx.load(path)
    for info in model.graph.value_info:
        model.graph.output.append(info)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.zeros((batch, 3, 8, 8), np.float32)
    names = [o.name for o in session.get_outputs()]
    return {n: v.shape for n, v in zip(names, session.run(None, {"x": x}), strict=True)}


# -- dimensions made dynamic or static, and what shares them (issues 29.6, 32) --------------------------------------
def test_a_batch_made_dynamic_is_carried_to_every_output_and_value_info(tmp_path: Path) -> None:
    doc = onnxviz.open(classifier(tmp_path / "c.onnx"))
    roundtrip(doc, lambda: doc.edit.set_dimension("x", 0, "N"))
    assert doc.undo_stack.undo_label() == "Make dimension 0 of x dynamic (N)"
    assert dims(declared(doc, "x")) == ["N", 3, 8, 8] and dims(declared(doc, "probs")) == ["N", 5]
    assert {v.name: dims(v.type)[0] for v in doc.model.graph.value_info} == {
        "c": "N", "r": "N", "f": "N", "logits": "N"}
    assert doc.check() == []
    doc.save(tmp_path / "dynamic.onnx")
    onnx.checker.check_model(str(tmp_path / "dynamic.onnx"), full_check=True)
    shapes = run_shapes(tmp_path / "dynamic.onnx", 2)  # each declared shape holds for a batch of 2
    saved = onnx.load(tmp_path / "dynamic.onnx").graph
    for info in [*saved.value_info, *saved.output]:
        assert tuple(2 if d == "N" else d for d in dims(info.type)) == shapes[info.name]


def test_a_named_dimension_made_static_goes_everywhere_it_is_named(tmp_path: Path) -> None:
    doc = onnxviz.open(classifier(tmp_path / "c.onnx"))
    doc.edit.set_dimension("x", 0, "N")
    doc.edit.add_input("mask", "int64", ["N", 4])  # another input sharing the name
    roundtrip(doc, lambda: doc.edit.set_dimension("x", 0, 3))
    assert doc.undo_stack.undo_label() == "Make dimension 0 of x static (3)"
    assert dims(declared(doc, "mask")) == [3, 4] and dims(declared(doc, "probs")) == [3, 5]
    assert {dims(v.type)[0] for v in doc.model.graph.value_info} == {3}


def test_set_value_type_of_an_input_restates_what_follows(tmp_path: Path) -> None:
    """Before, a dynamic batch needed a second call for the output, and value_info stayed at batch 1."""
    doc = onnxviz.open(classifier(tmp_path / "c.onnx"))
    roundtrip(doc, lambda: doc.edit.set_value_type("x", shape=["batch", 3, 8, 8]))
    assert dims(declared(doc, "probs")) == ["batch", 5] and dims(declared(doc, "f")) == ["batch", 144]
    doc.undo()
    roundtrip(doc, lambda: doc.edit.set_value_type("x", dtype="float16"))
    assert declared(doc, "probs").tensor_type.elem_type == TensorProto.FLOAT16  # MatMul's weight stays float:
    assert [p.message for p in doc.check() if "inconsistent" in p.message]  # that error is real, and shown


def test_dimensions_are_whole_numbers_names_or_unknown(doc: Document) -> None:
    refused(doc, lambda: doc.edit.set_value_type("image", shape=[1.5, 3, 32, 32]),
            "dimension 1.5 is not a whole number, a name (such as 'batch') or None (unknown).")
    refused(doc, lambda: doc.edit.set_dimension("image", 7, 1), "'image' has 4 dimensions; there is no dimension 7.")
    refused(doc, lambda: doc.edit.set_dimension("probabilities", 0, 1), "there is no graph input named")
    roundtrip(doc, lambda: doc.edit.set_value_type("image", shape=[np.int64(2), 3, 32, 32]))


def test_a_removed_node_takes_its_value_info_along(tmp_path: Path) -> None:
    doc = onnxviz.open(classifier(tmp_path / "c.onnx"))
    roundtrip(doc, lambda: doc.edit.remove_node("relu", reconnect=True))
    assert "r" not in {v.name for v in doc.model.graph.value_info} and doc.check() == []
    doc.undo()
    roundtrip(doc, lambda: doc.edit.remove_node_with_outputs("flatten"))
    assert {v.name for v in doc.model.graph.value_info} == {"c", "r"}
    doc.undo()
    doc.edit.remove_output("probs")
    roundtrip(doc, lambda: doc.edit.remove_unused())
    assert doc.model.graph.value_info == [] or {v.name for v in doc.model.graph.value_info} <= {"c", "r", "f"}


# -- declared types follow a type change (issue 32.2) -------------------------------------------------------------
def test_cast_to_another_type_restates_the_graph_output(doc: Document) -> None:
    doc.edit.insert_on_value("probabilities", "Cast", {"to": TensorProto.FLOAT16}, name="cast")
    assert declared(doc, "probabilities").tensor_type.elem_type == TensorProto.FLOAT16 and doc.check() == []
    roundtrip(doc, lambda: doc.edit.set_attribute("cast", "to", TensorProto.DOUBLE))
    assert declared(doc, "probabilities").tensor_type.elem_type == TensorProto.DOUBLE and doc.check() == []
    assert doc.undo_stack.undo_label() == "Set cast.to"


def test_cast_in_the_middle_restates_the_value_info_after_it(tmp_path: Path) -> None:
    doc = onnxviz.open(classifier(tmp_path / "c.onnx"))
    doc.edit.insert_node("Cast", ["r"], ["r16"], {"to": TensorProto.FLOAT}, name="cast")
    doc.edit.set_input("flatten", 0, "r16")
    doc.edit.set_value_type("r16", dtype="float32")  # declared, as an exporter would
    roundtrip(doc, lambda: doc.edit.set_attribute("cast", "to", TensorProto.FLOAT16))
    assert declared(doc, "r16").tensor_type.elem_type == TensorProto.FLOAT16
    assert declared(doc, "f").tensor_type.elem_type == TensorProto.FLOAT16  # after the Flatten too


# -- numbers where an input is expected (issue 32.1) ------------------------------------------------------------
def test_a_number_as_the_second_input_becomes_an_initializer_of_the_inputs_type(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.insert_on_value("stem.relu", "Mul", extra_inputs=[2.0], name="mul"))
    mul = node(doc, "mul")
    assert list(mul.input) == ["stem.relu", "mul_B"]
    weight = doc.edit.initializer_proto("mul_B")
    assert weight.data_type == TensorProto.FLOAT and numpy_helper.to_array(weight).tolist() == 2.0
    assert doc.check() == []


def test_a_list_becomes_a_constant_when_asked_and_takes_the_ports_only_type(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.insert_on_value("attn.tokens", "Reshape", extra_inputs=[[0, 0, -1]],
                                                    name="flat", literals="constant"))
    names = [n.name for n in doc.model.graph.node]
    assert names.index("flat_shape_Constant") == names.index("flat") - 1  # just before the node reading it
    constant = node(doc, "flat_shape_Constant")
    value = numpy_helper.to_array(constant.attribute[0].t)
    assert value.dtype == np.int64 and value.tolist() == [0, 0, -1] and doc.check() == []


def test_a_number_typed_as_the_other_input_of_its_type_parameter(doc: Document) -> None:
    doc.edit.insert_on_value("stem.relu", "Cast", {"to": TensorProto.FLOAT16}, name="half")
    roundtrip(doc, lambda: doc.edit.insert_on_value("stem.relu_cast", "Add", extra_inputs=[np.float64(0.5)]))
    added = doc.model.graph.initializer[-1]
    assert added.data_type == TensorProto.FLOAT16


def test_set_input_to_numbers_and_lossy_numbers_refused(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.set_input("/attn/Mul", 1, np.array([0.25])))
    assert node(doc, "/attn/Mul").input[1] == "/attn/Mul_B" and doc.undo_stack.undo_label() == (
        "Connect /attn/Mul input 1 to new initializer /attn/Mul_B")
    refused(doc, lambda: doc.edit.set_input("/attn/Reshape", 1, [1.5, 2]),
            "1 value does not fit in int64 (fractions, NaN or numbers out of its range): 1.5 at index 0.")
    refused(doc, lambda: doc.edit.set_input("/attn/Reshape", 1, "not numbers"), "there is no value 'not numbers'")


def test_new_initializer_and_constant_feeding_a_node_in_one_step(doc: Document) -> None:
    roundtrip(doc, lambda: doc.edit.add_initializer("half", 0.5, "float16"))
    assert doc.edit.initializer_proto("half").data_type == TensorProto.FLOAT16
    doc.undo()
    roundtrip(doc, lambda: doc.edit.insert_constant("scale2", [0.125], "float32", feed=("/attn/Mul", 1)))
    names = [n.name for n in doc.model.graph.node]
    assert names.index("scale2_Constant") == names.index("/attn/Mul") - 1
    assert node(doc, "/attn/Mul").input[1] == "scale2" and doc.check() == []
    assert doc.undo_stack.undo_label() == "New Constant scale2 into /attn/Mul"
    refused(doc, lambda: doc.edit.add_initializer("scale2", 1.0), "already exists")
    refused(doc, lambda: doc.edit.add_initializer("big", 1e300, "float32"), "finite numbers that would become inf")


# -- cycles refused, whatever edit makes them (issue 29.3) --------------------------------------------------------------
def test_insert_on_a_graph_output_reading_that_output_is_refused(doc: Document) -> None:
    refused(doc, lambda: doc.edit.insert_on_value("probabilities", "Mul", extra_inputs=["probabilities"]),
            "the new node would read 'probabilities', which is made from its own output: that would be a cycle")
    refused(doc, lambda: doc.edit.insert_on_value("logits", "Add", extra_inputs=["probabilities"]), "cycle")
    refused(doc, lambda: doc.edit.set_input("/stem/conv/Conv", 0, "res.out"), "depend on itself (a cycle)")
    refused(doc, lambda: doc.edit.insert_on_value("stem.pool", "Add", consumers=["/res/conv1/Conv"],
                                                  extra_inputs=["res.add"]), "cycle")


def test_no_sequence_of_edits_makes_a_cycle(doc: Document) -> None:
    """Every edit that rewires, tried with every value as the other input: the graph stays acyclic."""
    values = sorted(v for v in doc.index.main.producer if v)
    for value in values:
        for make in (lambda v: doc.edit.insert_on_value("probabilities", "Add", extra_inputs=[v]),
                     lambda v: doc.edit.insert_on_value("res.add", "Add", extra_inputs=[v]),
                     lambda v: doc.edit.set_input("/res/conv1/Conv", 0, v)):
            try:
                make(value)
            except EditError:
                continue
            g = doc.model.graph
            producer = {x: i for i, n in enumerate(g.node) for x in n.output}
            assert topological_order(list(g.node), producer)[1] == [], value
            doc.undo()


# -- casts that would change values (issue 29.5) ---------------------------------------------------------------------
def test_a_cast_that_overflows_or_rounds_is_refused_with_the_count_and_first_value(doc: Document) -> None:
    bias = numpy_helper.to_array(doc.edit.initializer_proto("stem.conv.bias")).astype(np.float64)
    bias[[3, 7]] = [1e300, -1e300]
    refused(doc, lambda: doc.edit.replace_initializer("stem.conv.bias", bias, cast=True),
            "2 values do not fit in float32 (finite numbers that would become inf or NaN); the first is 1e+300 at "
            "index 3.")
    ids = np.array([[1, 2], [3, 2**53 + 1]], np.int64)
    with pytest.raises(EditError, match=r"1 value does not fit in float64 \(integers it cannot hold exactly\): "
                                        r"9007199254740993 at \[1, 1\]\."):
        from onnxviz.model.editing.values import cast_array
        cast_array(ids, np.dtype(np.float64))
    refused(doc, lambda: doc.edit.replace_initializer("head.axes", np.array([1.5]), cast=True),
            "1 value does not fit in int64")
    nan = numpy_helper.to_array(doc.edit.initializer_proto("stem.conv.bias")).astype(np.float64)
    nan[0] = np.nan  # NaN stays NaN, inf stays inf: no value changes
    roundtrip(doc, lambda: doc.edit.replace_initializer("stem.conv.bias", nan, cast=True))


# -- values chosen among those accepted (issue 32.4) -----------------------------------------------------------------------
def test_enum_and_element_type_attributes_take_only_accepted_values(doc: Document) -> None:
    refused(doc, lambda: doc.edit.set_attribute("/stem/conv/Conv", "auto_pad", "BACKWARD"),
            "Conv takes NOTSET, SAME_UPPER, SAME_LOWER or VALID as 'auto_pad', not 'BACKWARD'.")
    refused(doc, lambda: doc.edit.add_attribute("/stem/conv/Conv", "auto_pad", "same_upper"), "not 'same_upper'")
    refused(doc, lambda: doc.edit.insert_on_value("stem.relu", "Cast", {"to": 999}), "as 'to', not 'unknown(999)'")
    refused(doc, lambda: doc.edit.insert_on_value("stem.relu", "RandomNormalLike", {"dtype": TensorProto.INT64}),
            "RandomNormalLike takes float32, float16 or float64 as 'dtype', not 'int64'.")
    roundtrip(doc, lambda: doc.edit.set_attribute("/stem/conv/Conv", "auto_pad", "SAME_UPPER"))


# -- a value typed again as it was is no edit (issue 32.6) ---------------------------------------------------------------
@pytest.mark.parametrize("edit", [
    lambda d: d.edit.set_doc_string("/stem/conv/Conv", d.edit.node_proto("", 0).doc_string),
    lambda d: d.edit.set_input("/res/Add", 0, "stem.pool"),
    lambda d: d.edit.set_op_type("/stem/relu/Relu", "Relu"),
    lambda d: d.edit.replace_initializer("head.axes", numpy_helper.to_array(d.edit.initializer_proto("head.axes"))),
    lambda d: d.edit.set_value_type("image", shape=["batch", 3, 32, 32]),
    lambda d: d.edit.set_attribute("/head/Softmax", "axis", 1),
    lambda d: d.edit.set_model_info(producer_name=d.model.producer_name),
    lambda d: d.edit.rename_node("/stem/conv/Conv", "/stem/conv/Conv"),
])
def test_a_value_entered_again_unchanged_is_no_edit(doc: Document, edit: Callable[[Document], object]) -> None:
    doc.edit.set_doc_string("/stem/conv/Conv", "described")  # a field that is set, so setting it again is no edit
    doc.edit.set_attribute("/head/Softmax", "axis", 1)
    before, steps = doc.model.SerializeToString(), doc.undo_stack.index
    edit(doc)
    assert doc.model.SerializeToString() == before and doc.undo_stack.index == steps


# -- outputs a deletion orphans (issue 32.3) ---------------------------------------------------------------------------
def test_delete_with_children_removes_or_repoints_the_outputs_it_orphans(doc: Document) -> None:
    branch = doc.edit.node_branch("/head/fc/Gemm", "outputs")
    assert branch.outputs == ("probabilities",) and branch.repoint == "head.pool"
    roundtrip(doc, lambda: doc.edit.remove_node_with_outputs("/head/fc/Gemm", orphans="repoint"))
    assert [(o.name, dims(o.type)) for o in doc.model.graph.output] == [("head.pool", ["batch", 16])]
    assert doc.check() == []
    doc.undo()
    roundtrip(doc, lambda: doc.edit.remove_node_with_outputs("/head/fc/Gemm", orphans="remove"))
    assert list(doc.model.graph.output) == []
    doc.undo()
    roundtrip(doc, lambda: doc.edit.remove_node_with_outputs("/head/fc/Gemm"))  # kept: the problem shows it
    assert [o.name for o in doc.model.graph.output] == ["probabilities"]
    assert any("probabilities" in p.message for p in doc.check())
    doc.undo()
    assert doc.edit.node_branch("/head/Softmax", "inputs").repoint == ""  # nothing fed a branch above it
    refused(doc, lambda: doc.edit.remove_node_with_inputs("/head/Softmax", orphans="repoint"),
            "no value can take the place of the outputs")


def test_weights_of_another_shape_or_an_operator_changed_restate_what_follows(tmp_path: Path) -> None:
    doc = onnxviz.open(classifier(tmp_path / "c.onnx"))
    wider = np.zeros((8, 3, 3, 3), np.float32)
    roundtrip(doc, lambda: doc.edit.replace_initializer("conv.w", wider, force=True))
    assert dims(declared(doc, "c")) == [1, 8, 6, 6] and dims(declared(doc, "r")) == [1, 8, 6, 6]
    assert dims(declared(doc, "f")) == [1, 288]  # and the MatMul after it is an error, shown as one
    doc.undo()
    roundtrip(doc, lambda: doc.edit.set_op_type("relu", "Shape"))
    assert declared(doc, "r").tensor_type.elem_type == TensorProto.INT64 and dims(declared(doc, "r")) == [4]
