"""The graph layout: real models and broken graphs lay out, without overlaps, edges attached."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import pytest
from corpus_fixtures import CorpusModel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx_data import LIGHT_MODELS
from synth import build as synth_build

from onnxviz.model.errors import Cancelled, EditError
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout import engine
from onnxviz.model.layout.composer import Levels, compose_scene
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.groups import group_path_of
from onnxviz.model.layout.scene import BoxKind, Category, Scene
from onnxviz.model.progress import CancelToken

LIGHT = ["light_resnet50.onnx", "light_inception_v2.onnx", "light_densenet121.onnx"]


@pytest.fixture(scope="module")
def synth_big() -> onnx.ModelProto:
    """A 40-layer transformer-shaped model (~1650 nodes): big enough to open collapsed."""
    return synth_build(40)


# -- checks --------------------------------------------------------------------------------
def overlapping_pairs(scene: Scene) -> list[tuple[int, int]]:
    """Pairs of boxes whose rectangles intersect (touching edges do not count)."""
    x0, y0 = scene.box_x.astype(float), scene.box_y.astype(float)
    x1, y1 = x0 + scene.box_w, y0 + scene.box_h
    order = np.argsort(y0)
    found: list[tuple[int, int]] = []
    for k, i in enumerate(order):
        later = order[k + 1:]
        later = later[y0[later] < y1[i] - 1e-3]  # sweep: only boxes starting above i's bottom
        hit = later[(x0[later] < x1[i] - 1e-3) & (x1[later] > x0[i] + 1e-3)]
        found += [(int(i), int(j)) for j in hit]
    return found


def assert_edges_attached(scene: Scene) -> None:
    for e in range(scene.n_edges):
        pts = scene.edge_polyline(e)
        assert len(pts) >= 2
        s, t = scene.edge_src[e], scene.edge_dst[e]
        (sx, sy), (tx, ty) = pts[0], pts[-1]
        assert sy == pytest.approx(scene.box_y[s] + scene.box_h[s], abs=0.01)
        assert scene.box_x[s] - 0.01 <= sx <= scene.box_x[s] + scene.box_w[s] + 0.01
        assert ty == pytest.approx(scene.box_y[t], abs=0.01)
        assert scene.box_x[t] - 0.01 <= tx <= scene.box_x[t] + scene.box_w[t] + 0.01


def edges_through_boxes(scene: Scene) -> list[tuple[int, int]]:
    """(edge, box) pairs where an edge passes through a box other than its own ends."""
    x0, y0 = scene.box_x.astype(float) + 1, scene.box_y.astype(float) + 1
    x1, y1 = x0 + scene.box_w - 2, y0 + scene.box_h - 2
    t = np.linspace(0, 1, 17)[:, None]
    hits: list[tuple[int, int]] = []
    for e in range(scene.n_edges):
        pts = scene.edge_polyline(e).astype(float)
        samples = np.concatenate([a + t * (b - a) for a, b in zip(pts[:-1], pts[1:], strict=True)])
        px, py = samples[:, :1], samples[:, 1:]
        inside = ((px > x0) & (px < x1) & (py > y0) & (py < y1)).any(axis=0)
        inside[[scene.edge_src[e], scene.edge_dst[e]]] = False
        hits += [(e, int(b)) for b in np.flatnonzero(inside)]
    return hits


def assert_frames_clean(scene: Scene) -> None:
    """Group frames are nested or apart, and a box touching a frame lies inside it."""
    rects = scene.group_rect.astype(float)

    def inside(a: np.ndarray, b: np.ndarray) -> bool:
        return bool(b[0] <= a[0] + 1e-3 and a[0] + a[2] <= b[0] + b[2] + 1e-3
                    and b[1] <= a[1] + 1e-3 and a[1] + a[3] <= b[1] + b[3] + 1e-3)

    def meet(a: np.ndarray, b: np.ndarray) -> bool:
        return bool(a[0] < b[0] + b[2] - 1e-3 and b[0] < a[0] + a[2] - 1e-3
                    and a[1] < b[1] + b[3] - 1e-3 and b[1] < a[1] + a[3] - 1e-3)

    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not meet(a, b) or inside(a, b) or inside(b, a)
        for k in range(scene.n_boxes):
            box = np.array([scene.box_x[k], scene.box_y[k], scene.box_w[k], scene.box_h[k]], float)
            assert not meet(box, a) or inside(box, a)


def assert_sound(scene: Scene) -> None:
    n = scene.n_boxes
    for arr in (scene.box_y, scene.box_w, scene.box_h, scene.box_kind, scene.box_category):
        assert len(arr) == n
    assert len(scene.box_title) == len(scene.box_lines) == len(scene.box_ref) == n
    assert len(scene.edge_label) == len(scene.edge_value) == len(scene.edge_inferred) == scene.n_edges
    assert len(scene.edge_offsets) == scene.n_edges + 1
    assert np.all(np.isfinite(scene.edge_points))
    assert overlapping_pairs(scene) == []
    assert_edges_attached(scene)
    if len(scene.group_rect) * scene.n_boxes < 200_000:
        assert_frames_clean(scene)


def lay_out(model: onnx.ModelProto, scope: str = "", **kw: object) -> tuple[GraphLayout, Scene]:
    layout = GraphLayout(ModelIndex(model), scope, **kw)  # type: ignore[arg-type]
    return layout, layout.build()


def tensor(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def model_of(nodes: list[onnx.NodeProto], inputs: list[str], outputs: list[str],
             inits: list[onnx.TensorProto] | None = None, **kw: object) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [tensor(n, [1, 4]) for n in inputs],
                              [tensor(n, [1, 4]) for n in outputs], inits or [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], **kw)


# -- real models ----------------------------------------------------------------------------
def test_example_lays_out_with_weights_inside_boxes(example_path: Path) -> None:
    model = onnx.load(example_path)
    layout, scene = lay_out(model)
    assert_sound(scene)
    assert edges_through_boxes(scene) == []
    ops = [i for i in range(scene.n_boxes) if scene.box_kind[i] == BoxKind.OP]
    assert len(ops) == len(model.graph.node)
    conv = scene.box_of_node(0)
    assert scene.box_title[conv] == "Conv"
    assert scene.box_name[conv] == "/stem/conv/Conv"
    assert scene.box_lines[conv] == ["W <16×3×3×3>", "B <16>"]
    assert scene.box_category[conv] == Category.CONV
    kinds = scene.box_kind.tolist()
    assert kinds.count(BoxKind.INPUT) == 1 and kinds.count(BoxKind.OUTPUT) == 1
    assert scene.box_title[kinds.index(BoxKind.INPUT)] == "image"
    assert not any(v.startswith("stem.conv.weight") for v in scene.edge_value)  # no edges for weights
    assert set(scene.group_path) == {"stem", "res", "attn", "attn/k", "head"}
    # data flows down: every edge goes from a higher box to a lower one
    assert np.all(scene.box_y[scene.edge_src] < scene.box_y[scene.edge_dst])


def test_frames_enclose_their_members(example_path: Path) -> None:
    layout, scene = lay_out(onnx.load(example_path))
    for path, (gx, gy, gw, gh) in zip(scene.group_path, scene.group_rect, strict=True):
        for i, ref in enumerate(scene.box_ref):
            if ref.kind == BoxKind.OP and layout.group_of(ref.node).startswith(path):
                assert gx <= scene.box_x[i] and scene.box_x[i] + scene.box_w[i] <= gx + gw
                assert gy <= scene.box_y[i] and scene.box_y[i] + scene.box_h[i] <= gy + gh


@pytest.mark.parametrize("name", LIGHT)
def test_light_models_lay_out_cleanly(name: str) -> None:
    model = onnx.load(LIGHT_MODELS / name)
    _, scene = lay_out(model)
    assert_sound(scene)
    assert edges_through_boxes(scene) == []
    centre = scene.box_x + scene.box_w / 2
    # the main path is straight: most single-in single-out links are exactly vertical
    fan_in = np.bincount(scene.edge_dst, minlength=scene.n_boxes)
    fan_out = np.bincount(scene.edge_src, minlength=scene.n_boxes)
    chain = (fan_out[scene.edge_src] == 1) & (fan_in[scene.edge_dst] == 1)
    straight = np.abs(centre[scene.edge_src] - centre[scene.edge_dst]) < 0.5
    assert straight[chain].mean() > 0.8
    # the drawing stays narrow: a column, not a wall
    x, y, w, h = scene.bounds()
    assert w < h / 5


def test_weights_made_by_constant_of_shape_are_listed_in_boxes() -> None:
    _, scene = lay_out(onnx.load(LIGHT_MODELS / "light_resnet50.onnx"))
    convs = [i for i in range(scene.n_boxes) if scene.box_title[i] == "Conv"]
    assert len(convs) == 53
    assert scene.box_lines[convs[0]] == ["W <64×3×7×7> · ConstantOfShape"]   # the operator that made it, named
    assert "ConstantOfShape" not in scene.box_title


# -- broken and unusual graphs --------------------------------------------------------------
def test_cycle_terminates_and_draws_every_node() -> None:
    nodes = [helper.make_node("Add", ["x", "c"], ["a"], name="A"),
             helper.make_node("Relu", ["a"], ["b"], name="B"),
             helper.make_node("Neg", ["b"], ["c"], name="C"),
             helper.make_node("Relu", ["c"], ["y"], name="D")]
    _, scene = lay_out(model_of(nodes, ["x"], ["y"]))
    assert_sound(scene)
    assert edges_through_boxes(scene) == []  # the back edge goes round, not through
    assert sum(1 for r in scene.box_ref if r.kind == BoxKind.OP) == 4
    assert sorted(scene.edge_value) == ["a", "b", "c", "c", "x", "y"]


def test_self_loop_and_unsorted_nodes() -> None:
    nodes = [helper.make_node("Relu", ["b"], ["y"], name="late"),
             helper.make_node("Add", ["a", "a"], ["b"], name="mid"),
             helper.make_node("Abs", ["x"], ["a"], name="first"),
             helper.make_node("Max", ["x", "z"], ["z"], name="loop")]
    _, scene = lay_out(model_of(nodes, ["x"], ["y"]))
    assert_sound(scene)
    y_of = {scene.box_name[i]: scene.box_y[i] for i in range(scene.n_boxes)}
    assert y_of["first"] < y_of["mid"] < y_of["late"]


def test_undefined_inputs_and_duplicate_producers() -> None:
    nodes = [helper.make_node("Add", ["x", "ghost"], ["a"], name="A"),
             helper.make_node("Relu", ["x"], ["a"], name="dup"),
             helper.make_node("Relu", ["a"], ["y"], name="B")]
    _, scene = lay_out(model_of(nodes, ["x"], ["y", "never_made"]))
    assert_sound(scene)
    ghost = scene.box_title.index("ghost")
    assert scene.box_kind[ghost] == BoxKind.INPUT and "undefined" in scene.box_lines[ghost]
    assert scene.box_kind[scene.box_title.index("never_made")] == BoxKind.OUTPUT


def test_empty_graph() -> None:
    _, scene = lay_out(model_of([], [], []))
    assert scene.n_boxes == 0 and scene.n_edges == 0
    assert scene.bounds() == (0.0, 0.0, 0.0, 0.0)


def test_graph_input_passed_straight_to_output() -> None:
    _, scene = lay_out(model_of([], ["x"], ["x"]))
    assert_sound(scene)
    assert scene.box_kind.tolist() == [BoxKind.INPUT, BoxKind.OUTPUT] and scene.n_edges == 1


def test_node_with_100000_inputs() -> None:
    names = [f"in{i}" for i in range(100_000)]
    nodes = [helper.make_node("Concat", ["x"] * 100_000 + names, ["y"], name="big", axis=0)]
    inits = [numpy_helper.from_array(np.zeros(1, np.float32), n) for n in names]
    layout, scene = lay_out(model_of(nodes, ["x"], ["y"], inits))
    assert_sound(scene)
    big = scene.box_of_node(0)
    assert len(scene.box_lines[big]) <= 8 and scene.box_lines[big][-1].endswith("more")
    assert scene.n_edges == 2


def test_initializers_declared_as_inputs_are_not_terminals() -> None:
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    graph = helper.make_graph(nodes, "g", [tensor("x", [1, 4]), tensor("w", [4, 4])],
                              [tensor("y", [1, 4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=3)
    _, scene = lay_out(model)
    assert "w" not in scene.box_title
    assert scene.box_lines[scene.box_of_node(0)] == ["B <4×4>"]


def test_if_body_shows_outer_scope_reads_as_inputs() -> None:
    then = helper.make_graph([helper.make_node("Add", ["x", "outer"], ["t"], name="in_then")], "then", [],
                             [tensor("t", [1, 4])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="in_else")], "else", [],
                              [tensor("e", [1, 4])])
    nodes = [helper.make_node("Relu", ["x"], ["outer"], name="r"),
             helper.make_node("Constant", [], ["cond"], name="c",
                              value=numpy_helper.from_array(np.array(True))),
             helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then, else_branch=other)]
    model = model_of(nodes, ["x"], ["y"])
    layout, scene = lay_out(model, "2.then_branch")
    assert_sound(scene)
    inputs = {scene.box_title[i] for i in range(scene.n_boxes) if scene.box_kind[i] == BoxKind.INPUT}
    assert inputs == {"x", "outer"}
    assert scene.box_title[scene.box_of_node(0)] == "Add"
    _, main = lay_out(model)
    assert_sound(main)
    assert main.box_category[main.box_of_node(2)] == Category.CONTROL
    assert main.box_lines[main.box_of_node(2)] == ["cond = True"]  # the Constant is inside the If box, with its value


def test_function_body_and_call() -> None:
    fn = helper.make_function("local", "Block", ["a"], ["b"],
                              [helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Neg", ["r"], ["b"])],
                              [helper.make_opsetid("", 18)])
    nodes = [helper.make_node("Block", ["x"], ["y"], name="call", domain="local")]
    model = model_of(nodes, ["x"], ["y"], functions=[fn])
    model.opset_import.append(helper.make_opsetid("local", 1))
    _, body = lay_out(model, "fn:local:Block:")
    assert_sound(body)
    assert sorted(body.box_title) == ["Neg", "Relu", "a", "b"]
    _, main = lay_out(model)
    assert main.box_category[main.box_of_node(0)] == Category.CONTROL


# -- groups ----------------------------------------------------------------------------------
def positions(scene: Scene) -> dict[object, tuple[float, float]]:
    return {ref: (float(scene.box_x[i]), float(scene.box_y[i])) for i, ref in enumerate(scene.box_ref)}


def test_big_graph_opens_as_an_overview(synth_big: onnx.ModelProto) -> None:
    layout, scene = lay_out(synth_big)
    assert_sound(scene)
    groups = [r.group for r in scene.box_ref if r.kind == BoxKind.GROUP]
    assert sorted(groups) == sorted([f"layers.{i}" for i in range(40)] + ["final_ln"])
    first = [r.group for r in scene.box_ref].index("layers.0")
    assert scene.box_lines[first] == ["41 nodes"] and scene.box_title[first] == "layers.0"
    assert scene.n_boxes == 41 + 2 + 2  # groups, embed and head, input and output
    assert layout.expanded == frozenset()


def test_expand_moves_only_by_the_shift_and_collapse_restores(synth_big: onnx.ModelProto) -> None:
    layout, before = lay_out(synth_big)
    row = [r.group for r in before.box_ref].index("layers.5")
    gx, gy, gw, gh = (float(v[row]) for v in (before.box_x, before.box_y, before.box_w, before.box_h))
    after = layout.expand("layers.5")
    assert_sound(after)
    assert edges_through_boxes(after) == []
    assert "layers.5" in layout.expanded and after.group_path == ["layers.5"]
    fx, fy, fw, fh = (float(v) for v in after.group_rect[0])
    old, new = positions(before), positions(after)
    moved = {k: (new[k][0] - old[k][0], new[k][1] - old[k][1]) for k in old if k in new}
    dxs = {round(dx, 2) for dx, _ in moved.values()}
    dys = {round(dy, 2) for _, dy in moved.values()}
    assert len(dxs) <= 3 and dys <= {0.0, round(fh - gh, 2)}
    for k, (_dx, dy) in moved.items():
        assert dy == 0 if old[k][1] < gy + gh else dy == pytest.approx(fh - gh, abs=0.01)
    inside = [after.box_title[i] for i in range(after.n_boxes)
              if fx <= after.box_x[i] and after.box_x[i] + after.box_w[i] <= fx + fw
              and fy <= after.box_y[i] and after.box_y[i] + after.box_h[i] <= fy + fh]
    assert sorted(inside) == ["Add", "Add", "attn", "ln1", "ln2", "mlp"]
    restored = layout.collapse("layers.5")
    assert positions(restored) == old


def test_reveal_gives_a_node_its_own_box(synth_big: onnx.ModelProto) -> None:
    layout, scene = lay_out(synth_big)
    node = next(i for i, n in enumerate(synth_big.graph.node) if n.name == "layers.7/attn/q/MatMul")
    assert layout.group_of(node) == "layers.7/attn/q"
    hidden_in = scene.box_of_node(node)
    assert scene.box_ref[hidden_in].group == "layers.7"
    scene = layout.reveal(node)
    assert_sound(scene)
    assert edges_through_boxes(scene) == []
    box = scene.box_of_node(node)
    assert scene.box_ref[box].kind == BoxKind.OP and scene.box_ref[box].node == node
    assert {"layers.7", "layers.7/attn", "layers.7/attn/q"} <= layout.expanded


def test_expand_everything_then_collapse_everything(synth_small: Path) -> None:
    index = ModelIndex(onnx.load(synth_small))
    every = GraphLayout(index, expanded=[]).tree.paths
    layout = GraphLayout(index, expanded=every)
    full = layout.build()
    assert_sound(full)
    assert edges_through_boxes(full) == []
    assert len(full.group_path) == len(every) == 91
    for path in sorted(layout.tree.paths, key=len, reverse=True):
        scene = layout.collapse(path)
    assert_sound(scene)
    assert layout.expanded == frozenset() and scene.group_path == []
    fresh = GraphLayout(layout.index, expanded=[]).build()
    assert scene.n_boxes == fresh.n_boxes and scene.n_edges == fresh.n_edges


def test_unknown_group_is_ignored(example_path: Path) -> None:
    layout, scene = lay_out(onnx.load(example_path))
    assert layout.expand("no/such/group") is scene
    assert layout.collapse("no/such/group") is scene


# -- labels, progress, cancel ---------------------------------------------------------------
def test_relabel_uses_inferred_shapes(example_path: Path) -> None:
    model = onnx.load(example_path)
    layout, scene = lay_out(model)
    e = scene.edge_value.index("stem.conv")
    assert scene.edge_label[e] == "" and not scene.edge_inferred[e]
    inferred = onnx.shape_inference.infer_shapes(model)
    layout.index.set_inferred({"": {v.name: v.type for v in inferred.graph.value_info}})
    scene = layout.relabel()
    assert scene.edge_label[e] == "batch × 16 × 16 × 16" and scene.edge_inferred[e]
    image = scene.edge_value.index("image")
    assert scene.edge_label[image] == "batch × 3 × 32 × 32" and not scene.edge_inferred[image]


def test_progress_and_cancel(synth_big: onnx.ModelProto) -> None:
    seen: list[float] = []
    GraphLayout(ModelIndex(synth_big)).build(lambda f, _t: seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        GraphLayout(ModelIndex(synth_big)).build(cancel=token)


def test_progress_is_passed_on_in_steps_not_once_per_level(synth_big: onnx.ModelProto) -> None:
    """Each report is a signal the window's GUI thread handles: an expanded layout of hundreds of levels passes on
    a report when the fraction moved by a step (or the text changed), rising to 1.0."""
    index = ModelIndex(synth_big)
    every = GraphLayout(index, expanded=GraphLayout(index).tree.paths)
    seen: list[tuple[float, str]] = []
    every.build(lambda f, t: seen.append((f, t)))
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    assert len(seen) < every.tree.n_groups  # there were n_groups + 1 levels, each reported before
    for (f0, t0), (f1, t1) in zip(seen, seen[1:], strict=False):
        assert t0 != t1 or f1 - f0 >= engine.PROGRESS_STEP or f1 == 1.0


def test_every_corpus_model_lays_out(corpus_model: CorpusModel) -> None:
    for scope, scene in zip(corpus_model.doc.index.graphs, corpus_model.scenes, strict=True):
        assert overlapping_pairs(scene) == [], scope
        assert_edges_attached(scene)


def test_inner_groups_stay_open_inside_a_collapsed_group(synth_big: onnx.ModelProto) -> None:
    layout, _ = lay_out(synth_big)
    opened = layout.expand("layers.2/attn")  # opens layers.2 too, so attn shows
    assert {"layers.2", "layers.2/attn"} <= layout.expanded
    assert {"layers.2", "layers.2/attn"} <= set(opened.group_path)
    closed = layout.collapse("layers.2")
    assert closed.group_path == [] and "layers.2/attn" in layout.expanded
    assert_sound(closed)
    again = layout.expand("layers.2")
    assert set(again.group_path) == {"layers.2", "layers.2/attn"}
    assert positions(again) == positions(opened)


def test_relabel_leaves_the_drawn_scene_alone(example_path: Path) -> None:
    model = onnx.load(example_path)
    layout, drawn = lay_out(model)
    before = list(drawn.edge_label)
    inferred = onnx.shape_inference.infer_shapes(model)
    layout.index.set_inferred({"": {v.name: v.type for v in inferred.graph.value_info}})
    fresh = layout.relabel()
    assert fresh is not drawn and drawn.edge_label == before
    assert fresh.edge_label != before and layout.scene is fresh
    assert np.array_equal(fresh.box_x, drawn.box_x)


def test_cancel_inside_one_big_level() -> None:
    model = synth_build(60)
    for node in model.graph.node:
        node.name = ""  # no groups: one level of ~2500 boxes
    token = CancelToken()
    texts: list[str] = []

    def progress(_f: float, text: str) -> None:
        texts.append(text)
        if text == "Ordering layers":
            token.cancel()
    with pytest.raises(Cancelled):
        GraphLayout(ModelIndex(model)).build(progress, token)
    assert texts[-1] == "Ordering layers"


def test_body_output_passing_an_outer_value_through() -> None:
    body = helper.make_graph([], "then", [], [tensor("x", [1, 4])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="neg")], "else", [],
                              [tensor("e", [1, 4])])
    nodes = [helper.make_node("If", ["c"], ["y"], name="if", then_branch=body, else_branch=other)]
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    graph = helper.make_graph(nodes, "g", [tensor("x", [1, 4]), cond], [tensor("y", [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    _, scene = lay_out(model, "0.then_branch")
    assert_sound(scene)
    assert scene.box_kind.tolist() == [BoxKind.INPUT, BoxKind.OUTPUT] and scene.n_edges == 1
    assert scene.box_lines[0][-1] == "outer scope"


def test_big_graph_without_name_scopes_opens_in_runs_of_nodes() -> None:
    model = synth_build(130)
    for node in model.graph.node:
        node.name = ""
    n = len(model.graph.node)
    layout, scene = lay_out(model)
    assert_sound(scene)
    groups = [r.group for r in scene.box_ref if r.kind == BoxKind.GROUP]
    assert groups[0] == "nodes 0-499" and groups[-1] == f"nodes {(n - 1) // 500 * 500}-{n - 1}"
    assert len(groups) == (n + 499) // 500
    assert layout.group_of(1234) == "nodes 1000-1499"
    scene = layout.reveal(1234)
    assert_sound(scene)
    assert scene.box_ref[scene.box_of_node(1234)].node == 1234


def centre_of(scene: Scene, title: str, nth: int = 0) -> float:
    rows = [i for i in range(scene.n_boxes) if scene.box_title[i] == title]
    return float(scene.box_x[rows[nth]] + scene.box_w[rows[nth]] / 2)


def test_collapsing_an_open_group_closes_the_gap_on_the_main_path(example_path: Path) -> None:
    layout, full = lay_out(onnx.load(example_path))
    frame = full.group_rect[full.group_path.index("attn")]
    scene = layout.collapse("attn")
    assert_sound(scene)
    assert edges_through_boxes(scene) == []
    box = [r.group for r in scene.box_ref].index("attn")
    shrink = float(frame[3] - scene.box_h[box])
    assert scene.bounds()[3] == pytest.approx(full.bounds()[3] - shrink, abs=1.0)
    # the collapsed box sits on the line through the residual block's last Relu and the head
    relu = centre_of(scene, "Relu", 2)
    assert float(scene.box_x[box] + scene.box_w[box] / 2) == pytest.approx(relu, abs=0.5)


def test_expanding_in_the_overview_keeps_the_main_path_straight(synth_big: onnx.ModelProto) -> None:
    layout, _ = lay_out(synth_big)
    scene = layout.expand("layers.5")
    line = centre_of(scene, "layers.4")
    assert centre_of(scene, "layers.6") == pytest.approx(line, abs=0.5)
    into = [e for e in range(scene.n_edges) if scene.box_title[scene.edge_src[e]] == "layers.4"]
    for e in into:  # enters the frame straight down from layers.4
        pts = scene.edge_polyline(e)
        assert pts[1][0] == pytest.approx(line, abs=0.5)


def test_a_constant_listed_in_a_box_is_shown_by_that_box() -> None:
    nodes = [helper.make_node("Constant", [], ["k"], name="const",
                              value=numpy_helper.from_array(np.ones(4, np.float32))),
             helper.make_node("Add", ["x", "k"], ["y"], name="add")]
    layout, scene = lay_out(model_of(nodes, ["x"], ["y"]))
    assert "Constant" not in scene.box_title
    assert scene.box_of_node(0) == scene.box_of_node(1) >= 0
    assert scene.box_lines[scene.box_of_node(1)] == ["B = [1.0, 1.0, 1.0, 1.0]"]  # a small value is shown itself


def test_random_expand_and_collapse_sequences_stay_clean(synth_small: Path) -> None:
    import random

    index = ModelIndex(onnx.load(synth_small))
    layout = GraphLayout(index, expanded=[])
    layout.build()
    paths = list(layout.tree.paths)
    rng = random.Random(7)
    for _ in range(40):
        path = rng.choice(paths)
        scene = layout.collapse(path) if path in layout.expanded and rng.random() < 0.5 else layout.expand(path)
        assert overlapping_pairs(scene) == []
        assert_edges_attached(scene)
        assert_frames_clean(scene)
    shown = {p for p in layout.expanded if all(a in layout.expanded for a in _ancestors(p))}
    assert set(scene.group_path) == shown


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:k]) for k in range(1, len(parts))]


# -- texts refreshed in place after renames and attribute edits ------------------------------
def scene_facts(scene: Scene) -> dict[str, object]:
    """Everything a scene draws, comparable with ==."""
    return {name: value.tolist() if isinstance(value, np.ndarray) else value
            for name, value in vars(scene).items()}


def _new_name(old: str, other: str, form: int, k: int) -> str:
    """Names a user might give: same group, another node's group, a dotted name, none, a deeper group..."""
    prefix, _, _ = old.rpartition("/")
    other_prefix, _, _ = other.rpartition("/")
    return [f"{prefix}/renamed{k}" if prefix else f"{old}_{k}", f"{other_prefix}/moved{k}", f"solo.part.x{k}",
            "", f"{prefix}/deeper/x{k}", f"plain{k}", f"{other}.x{k}", f"{prefix}/{k}/x"][form]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(expand=st.sampled_from(["none", "all", "some"]),
       steps=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 502), st.integers(0, 502), st.integers(0, 7)),
                      min_size=1, max_size=6))
