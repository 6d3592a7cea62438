"""Edge labels: the shape texts of the values leaving one box never overlap (tests/corpus/test_label_overlaps.py
checks labels against all labels and boxes over a corpus)."""

from __future__ import annotations

import onnx
import pytest
from conftest import TEST_DATA
from onnx import TensorProto, helper
from onnx_data import node_model

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.describe import edge_tooltip
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.labels import LABEL_LINE, label_spots, label_width
from onnxviz.model.layout.options import LayoutOptions
from onnxviz.model.layout.scene import Scene
from onnxviz.model.layout.scope import clip
from onnxviz.model.layout.texts import EDGE_NAME_TEXT
from onnxviz.model.text import label_shape_text, shape_text

EXPORTS = TEST_DATA / "exports"

TEXT_HEIGHT = 13.0   # the glyphs of an 11-unit line


def _scene(model: onnx.ModelProto) -> Scene:
    return GraphLayout(ModelIndex(model)).build()


def _rects(scene: Scene) -> dict[int, tuple[int, float, float, float, float]]:
    """edge -> (source box, x0, y0, x1, y1) of its label's text."""
    spots = label_spots(scene)
    out = {}
    for e, x, y, left in zip(spots.edge, spots.x, spots.y, spots.left, strict=True):
        width = label_width(scene.edge_label[e])
        x0 = x - width if left else x
        out[int(e)] = (int(scene.edge_src[e]), float(x0), float(y), float(x0 + width), float(y + TEXT_HEIGHT))
    return out


def _collisions(scene: Scene) -> list[tuple[str, str]]:
    rects = list(_rects(scene).items())
    found = []
    for k, (e, (src, ax0, ay0, ax1, ay1)) in enumerate(rects):
        for f, (other, bx0, by0, bx1, by1) in rects[k + 1:]:
            if src == other and ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1:
                found.append((scene.edge_value[e], scene.edge_value[f]))
    return found


def _split(parts: int) -> onnx.ModelProto:
    outs = [f"part{k}" for k in range(parts)]
    node = helper.make_node("Split", ["x"], outs, axis=1, num_outputs=parts)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3 * parts])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, [2, 3]) for o in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_labels_face_away_from_the_other_edges_of_their_box() -> None:
    """A Loop's res_y goes straight down and res_scan heads right: "5x1" sat left of the straight edge,
    reading as res_y's. Now res_scan's label is right of its edge, res_y's left of its own."""
    scene = _scene(onnx.load(str(node_model("test_loop11"))))
    spots = label_spots(scene)
    side = {scene.edge_value[int(e)]: (bool(left), float(x)) for e, x, left in zip(spots.edge, spots.x, spots.left,
                                                                                    strict=True)}
    edge = {scene.edge_value[e]: scene.edge_polyline(e) for e in range(scene.n_edges)}
    assert side["res_scan"][0] is False and side["res_scan"][1] > edge["res_scan"][0][0]
    assert side["res_y"][0] is True and side["res_y"][1] < edge["res_y"][0][0]


def test_loop_output_labels_do_not_overlap() -> None:
    """The Loop's "1" (res_y) and "5x1" (res_scan) were drawn on top of each other."""
    scene = _scene(onnx.load(str(node_model("test_loop11"))))
    labelled = {scene.edge_value[e] for e in _rects(scene)}
    assert {"res_y", "res_scan"} <= labelled
    assert _collisions(scene) == []


@pytest.mark.parametrize("parts", [3, 6, 10])
def test_labels_of_many_outputs_do_not_overlap(parts: int) -> None:
    scene = _scene(_split(parts))
    rects = _rects(scene)
    assert {scene.edge_value[e] for e in rects} == {"x", *(f"part{k}" for k in range(parts))}
    assert _collisions(scene) == []


