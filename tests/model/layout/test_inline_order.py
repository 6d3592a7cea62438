"""Bodies drawn inside their nodes read in order and keep the graph around them close: an If's then branch
before its else branch (onnx's helper writes else_branch first: it sorts attributes by name), a Loop's
readers right under it, a Scan's two outputs each with its own label."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.document import Document
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.inline import InlineLayout
from onnxviz.model.layout.labels import label_rect, label_spots
from onnxviz.model.layout.options import LEFT_TO_RIGHT, TOP_TO_BOTTOM, LayoutOptions

F = TensorProto.FLOAT


def vec(name: str, elem: int = F, shape: list[int] | None = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, [4] if shape is None else shape)


def bodies_model(folder: Path) -> Path:
    """x -> Loop (its readers: an Add and a ReduceSum) -> If (then: 2 nodes, else: 3) -> Scan (2 outputs,
    2 readers); checked by onnxruntime."""
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["y_in", "one"], ["y_out"]),
         helper.make_node("Mul", ["y_out", "one"], ["y_scan"]), helper.make_node("Relu", ["y_scan"], ["scan_out"])],
        "loop_body", [vec("iter", TensorProto.INT64, []), vec("cond_in", TensorProto.BOOL, []), vec("y_in")],
        [vec("cond_out", TensorProto.BOOL, []), vec("y_out"), vec("scan_out")],
        [numpy_helper.from_array(np.ones(4, np.float32), "one")])
    then = helper.make_graph([helper.make_node("Add", ["a", "a"], ["t1"]), helper.make_node("Relu", ["t1"], ["t"])],
                             "then_branch", [], [vec("t")])
    other = helper.make_graph([helper.make_node("Neg", ["a"], ["e1"]), helper.make_node("Abs", ["e1"], ["e2"]),
                               helper.make_node("Sqrt", ["e2"], ["e"])], "else_branch", [], [vec("e")])
    scan_body = helper.make_graph([helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
                                   helper.make_node("Identity", ["s_out"], ["s_scan"])], "scan_body",
                                  [vec("s_in"), vec("x_t")], [vec("s_out"), vec("s_scan")])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="pre"),
             helper.make_node("Loop", ["trip", "cond", "a"], ["y_final", "ys"], name="loop", body=loop_body),
             helper.make_node("Add", ["y_final", "a"], ["l1"], name="after_loop"),
             helper.make_node("ReduceSum", ["ys"], ["l2"], name="after_loop_scan", keepdims=0),
             helper.make_node("If", ["cond"], ["iff"], name="branch", then_branch=then, else_branch=other),
             helper.make_node("Mul", ["iff", "l1"], ["m"], name="after_if"),
             helper.make_node("Unsqueeze", ["m", "axes"], ["seq"]),
             helper.make_node("Scan", ["a", "seq"], ["s_final", "s_all"], name="scan", body=scan_body,
                              num_scan_inputs=1),
             helper.make_node("Relu", ["s_final"], ["out1"], name="after_scan1"),
             helper.make_node("Sigmoid", ["s_all"], ["out2"], name="after_scan2")]
    graph = helper.make_graph(nodes, "bodies", [vec("x"), vec("trip", TensorProto.INT64, []),
                                                vec("cond", TensorProto.BOOL, [])],
                              [vec("out1"), vec("out2", shape=[1, 4]), vec("l2", shape=[])],
                              [numpy_helper.from_array(np.array([0], np.int64), "axes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    assert [a.name for a in nodes[4].attribute] == ["else_branch", "then_branch"]   # as the helper writes them
    path = folder / "bodies.onnx"
    onnx.save(model, path)
    import onnxruntime as ort

    ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])   # a model onnxruntime takes
    return path


def laid_out(path: Path, direction: str) -> tuple[Document, InlineLayout]:
    doc = Document.open(path)
    doc.index.set_inferred(infer_types(doc.model).types)   # the window's shapes: the edges' labels
    holders = sorted({i for i, _, _ in doc.index.graphs[""].children})
    layout = InlineLayout(doc.index, "", inline=holders, options=LayoutOptions(direction=direction))
    layout.build()
    return doc, layout


def node_at(doc: Document, name: str) -> int:
    return next(k for k, n in enumerate(doc.model.graph.node) if n.name == name)


@pytest.mark.parametrize("direction", [TOP_TO_BOTTOM, LEFT_TO_RIGHT])
def test_an_ifs_then_branch_comes_before_its_else_branch(tmp_path: Path, direction: str) -> None:
    doc, layout = laid_out(bodies_model(tmp_path), direction)
    branches = {e.label: e.offset for e in layout.embedded if e.node == node_at(doc, "branch")}
    axis = 1 if direction == LEFT_TO_RIGHT else 0            # beside each other, or one above the other
    assert branches["then_branch"][axis] < branches["else_branch"][axis]


@pytest.mark.parametrize("direction", [TOP_TO_BOTTOM, LEFT_TO_RIGHT])
def test_inline_bodies_keep_their_readers_close_and_outputs_labelled_apart(tmp_path: Path, direction: str) -> None:
    doc, layout = laid_out(bodies_model(tmp_path), direction)
    scene = layout.scene
    along = 0 if direction == LEFT_TO_RIGHT else 1
    start = scene.box_x if along == 0 else scene.box_y
    room = {node: scene.group_rect[frame] for frame, node in layout.container_frames.items()}
    pre = scene.box_of_node(node_at(doc, "pre"))
    size = scene.box_w if along == 0 else scene.box_h
    ordinary = float(start[scene.box_of_node(node_at(doc, "loop"))] - start[pre] - size[pre])   # between layers
    for holder, readers in (("loop", ("after_loop", "after_loop_scan")), ("scan", ("after_scan1", "after_scan2"))):
        rect = room[node_at(doc, holder)]                      # the holder with its bodies
        end = float(rect[along] + rect[along + 2])
        for reader in readers:                                 # the next layer: right after the holder's room
            assert 0 < float(start[scene.box_of_node(node_at(doc, reader))]) - end <= ordinary, (holder, reader)
    spots = label_spots(scene)
    scan = scene.box_of_node(node_at(doc, "scan"))
    rects = [label_rect(float(spots.x[r]), float(spots.y[r]), bool(spots.left[r]), scene.edge_label[e])
             for r, e in enumerate(spots.edge.tolist()) if scene.edge_src[e] == scan]
    assert len(rects) == 2                                     # one label for each of its outputs
    (a0, b0, a1, b1), (c0, d0, c1, d1) = rects
    assert a1 <= c0 or c1 <= a0 or b1 <= d0 or d1 <= b0       # not on one spot