def test_refreshed_texts_are_what_a_new_layout_draws(synth_mid: onnx.ModelProto, expand: str,
                                                     steps: list[tuple[int, int, int, int]]) -> None:
    """After any renames, undos and redos, a scene refreshed in place (when the layout offers one) is
    exactly the scene a new layout of the edited model draws; keeping the prefix always refreshes."""
    from onnxviz.model.document import Document

    doc = Document(onnx.ModelProto.FromString(synth_mid.SerializeToString()))
    first = GraphLayout(doc.index, "")
    paths = {"none": [], "all": list(first.tree.paths), "some": list(first.tree.paths)[::3]}[expand]
    layout = GraphLayout(doc.index, "", paths)
    layout.build()
    for k, (action, node, other, form) in enumerate(steps):
        before = doc.undo_stack.index
        nodes = doc.model.graph.node
        if action == 8:
            doc.undo()
        elif action == 9:
            doc.redo()
        else:
            new = _new_name(nodes[node].name, nodes[other].name, form, k)
            try:
                doc.edit.rename_node(node, new)
            except EditError:
                continue
            if form == 0 and layout.group_of(node) == group_path_of(new):
                assert layout.refresh_nodes({node}) is not None   # the common rename: no layout
        if doc.undo_stack.index == before:
            continue
        changed = doc.undo_stack.commands[min(before, doc.undo_stack.index)].index_effect().nodes
        assert doc.index is layout.index   # renames update the index in place
        scene = layout.refresh_nodes(changed)
        fresh = GraphLayout(doc.index, "", layout.expanded)
        expected = fresh.build()
        if scene is None:  # what the canvas does: lay out again
            layout = fresh
        else:
            assert scene_facts(scene) == scene_facts(expected)