def test_labels_start_at_their_source_and_step_down_only_when_taken() -> None:
    """The first label of a box sits just under it; the others go down their edges a line at a time
    only as far as needed to be free."""
    scene = _scene(_split(3))
    split = scene.box_title.index("Split")
    bottom = float(scene.box_y[split] + scene.box_h[split])
    tops = sorted(y0 for src, _x0, y0, _x1, _y1 in _rects(scene).values() if src == split)
    assert tops[0] == pytest.approx(bottom + 1.0)
    assert all((t - bottom - 1.0) % LABEL_LINE == pytest.approx(0.0, abs=0.01) for t in tops)


def test_a_label_sits_beside_its_own_edge() -> None:
    """Each label starts (or, on the side an edge heads to, ends) a few units from its edge at its height."""
    scene = _scene(_split(3))
    spots = label_spots(scene)
    for e, x, y, left in zip(spots.edge, spots.x, spots.y, spots.left, strict=True):
        pts = scene.edge_polyline(int(e))
        (x0, y0), (x1, y1) = pts[0], pts[1]
        at = x0 + (x1 - x0) * (y - 1 - y0) / (y1 - y0)  # the edge at the label's top
        lean = min(max((x0 - x1 if left else x1 - x0) / (y1 - y0), 0.0), 3.0)  # the edge heading under it
        away = 4.0 + lean * LABEL_LINE
        assert (x - at) == pytest.approx(-away if left else away, abs=0.01)


def test_one_label_per_value_even_with_several_consumers() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["y"], ["a"]),
             helper.make_node("Abs", ["y"], ["b"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, [4]) for o in ("a", "b")],
                              value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    scene = _scene(helper.make_model(graph))
    labelled = [scene.edge_value[e] for e in _rects(scene)]
    assert labelled.count("y") == 1


def test_shape_texts_tell_names_placeholders_and_unknowns_apart() -> None:
    def t(shape: list[object] | None) -> onnx.TypeProto:
        return helper.make_tensor_type_proto(TensorProto.FLOAT, shape)  # type: ignore[arg-type]

    assert shape_text(t([1, 3, 224])) == "1\u00d73\u00d7224"
    assert shape_text(t(["batch", "sequence", 64])) == "batch \u00d7 sequence \u00d7 64"  # x could be in a name
    assert shape_text(t(["batch", "unk__54", 64])) == "batch \u00d7 ? \u00d7 64"
    assert shape_text(t(["batch", "unk__54", 64]), names=True) == "batch \u00d7 unk__54 \u00d7 64"
    assert shape_text(t([None, 4])) == "?\u00d74"
    assert shape_text(t(None)) == "unknown rank"
    assert shape_text(t([])) == "scalar"


def test_an_edge_tooltip_names_the_placeholder_its_label_shows_as_a_question_mark() -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["unk__7", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["unk__7", 4])])
    scene = _scene(helper.make_model(graph))
    e = scene.edge_value.index("x")
    assert scene.edge_label[e] == "?\u00d74"
    index = ModelIndex(helper.make_model(graph))
    assert "unk__7 \u00d7 4" in edge_tooltip(index, scene, e)


@pytest.mark.parametrize("edge_names", [False, True])
@pytest.mark.parametrize("name", ["gpt2_legacy.onnx", "bert_dynamo.onnx"])
def test_every_edge_label_is_its_values_type_as_the_index_reads_it(name: str, edge_names: bool) -> None:
    """Labels are made once per distinct inferred type: each is still its value's type as ``type_of`` finds it
    (declared first, else inferred), with the value's name in front when asked, and marked inferred only then."""
    model = onnx.load(str(EXPORTS / name), load_external_data=False)
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    options = LayoutOptions(edge_names=edge_names)
    scene = GraphLayout(index, expanded=GraphLayout(index).tree.paths, options=options).build()
    assert scene.n_edges > 100
    for label, inferred, value in zip(scene.edge_label, scene.edge_inferred.tolist(), scene.edge_value, strict=True):
        t, from_inference = index.type_of("", value)
        shape = label_shape_text(t)
        named = clip(value, EDGE_NAME_TEXT)
        assert label == ((f"{named}: {shape}" if shape else named) if edge_names else shape)
        assert inferred == (from_inference and t is not None)
