"""Issue 19: the nodes only B has inside bodies - a Loop's body, an If inside a Loop's body, and a
node B added that holds bodies of its own - are ghosts where A has the graph, and choosing any of them
in the Differences list always selects something (its ghost, or B's node on B's graph)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h
from PySide6.QtCore import QPointF, Qt
from pytestqt.qtbot import QtBot
from window_fixtures import diff_window, settle

from onnxviz.ui.main_window import MainWindow
from tests.model.layout.test_nested_inline_bodies import BODY, ELSE, IF, LOOP, nested_model

TIMEOUT = 60000
Make = Callable[[], MainWindow]


def _body(m: onnx.ModelProto, *path: tuple[int, str]) -> onnx.GraphProto:
    g = m.graph
    for node, label in path:
        g = next(a for a in g.node[node].attribute if a.name == label).g
    return g


def _negated(g: onnx.GraphProto, node: int, name: str) -> None:
    """A Neg after ``g``'s node ``node`` (which writes one of the graph's outputs)."""
    out = g.node[node].output[0]
    g.node[node].output[0] = f"{name}_in"
    g.node.append(h.make_node("Neg", [f"{name}_in"], [out], name=name))


def _pair(tmp_path: Path, edit: Callable[[onnx.ModelProto], None]) -> tuple[Path, Path]:
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    onnx.save(nested_model(), a)
    m = nested_model()
    edit(m)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, b)
    return a, b



def _added_row(w: MainWindow, name: str) -> int:
    return next(k for k, d in enumerate(w.diff.dock.differences) if d.kind == "node_added" and d.b == name)


def _choose(qtbot: QtBot, w: MainWindow, row: int, scope: str) -> None:
    """The row chosen in the list: ``scope`` shown, the row's ghost selected."""
    w.diff.dock.list.setCurrentRow(-1)
    w.diff.dock.list.setCurrentRow(row)
    qtbot.waitUntil(lambda: w.canvas.scope == scope and not w.canvas.busy
                    and w.canvas.selected_box() == w.canvas.drawable.ghost_box.get(row, -2), timeout=TIMEOUT)
    settle()
    assert not w.diff.showing_b and w.canvas.doc is w.doc


def _inline(qtbot: QtBot, w: MainWindow, node: int, scope: str = "") -> None:
    w.canvas.show_body_inline(node, scope=scope)
    qtbot.waitUntil(lambda: not w.canvas.busy and any(e.scope.startswith(f"{scope}/{node}." if scope else f"{node}.")
                                                       for e in getattr(w.canvas.layout_obj, "embedded", ())),
                    timeout=TIMEOUT)
    settle()


def _linked_to(w: MainWindow, row: int, scope: str, node: int) -> bool:
    """The ghost of ``row`` reads from node ``node`` of ``scope`` (drawn in the shown scene or inside its node)."""
    d, canvas = w.canvas.drawable, w.canvas
    if scope == canvas.scope:
        src = d.node_box[node]
    else:
        emb = next(e for e in canvas.layout_obj.embedded if e.scope == scope)
        src = emb.box_start + emb.scene.box_of_node(node)
    s = d.scene
    return bool(((s.edge_src == src) & (s.edge_dst == d.ghost_box[row])).any())