@pytest.fixture(scope="module")
def synth_mid() -> onnx.ModelProto:
    """A 12-layer transformer-shaped model (503 nodes): opens as an overview of collapsed layers."""
    return synth_build(12)


def test_a_rename_within_its_group_changes_one_box_text(synth_mid: onnx.ModelProto) -> None:
    from onnxviz.model.document import Document

    doc = Document(onnx.ModelProto.FromString(synth_mid.SerializeToString()))
    layout = GraphLayout(doc.index, "", ["layers.0", "layers.0/ln1"])
    before = layout.build()
    node = [n.name for n in doc.model.graph.node].index("layers.0.ln1/Sub")
    doc.edit.rename_node(node, "layers.0.ln1/Subtract")
    scene = layout.refresh_nodes({node})
    assert scene is not None and scene is not before
    box = scene.box_of_node(node)
    assert scene.box_name[box] == "layers.0.ln1/Subtract" and before.box_name[box] == "layers.0.ln1/Sub"
    assert [i for i in range(scene.n_boxes) if scene.box_name[i] != before.box_name[i]] == [box]
    assert scene.box_x is before.box_x and scene.edge_points is before.edge_points  # nothing moved
    assert layout.refresh_nodes({node}) is scene  # nothing more changed: the same scene
    doc.edit.rename_node(node, "layers.1.ln1/Sub_9")   # into another group: a new layout is needed
    assert layout.refresh_nodes({node}) is None


