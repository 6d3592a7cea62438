"""What boxes, summaries and schemas say about a model's content: small constant values, parameters in every
graph, MACs of heavy operators (figures computed by hand), onnxruntime's contrib schemas."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_cli
from content_models import branches_model, contrib_model, info, small_values_model
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.editing.palette import palette, search
from onnxviz.model.graph.flops import graph_costs
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.opdocs import op_doc
from onnxviz.model.graph.smallvalues import SmallValues
from onnxviz.model.graph.summary import model_figures
from onnxviz.model.graph.validation import infer_types, schema_problems
from onnxviz.model.layout.engine import GraphLayout


def indexed(model: onnx.ModelProto) -> ModelIndex:
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    return index


def box_lines(model: onnx.ModelProto, scope: str = "") -> dict[str, list[str]]:
    """Each op box's lines by its node's name."""
    scene = GraphLayout(ModelIndex(model), scope).build()
    return {scene.box_name[b]: scene.box_lines[b] for b in range(scene.n_boxes) if scene.box_name[b]}


# -- item 1: small constant values ---------------------------------------------------------------
def test_boxes_show_the_values_of_small_initializers_and_constants() -> None:
    lines = box_lines(small_values_model())
    assert lines["eq"] == ["B = 16000"]                                   # an int64 initializer
    assert lines["mul"] == ["B = 0.5"]                                    # a Constant's value_float
    assert lines["reshape"] == ["shape = [1, 3, 224]"]                    # a Constant tensor
    assert lines["quant"] == ["y_scale = 0.03922", "y_zero_point = 128"]  # cut to 4 digits on a box
    assert lines["ident"] == ["input = ['a\\u202eb\\x0ac']"]              # a string: quoted, escaped
    assert lines["add"] == ["B <224>"]                                    # too many elements: the shape


def test_small_values_are_exact_for_the_panel_and_never_read_external_data(tmp_path: Path) -> None:
    model = small_values_model()
    small = SmallValues(ModelIndex(model).main)
    assert small.text("ys", short=False) == "0.039215688" and small.text("ys") == "0.03922"
    assert small.text("W") is None and small.text("x") is None and small.text("nowhere") is None
    external = numpy_helper.from_array(np.array(3.0, np.float32), "B")
    external.ClearField("raw_data")
    external.data_location = TensorProto.EXTERNAL
    external.external_data.add(key="location", value="../../etc/passwd")
    model.graph.initializer[0].CopyFrom(external)
    assert SmallValues(ModelIndex(model).main).text("B") is None
    assert box_lines(model)["eq"] == ["B <scalar>"]


def test_a_body_shows_the_value_of_an_outer_constant() -> None:
    model = branches_model()
    model.graph.node.insert(0, helper.make_node("Constant", [], ["k3"], value_ints=[1, 2, 3]))
    index = ModelIndex(model)
    assert SmallValues(index.graphs["1.then_branch"]).text("k3") == "[1, 2, 3]"
    assert SmallValues(index.graphs["1.then_branch"]).text("w") is None  # 10 elements


# -- item 4: parameters in every graph, MACs of heavy operators ---------------------------------
def test_parameters_count_branches_functions_and_constant_nodes() -> None:
    model = branches_model()
    figures = model_figures(model, indexed(model))
    by_scope = {s.scope: s.count for s in figures.by_scope}
    assert by_scope == {"": 10, "0.then_branch": 110, "0.else_branch": 3, "fn:local:Scale:": 4}
    assert figures.parameters == 127 and figures.parameter_bytes == 123 * 4 + 4 * 8
    assert figures.bytes_by_dtype == {"float32": 123 * 4, "int64": 32}
    assert figures.bodies == [("0.then_branch", 200, 2 * 200 + 20)]  # MatMul 2x10x10, then an Add of 20


def test_info_lists_parameters_per_graph_and_graph_metadata(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    path = tmp_path / "branches.onnx"
    onnx.save(branches_model(), path)
    code, out, _ = run_cli(capsys, "info", str(path), "--json")
    data = json.loads(out)
    assert code == 0 and data["parameters"] == 127
    assert [(g["label"], g["parameters"]) for g in data["parameters_by_graph"]] == [
        ("main graph", 10), ("If branch (else_branch)", 3), ("If branch (then_branch)", 110), ("Scale (function)", 4)]
    assert data["graph_metadata"]["graph_signature"].startswith("inputs:\n")
    code, out, _ = run_cli(capsys, "info", str(path))
    assert "  If branch (then_branch): 110 (440 B)" in out and "graph metadata:" in out


def test_parameter_bytes_of_packed_types_are_their_packed_size() -> None:
    """4-bit types take half a byte, 2-bit types a quarter and 6-bit ones three quarters (the 2- and 6-bit types
    were counted a byte each, numpy's size of them unpacked)."""
    kinds = {"INT4": 0.5, "UINT4": 0.5, "INT2": 0.25, "UINT2": 0.25, "FLOAT6E2M3": 0.75, "INT8": 1}
    kinds = {name: size for name, size in kinds.items() if hasattr(TensorProto, name)}
    inits = [helper.make_tensor(f"w_{name}", getattr(TensorProto, name), [16], vals=bytes(int(16 * size)), raw=True)
             for name, size in kinds.items()]
    model = helper.make_model(helper.make_graph([], "g", [], [], inits))
    figures = model_figures(model, indexed(model))
    assert figures.parameters == 16 * len(kinds) and figures.parameter_bytes == sum(16 * s for s in kinds.values())


def _costs(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], inits: list[onnx.TensorProto],
           outputs: list[onnx.ValueInfoProto]) -> dict[str, int | None]:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    return {c.name: c.macs for c in graph_costs(indexed(model))}