def test_an_added_node_in_a_loop_body_is_a_ghost_drilled_in_and_inline(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    a, b = _pair(tmp_path, lambda m: _negated(_body(m, (LOOP, "body")), IF, "loop_neg"))
    w = diff_window(qtbot, make_window, a, b)
    row = _added_row(w, "loop_neg")
    assert w.diff.dock.differences[row].scope_a == BODY
    _choose(qtbot, w, row, BODY)                 # drilled into the Loop's body
    assert _linked_to(w, row, BODY, IF)
    w.canvas.show_scope("")
    qtbot.waitUntil(lambda: w.canvas.scope == "" and not w.canvas.busy, timeout=TIMEOUT)
    _inline(qtbot, w, LOOP)                      # the body drawn inside the Loop: the ghost with it
    assert row in w.canvas.drawable.ghost_box and _linked_to(w, row, BODY, IF)
    _choose(qtbot, w, row, "")


def test_an_added_node_in_an_if_inside_a_loop_body_is_a_ghost_drilled_in_and_inline(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    a, b = _pair(tmp_path, lambda m: _negated(_body(m, (LOOP, "body"), (IF, "else_branch")), 1, "else_neg"))
    w = diff_window(qtbot, make_window, a, b)
    row = _added_row(w, "else_neg")
    assert w.diff.dock.differences[row].scope_a == ELSE
    _choose(qtbot, w, row, ELSE)
    assert _linked_to(w, row, ELSE, 1)           # after the branch's Relu
    w.canvas.show_scope("")
    qtbot.waitUntil(lambda: w.canvas.scope == "" and not w.canvas.busy, timeout=TIMEOUT)
    _inline(qtbot, w, LOOP)
    assert row not in w.canvas.drawable.ghost_box   # the If is closed inside the body: not drawn yet
    _inline(qtbot, w, IF, BODY)                     # the If opened inside the Loop's body: a body in a body
    assert row in w.canvas.drawable.ghost_box and _linked_to(w, row, ELSE, 1)
    _choose(qtbot, w, row, "")
    w.canvas.show_body_inline(IF, on=False, scope=BODY)   # the If closed again: choosing the row drills in
    qtbot.waitUntil(lambda: not w.canvas.busy and row not in w.canvas.drawable.ghost_box, timeout=TIMEOUT)
    _choose(qtbot, w, row, ELSE)


def _added_if(m: onnx.ModelProto) -> None:
    """A new If after the Relu, its branches (a Neg, an Abs) only B has."""
    f = TensorProto.FLOAT
    then = h.make_graph([h.make_node("Neg", ["y0"], ["t"], name="new_then_neg")], "t", [],
                        [h.make_tensor_value_info("t", f, [2])])
    other = h.make_graph([h.make_node("Abs", ["y0"], ["e"], name="new_else_abs")], "e", [],
                         [h.make_tensor_value_info("e", f, [2])])
    g = m.graph
    g.node[1].output[0] = "y0"
    g.node.append(h.make_node("If", ["cond"], ["y"], name="new_if", then_branch=then, else_branch=other))


def test_an_added_node_holding_bodies_is_a_ghost_whose_double_click_shows_it_on_bs_graph(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    a, b = _pair(tmp_path, _added_if)
    w = diff_window(qtbot, make_window, a, b)
    c = w.diff
    assert [(d.kind, d.b) for d in c.dock.differences] == [("node_added", "new_if")]   # its bodies are part of it
    _choose(qtbot, w, 0, "")
    box = w.canvas.drawable.ghost_box[0]
    x0, y0 = w.canvas.drawable.x0[box], w.canvas.drawable.y0[box]
    x1, y1 = w.canvas.drawable.x1[box], w.canvas.drawable.y1[box]
    at = w.canvas.view.map_from_scene(QPointF((x0 + x1) / 2, (y0 + y1) / 2)).toPoint()
    qtbot.mouseDClick(w.canvas.view, Qt.MouseButton.LeftButton, pos=at)
    qtbot.waitUntil(lambda: c.showing_b and c.doc_b.selection.state.node == c.dock.differences[0].node_b
                    and not w.canvas.busy, timeout=TIMEOUT)
    assert w.canvas.doc is c.doc_b and w.canvas.subgraphs_of(c.dock.differences[0].node_b)   # double-click again: in


def _with_function(m: onnx.ModelProto) -> None:
    """The Relu after the Loop made a call of a model-local function (only B has it)."""
    fn = h.make_function("local", "MyRelu", ["x"], ["y"], [h.make_node("Relu", ["x"], ["y"])],
                         [h.make_opsetid("", 17)])
    m.functions.append(fn)
    m.opset_import.append(h.make_opsetid("local", 1))
    g = m.graph
    g.node[1].op_type, g.node[1].domain = "MyRelu", "local"


def test_every_kind_of_difference_chosen_selects_something(qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    """A function only B has: its graph on B's side; a weight only B has: selected on B's graph; the model's
    own fields: the Model panel."""
    def edit(m: onnx.ModelProto) -> None:
        _with_function(m)
        m.graph.initializer.append(onnx.numpy_helper.from_array(np.ones(2, np.float32), "only_in_b"))
        m.producer_name = "another exporter"

    a, b = _pair(tmp_path, edit)
    w = diff_window(qtbot, make_window, a, b)
    c = w.diff
    kinds = {d.kind: k for k, d in enumerate(c.dock.differences)}
    assert {"function_added", "weight_added", "model_changed"} <= set(kinds)
    c.dock.list.setCurrentRow(kinds["function_added"])
    qtbot.waitUntil(lambda: c.showing_b and w.canvas.scope == "fn:local:MyRelu:" and not w.canvas.busy,
                    timeout=TIMEOUT)
    c.dock.list.setCurrentRow(kinds["weight_added"])
    qtbot.waitUntil(lambda: c.showing_b and c.doc_b.selection.state.value == "only_in_b", timeout=TIMEOUT)
    c.dock.list.setCurrentRow(kinds["model_changed"])
    qtbot.waitUntil(lambda: not w.panels.docks["Model"].visibleRegion().isEmpty(), timeout=TIMEOUT)