def test_runs_of_unnamed_nodes_refresh_only_within_their_run() -> None:
    from onnxviz.model.document import Document

    model = synth_build(130)
    for node in model.graph.node:
        node.name = ""
    doc = Document(model)
    layout = GraphLayout(doc.index, "", ["nodes 1000-1499"])
    layout.build()
    doc.edit.rename_node(1234, "still_in_its_run")
    scene = layout.refresh_nodes({1234})
    assert scene is not None and scene.box_name[scene.box_of_node(1234)] == "still_in_its_run"
    assert scene_facts(scene) == scene_facts(GraphLayout(doc.index, "", layout.expanded).build())
    doc.edit.rename_node(1234, "a/scope/of/its/own")  # could start name-scope groups: lay out again
    assert layout.refresh_nodes({1234}) is None


def test_a_constants_new_value_shows_in_its_readers_box() -> None:
    from onnxviz.model.document import Document

    nodes = [helper.make_node("Constant", [], ["k"], name="const",
                              value=numpy_helper.from_array(np.ones(4, np.float32))),
             helper.make_node("Add", ["x", "k"], ["y"], name="add")]
    doc = Document(model_of(nodes, ["x"], ["y"]))
    layout = GraphLayout(doc.index, "")
    before = layout.build()
    doc.edit.set_attribute(0, "value", np.full(4, 2, np.float32))  # a small value is shown itself
    scene = layout.refresh_nodes({0})
    assert scene is not None and scene.box_lines[scene.box_of_node(1)] == ["B = [2.0, 2.0, 2.0, 2.0]"]
    assert before.box_lines[before.box_of_node(1)] == ["B = [1.0, 1.0, 1.0, 1.0]"]
    assert scene_facts(scene) == scene_facts(GraphLayout(doc.index, "").build())
    doc.edit.set_attribute(0, "value", np.ones((2, 3, 4, 5, 6, 7, 8, 9), np.float32))  # a longer line: wider box
    assert layout.refresh_nodes({0}) is None


