"""Shape inference's types are read from its result's bytes (names and serialized types only): they must be
what onnx's public ``infer_shapes`` gives, scope by scope and in its order, for graphs, bodies and functions."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from conftest import TEST_DATA
from onnx import GraphProto, TensorProto, helper

from onnxviz.model.graph.index import child_scope, function_scope, subgraphs_of
from onnxviz.model.graph.validation import infer_types

EXPORTS = sorted((TEST_DATA / "exports").glob("*.onnx"))


def _expected(model: onnx.ModelProto, strict: bool) -> dict[str, list[tuple[str, bytes]]]:
    """The types onnx's public API gives, walked the way the index names scopes."""
    inferred = onnx.shape_inference.infer_shapes(model, check_type=strict, strict_mode=strict, data_prop=True)
    found: dict[str, list[tuple[str, bytes]]] = {}

    def walk(scope: str, graph: GraphProto) -> None:
        types = {v.name: v.type.SerializeToString() for v in graph.value_info}
        for v in graph.output:
            if v.HasField("type"):
                types.setdefault(v.name, v.type.SerializeToString())
        found[scope] = list(types.items())
        for i, node in enumerate(graph.node):
            for attr, k, body in subgraphs_of(node):
                walk(child_scope(scope, i, attr, k), body)

    walk("", inferred.graph)
    for fn in inferred.functions:
        found[function_scope(fn.domain, fn.name, fn.overload)] = [
            (v.name, v.type.SerializeToString()) for v in fn.value_info if v.HasField("type")]
    return found


def _read(model: onnx.ModelProto, strict: bool) -> dict[str, list[tuple[str, bytes]]]:
    result = infer_types(model.SerializeToString(), strict=strict, contrib=False)
    assert result.problem is None
    return {scope: [(name, t.SerializeToString()) for name, t in types.items()]
            for scope, types in result.types.items()}


def _nested() -> onnx.ModelProto:
    """An If whose branches hold a Loop, and a local function with typed value infos of its own."""
    loop_body = helper.make_graph(
        [helper.make_node("Add", ["carried", "one"], ["next"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("carried", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("next", TensorProto.FLOAT, None)])
    then = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "x"], ["looped"], body=loop_body),
         helper.make_node("Relu", ["looped"], ["then_out"])],
        "then", [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["else_out"])], "else", [],
                              [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, None)])
    function = helper.make_function("local", "Twice", ["a"], ["b"],
                                    [helper.make_node("Add", ["a", "a"], ["s"]), helper.make_node("Relu", ["s"], ["b"])],
                                    [helper.make_opsetid("", 18)])
    function.value_info.extend([helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]),
                                onnx.ValueInfoProto(name="untyped")])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["picked"], then_branch=then, else_branch=other),
         helper.make_node("Twice", ["picked"], ["y"], domain="local")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("trips", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("one", TensorProto.FLOAT, [2], [1.0, 1.0])])
    return helper.make_model(graph, functions=[function], ir_version=10,
                             opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])


@pytest.mark.parametrize("strict", [False, True])
def test_types_of_bodies_and_functions_are_the_public_apis(strict: bool) -> None:
    model = _nested()
    read = _read(model, strict)
    assert read == _expected(model, strict)
    assert {"", "0.then_branch", "0.then_branch/0.body", "0.else_branch", "fn:local:Twice:"} <= read.keys()
    assert [name for name, _ in read["fn:local:Twice:"]] == ["s"]  # an untyped value info is left out


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem)
def test_types_of_real_exports_are_the_public_apis(path: Path) -> None:
    model = onnx.load(path)
    assert _read(model, strict=False) == _expected(model, strict=False)
