"""The index's model checks: each flags what it should, on the right node, and nothing on sound models."""

from __future__ import annotations

import hostile
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper, parser

from onnxviz.model.graph.checks import newest_opset, tensor_problem
from onnxviz.model.graph.index import ModelIndex


def _messages(model: onnx.ModelProto) -> list[str]:
    return [p.message for p in ModelIndex(model).problems]


def test_sound_models_have_no_problems(example_path) -> None:  # type: ignore[no-untyped-def]
    assert _messages(onnx.load(example_path)) == []
    for seed in hostile.seed_models():
        assert _messages(seed) == []


def test_function_attribute_references_are_fine_inside_functions() -> None:
    model = parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 18, "local" : 1]>
        g (float[3] x) => (float[3] y) { y = local.Soft <ax = 0> (x) }
        <domain: "local", opset_import: ["" : 18]>
        Soft <ax> (a) => (b) { b = Softmax <axis: int = @ax> (a) }""")
    assert _messages(model) == []


def test_custom_domains_with_an_import_and_local_functions_are_not_unknown() -> None:
    model = hostile.model_of([helper.make_node("FusedThing", ["x"], ["y"], domain="com.microsoft")])
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    assert _messages(model) == []


def test_operator_missing_from_the_imported_opset_names_the_opset() -> None:
    model = hostile.model_of([helper.make_node("Gelu", ["x"], ["y"], name="g")], opset=13)  # Gelu is opset 20
    [problem] = ModelIndex(model).problems
    assert problem.node == 0 and problem.node_name == "g"
    assert problem.message == "g: operator Gelu does not exist in opset ai.onnx 13"


def test_unknown_attribute_is_a_warning_on_its_node() -> None:
    node = helper.make_node("Relu", ["x"], ["y"], name="r", alpha=1.0)
    [problem] = ModelIndex(hostile.model_of([node])).problems
    assert problem.severity == "warning" and problem.node_name == "r" and "no attribute 'alpha'" in problem.message


def test_attribute_without_type_and_graph_attribute_of_wrong_kind() -> None:
    node = helper.make_node("Softmax", ["x"], ["y"], name="s")
    node.attribute.add(name="axis")  # type UNDEFINED
    assert _messages(hostile.model_of([node])) == ["s: attribute 'axis' has no type"]
    node = helper.make_node("Softmax", ["x"], ["y"], name="s")
    node.attribute.append(helper.make_attribute("axis", [1, 2]))
    assert _messages(hostile.model_of([node])) == ["s: attribute 'axis' is INTS, but Softmax expects INT"]


def test_problems_in_subgraphs_carry_their_scope() -> None:
    body = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["o"], name="inner")], "b", [], [hostile.vi("o")])
    model = hostile.model_of([helper.make_node("If", ["c"], ["y"], name="cond", then_branch=body,
                                               else_branch=body)], inputs=["x", "c"])
    problems = ModelIndex(model).problems
    assert {(p.scope, p.node_name) for p in problems} == {("0.then_branch", "inner"), ("0.else_branch", "inner")}


@pytest.mark.parametrize("make, expected", [
    (lambda: helper.make_tensor("t", TensorProto.FLOAT, [2, 2], [1.0] * 4), ""),
    (lambda: helper.make_tensor("t", TensorProto.FLOAT, [2, 2], b"\x00" * 16, raw=True), ""),
    (lambda: helper.make_tensor("t", TensorProto.INT4, [3], [1, 2, 3]), ""),
    (lambda: helper.make_tensor("t", TensorProto.STRING, [2], [b"a", b"b"]), ""),
    (lambda: helper.make_tensor("t", TensorProto.FLOAT, [0, 5], []), ""),
    (lambda: TensorProto(name="t", data_type=TensorProto.FLOAT, dims=[3], raw_data=b"\x00" * 11),
     "tensor 't' has 11 bytes of raw_data, but its shape [3] needs 12"),
    (lambda: TensorProto(name="t", data_type=TensorProto.FLOAT, dims=[3]),
     "tensor 't' has shape [3] (3 elements) but holds no data"),
    (lambda: TensorProto(dims=[1], float_data=[1.0]), "an unnamed tensor has no data type"),
    (lambda: TensorProto(name="t", data_type=TensorProto.INT4, dims=[3], raw_data=b"\x00"),
     "tensor 't' has 1 bytes of raw_data, but its shape [3] needs 2"),
])
def test_tensor_problem(make, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert tensor_problem(make()) == expected


def test_newest_opset_knows_the_installed_onnx() -> None:
    assert newest_opset("") == onnx.defs.onnx_opset_version()
    assert newest_opset("ai.onnx.ml") >= 3
    assert newest_opset("com.example") == 0


def test_ref_attr_outside_function_is_flagged_on_the_node() -> None:
    node = helper.make_node("Softmax", ["x"], ["y"], name="s")
    node.attribute.append(helper.make_attribute_ref("axis", AttributeProto.INT))
    [problem] = ModelIndex(hostile.model_of([node])).problems
    assert problem.node_name == "s" and "outside a function" in problem.message


def test_sparse_initializers_define_their_values() -> None:
    import numpy as np
    from onnx import numpy_helper

    from onnxviz.model.graph.index import INITIALIZER

    values = numpy_helper.from_array(np.array([1.0], np.float32), "sp")
    sparse = helper.make_sparse_tensor(values, numpy_helper.from_array(np.array([2], np.int64), "i"), [4])
    graph = helper.make_graph([helper.make_node("Identity", ["sp"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
                              sparse_initializer=[sparse])
    index = ModelIndex(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert index.main.producer["sp"] == INITIALIZER
    assert not [p for p in index.problems if "not defined" in p.message]


def test_roles_of_values_in_words() -> None:
    import numpy as np
    from onnx import numpy_helper

    body = helper.make_graph([helper.make_node("Neg", ["t"], ["b"])], "body", [],
                             [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["t"]),
         helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body),
         helper.make_node("Relu", ["ghost"], ["z"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.ones(2, np.float32), "x"), numpy_helper.from_array(np.ones(2, np.float32), "w")])
    index = ModelIndex(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    g = index.main
    assert g.roles_of("x") == ["overridable default (graph input with an initializer)"]
    assert g.roles_of("w") == ["initializer"] and g.roles_of("c") == ["graph input"]
    assert g.roles_of("t") == ["intermediate value"] and g.roles_of("y") == ["graph output"]
    assert g.roles_of("ghost") == ["not defined anywhere"]
    assert index.graphs["1.then_branch"].roles_of("t") == ["from an enclosing graph"]


def test_declared_types_that_cannot_be_right_are_flagged() -> None:
    """A negative size or a missing element type in a graph input or output: neither the checker
    nor shape inference says so, and Run then failed without a reason."""
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, -5])],
                              [helper.make_tensor_value_info("y", 0, [1, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    found = {(p.severity.value, p.value, p.message) for p in ModelIndex(model).problems}
    assert ("error", "x", "input 'x' declares size -5 on axis 1; sizes cannot be negative") in found
    assert ("warning", "y", "output 'y' declares no element type") in found


def test_enum_attribute_values_outside_the_operator_list_are_errors_on_their_node() -> None:
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", auto_pad="BOGUS")
    [problem] = ModelIndex(hostile.model_of([conv], inputs=["x", "w"])).problems
    assert (problem.node, problem.node_name, problem.severity.value) == (0, "conv1", "error")
    assert problem.message == ("conv1: attribute 'auto_pad' is 'BOGUS', but Conv accepts "
                               "NOTSET, SAME_UPPER, SAME_LOWER or VALID")


def test_enum_values_follow_the_operator_version() -> None:
    def messages(mode: str, opset: int) -> list[str]:
        sample = helper.make_node("GridSample", ["x", "g"], ["y"], name="gs", mode=mode)
        return _messages(hostile.model_of([sample], inputs=["x", "g"], opset=opset))

    assert messages("bilinear", 16) == [] and messages("linear", 20) == []
    assert messages("bilinear", 20) == ["gs: attribute 'mode' is 'bilinear', but GridSample accepts "
                                        "linear, nearest or cubic"]
    pad = helper.make_node("Pad", ["x", "p"], ["y"], name="pad", mode="wrap")
    assert _messages(hostile.model_of([pad], inputs=["x", "p"], opset=19)) == []
    assert "accepts constant, reflect or edge" in _messages(hostile.model_of([pad], inputs=["x", "p"], opset=18))[0]


def test_enum_lists_check_every_item_and_activation_names_ignore_case() -> None:
    def messages(activations: list[str]) -> list[str]:
        lstm = helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm", hidden_size=3, activations=activations)
        return _messages(hostile.model_of([lstm], inputs=["x", "w", "r"]))

    assert messages(["sigmoid", "TANH", "Tanh"]) == []  # onnxruntime lower-cases these names too
    [message] = messages(["Sigmoid", "Tanh", "Swish\u202e"])
    assert message.startswith("lstm: attribute 'activations' is 'Swish\\u202e', but LSTM accepts Relu, Tanh")


def _tensor_variants() -> list[TensorProto]:
    """Tensors at the edges of the index's fast path (dense raw_data of the right size, nothing else)."""
    def raw(name: str, data_type: int, dims: list[int], data: bytes | None) -> TensorProto:
        t = TensorProto(name=name, data_type=data_type, dims=dims)
        if data is not None:
            t.raw_data = data
        return t

    out = [raw("fit", TensorProto.FLOAT, [2, 3], bytes(24)), raw("short", TensorProto.FLOAT, [2, 3], bytes(20)),
           raw("long", TensorProto.FLOAT, [4], bytes(20)), raw("empty_set", TensorProto.FLOAT, [0, 3], b""),
           raw("empty_unset", TensorProto.FLOAT, [0], None), raw("no_data", TensorProto.FLOAT, [3], None),
           raw("scalar", TensorProto.INT64, [], bytes(8)), raw("negative", TensorProto.FLOAT, [-2, -3], bytes(24)),
           raw("zero_and_negative", TensorProto.FLOAT, [0, -1], b""), raw("string_raw", TensorProto.STRING, [1], b"ab"),
           raw("unknown_type", 999, [1], bytes(4)), raw("undefined", TensorProto.UNDEFINED, [1], bytes(4)),
           raw("int4", TensorProto.INT4, [3], bytes(2)), raw("int4_short", TensorProto.INT4, [5], bytes(2)),
           raw("half", TensorProto.FLOAT16, [3], bytes(6))]
    both = raw("raw_and_typed", TensorProto.FLOAT, [2], bytes(8))
    both.float_data.extend([1.0, 2.0])
    empty_both = raw("empty_raw_and_typed", TensorProto.INT64, [0], b"")
    empty_both.int64_data.append(1)
    typed = TensorProto(name="typed_only", data_type=TensorProto.INT32, dims=[2], int32_data=[1, 2])
    external = raw("external", TensorProto.FLOAT, [1 << 30], None)
    external.data_location = TensorProto.EXTERNAL
    return [*out, both, empty_both, typed, external]


def test_tensor_checks_flag_exactly_what_each_tensor_alone_is_found_to_have() -> None:
    """The index's quick look at every tensor skips only the ones the full check finds nothing wrong with, as
    initializers and as Constant values alike, in the tensors' order."""
    tensors = _tensor_variants()
    expected = [m for t in tensors if (m := tensor_problem(t))]
    assert len(expected) >= 8  # the variants do reach the full check's messages
    graph = helper.make_graph([helper.make_node("Constant", [], [f"c{k}"], value=t) for k, t in enumerate(tensors)],
                              "g", [], [helper.make_tensor_value_info("c0", TensorProto.FLOAT, [2, 3])],
                              initializer=tensors)
    found = _messages(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    assert [m for m in found if "tensor '" in m] == expected + expected