def zeros(name: str, *shape: int, dtype: type = np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.zeros(shape, dtype), name)


def test_macs_of_recurrent_layers() -> None:
    nodes = [helper.make_node("LSTM", ["x", "lw", "lr"], ["ly"], name="lstm", hidden_size=8, direction="bidirectional"),
             helper.make_node("GRU", ["g", "gw", "gr"], ["gy"], name="gru", hidden_size=5, layout=1),
             helper.make_node("RNN", ["r", "rw", "rr"], ["ry"], name="rnn", hidden_size=3)]
    inits = [zeros("lw", 2, 32, 10), zeros("lr", 2, 32, 8), zeros("gw", 1, 15, 6), zeros("gr", 1, 15, 5),
             zeros("rw", 1, 3, 4), zeros("rr", 1, 3, 3)]
    macs = _costs(nodes, [info("x", [5, 2, 10]), info("g", [3, 4, 6]), info("r", [7, 1, 4])], inits,
                  [info("ly", None), info("gy", None), info("ry", None)])
    assert macs["lstm"] == 5 * 2 * (2 * 4 * 8 * 10 + 2 * 4 * 8 * 8)  # steps x batch x (W + R) in both directions
    assert macs["gru"] == 4 * 3 * (3 * 5 * 6 + 3 * 5 * 5)            # layout 1: [batch, sequence, input]
    assert macs["rnn"] == 7 * 1 * (3 * 4 + 3 * 3)


def test_macs_of_einsum_conv_transpose_and_quantized_products() -> None:
    nodes = [helper.make_node("Einsum", ["a", "b"], ["e"], name="einsum", equation="bij,bjk->bik"),
             helper.make_node("Einsum", ["a", "b"], ["e2"], name="ellipsis", equation="...ij,...jk->...ik"),
             helper.make_node("ConvTranspose", ["x", "ct"], ["ctt"], name="deconv"),
             helper.make_node("QLinearMatMul", ["qa", "s", "z", "qb", "s", "z", "s", "z"], ["qy"], name="qmm"),
             helper.make_node("MatMulInteger", ["qa", "qb"], ["iy"], name="imm"),
             helper.make_node("ConvInteger", ["cx", "cw"], ["cy"], name="iconv")]
    inits = [zeros("ct", 4, 2, 3, 3), zeros("qb", 3, 4, dtype=np.uint8), zeros("cw", 2, 1, 3, 3, dtype=np.uint8),
             numpy_helper.from_array(np.array(0.1, np.float32), "s"), numpy_helper.from_array(np.array(0, np.uint8), "z")]
    macs = _costs(nodes, [info("a", [2, 3, 4]), info("b", [2, 4, 5]), info("x", [1, 4, 5, 5]),
                          info("qa", [2, 3], TensorProto.UINT8), info("cx", [1, 1, 4, 4], TensorProto.UINT8)], inits,
                  [info("e", None), info("e2", None), info("ctt", None), info("qy", None, TensorProto.UINT8),
                   info("iy", None, TensorProto.INT32), info("cy", None, TensorProto.INT32)])
    assert macs["einsum"] == macs["ellipsis"] == 2 * 3 * 4 * 5
    assert macs["deconv"] == 4 * 25 * 2 * 9      # every input element into 2 channels x 3x3
    assert macs["qmm"] == macs["imm"] == 2 * 4 * 3
    assert macs["iconv"] == 2 * 2 * 2 * 9