def test_an_edge_whose_route_is_not_found_is_drawn_straight(synth_big: onnx.ModelProto,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The composer never loses an edge: one whose piece in a level is missing (here inside a frame, from its entry
    port of one value) goes straight from its source's bottom to its target's top; every other edge keeps its
    route."""
    found: list[Levels] = []

    def keep(levels: Levels) -> tuple[Scene, list[int]]:
        found.append(levels)
        return compose_scene(levels)
    monkeypatch.setattr(engine, "compose_scene", keep)
    layout, _ = lay_out(synth_big)
    scene = layout.expand("layers.5")
    levels = found[-1]
    g = layout.tree.id_of["layers.5"]
    block = levels.blocks[g]
    lost = next(iter(block.in_port))
    other = int(block.edge_val.max()) + 1
    broken = dataclasses.replace(block, edge_val=np.where(block.edge_val == lost, other, block.edge_val))
    drawn, vids = compose_scene(dataclasses.replace(levels, blocks={**levels.blocks, g: broken}))
    assert drawn.n_edges == scene.n_edges and vids == layout._vids
    changed = [e for e in range(scene.n_edges) if drawn.edge_polyline(e).tolist() != scene.edge_polyline(e).tolist()]
    assert changed and {vids[e] for e in changed} == {lost}
    for e in changed:
        s, t = drawn.edge_src[e], drawn.edge_dst[e]
        ends = [drawn.box_x[s] + drawn.box_w[s] / 2, drawn.box_y[s] + drawn.box_h[s],
                drawn.box_x[t] + drawn.box_w[t] / 2, drawn.box_y[t]]
        assert drawn.edge_polyline(e).ravel().tolist() == pytest.approx(ends)