def test_macs_of_contrib_operators() -> None:
    model = contrib_model()
    macs = {c.name: c.macs for c in graph_costs(indexed(model))}
    assert macs["mm"] == 4 * 16 * 8                           # MatMulNBits: A [1, 4, 16] x N 8
    assert macs["qatt"] == 2 * 6 * 16 * 48 + 2 * 2 * 6 * 6 * 16  # QKV projection, then Q.K^T and the V sum
    nodes = [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain="com.microsoft", name="fmm", transA=1),
             helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["o"], domain="com.microsoft", name="mha",
                              num_heads=4)]
    macs = _costs(nodes, [info("a", [3, 2]), info("b", [3, 4]), info("q", [1, 5, 32]), info("k", [1, 7, 32]),
                          info("v", [1, 7, 32])], [], [info("y", [2, 4]), info("o", [1, 5, 32])])
    assert macs["fmm"] == 2 * 4 * 3 and macs["mha"] == 2 * 1 * 5 * 7 * 32


# -- item 5: onnxruntime's contrib schemas ------------------------------------------------------
def test_contrib_nodes_get_input_names_docs_and_attribute_defaults() -> None:
    model = contrib_model()
    nbits = op_doc(model, model.graph.node[0])
    assert nbits is not None and nbits.domain == "com.microsoft" and "quantized" in nbits.description
    assert [f.name for f in nbits.inputs[:3]] == ["A", "B", "scales"]
    bits, k = nbits.attribute("bits"), nbits.attribute("K")
    assert bits is not None and bits.default == "4" and bits.type_name == "INT"
    assert k is not None and k.required
    assert box_lines(model)["mm"] == ["B uint8 <8×1×8>", "scales <8>"]
    assert box_lines(model)["sln"] == ["gamma <8>", "beta <8>"]
    assert box_lines(model)["qatt"][-2:] == ["input_scale = 0.5", "weight_scale = 0.25"]


def test_contrib_nodes_are_checked_like_standard_ones() -> None:
    model = contrib_model()
    assert ModelIndex(model).problems == [] and schema_problems(model) == []
    node = model.graph.node[0]
    del node.attribute[0]  # K
    node.attribute.append(helper.make_attribute("bogus", 1))
    model.graph.node[1].attribute[0].CopyFrom(helper.make_attribute("epsilon", 1))
    messages = [p.message for p in ModelIndex(model).problems] + [p.message for p in schema_problems(model)]
    assert messages == ["mm: MatMulNBits has no attribute 'bogus'",
                        "sln: attribute 'epsilon' is INT, but SkipLayerNormalization expects FLOAT",
                        "mm: MatMulNBits requires attribute 'K'"]


def test_palette_lists_com_microsoft_operators_after_onnx_ones() -> None:
    entries = palette(small_values_model())  # imports no com.microsoft opset: the newest schemas
    domains = {e.domain for e in entries}
    assert "com.microsoft" in domains and "com.microsoft.nchwc" not in domains  # internal domains left out
    nbits = next(e for e in entries if e.qualified_name == "com.microsoft.MatMulNBits")
    assert [p.name for p in nbits.inputs[:3]] == ["A", "B", "scales"] and nbits.min_inputs == 3
    found = [e.qualified_name for e in search(entries, "matmul")]
    assert found[:3] == ["MatMul", "MatMulInteger", "QLinearMatMul"]
    assert "com.microsoft.FusedMatMul" in found[3:] and all(q.startswith("com.microsoft.") for q in found[3:])


def test_without_onnxruntime_contrib_nodes_stay_schema_less(monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.graph import contrib, opschema

    caches = (contrib._raw_schemas, contrib.contrib_schema, opschema.schema_for)
    monkeypatch.setitem(sys.modules, "onnxruntime.capi.onnxruntime_pybind11_state", None)  # import fails
    for cache in caches:
        cache.cache_clear()
    try:
        model = contrib_model()
        assert op_doc(model, model.graph.node[0]) is None and contrib.contrib_domains() == frozenset()
        assert box_lines(model)["mm"] == ["B uint8 <8×1×8>", "scales <8>"]  # the value names, as before
        assert ModelIndex(model).problems == []
    finally:
        for cache in caches:
            cache.cache_clear()


def test_broken_or_huge_small_constants_show_their_shape_or_a_cut_value() -> None:
    model = small_values_model()
    b = model.graph.initializer[0]
    b.raw_data = b"\x01" * 3  # 3 bytes for one int64: broken
    model.graph.node[2].attribute[0].t.CopyFrom(numpy_helper.from_array(np.array(["x" * 100_000], dtype=object)))
    lines = box_lines(model)
    assert lines["eq"] == ["B int64 <scalar>"]   # its stored type (not float32)
    shown = lines["ident"][0]
    assert shown.startswith("input = ['xxx") and len(shown) <= 48             # cut to the box's line length
    small = SmallValues(ModelIndex(model).main)
    assert len(small.text("tag") or "") < 100                                 # cut (40 characters) on a box
    model.graph.initializer[1].dims[:] = [-1]
    assert SmallValues(ModelIndex(model).main).text("ys") is None
