"""Issue 19: the nodes only B has drawn in A's merged view as ghost boxes between their matched
neighbours, selectable from the Differences list, the keys and the canvas, with B's fields in the
Node panel, never edited, gone when the diff closes; inside If branches (drilled in and inline) too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from conftest import TEST_DATA
from onnx import helper
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot
from window_fixtures import diff_window, doc_of, open_and_wait, settle

from onnxviz.model.layout.ghosts import Ghost, merge_ghosts
from onnxviz.model.layout.scene import BoxKind, BoxRef, Scene
from onnxviz.ui.diff.dock import COLOURS
from onnxviz.ui.diff.sides import SidesTable
from onnxviz.ui.main_window import MainWindow

EXPORTS = TEST_DATA / "exports"
TIMEOUT = 60000
Make = Callable[[], MainWindow]


def _inserted(tmp_path: Path, ops: list[str], after: int = 3) -> Path:
    """resnet_float with a chain of ``ops`` inserted after node ``after`` (its readers read the chain's end)."""
    m = onnx.load(EXPORTS / "resnet_float.onnx")
    g = m.graph
    source = g.node[after].output[0]
    names = [f"ins{k}" for k in range(len(ops))]
    chain = [helper.make_node(op, [source if k == 0 else names[k - 1]], [names[k]], name=names[k])
             for k, op in enumerate(ops)]
    for n in g.node[after + 1:]:
        n.input[:] = [names[-1] if x == source else x for x in n.input]
    for k, n in enumerate(chain):
        g.node.insert(after + 1 + k, n)
    path = tmp_path / f"resnet_{len(ops)}_{ops[0]}.onnx"
    onnx.save(m, path)
    return path



def _rect(w: MainWindow, box: int) -> tuple[float, float, float, float]:
    d = w.canvas.drawable
    return float(d.x0[box]), float(d.y0[box]), float(d.x1[box]), float(d.y1[box])


def _overlaps(w: MainWindow, box: int) -> list[int]:
    d = w.canvas.drawable
    x0, y0, x1, y1 = _rect(w, box)
    hit = (d.x1 > x0) & (d.x0 < x1) & (d.y1 > y0) & (d.y0 < y1)
    return [int(b) for b in np.flatnonzero(hit) if b != box]


def _frames_touched(w: MainWindow, box: int) -> list[int]:
    """Group frames the box lies on or in (a ghost keeps off them: it would read as one of their members)."""
    x0, y0, x1, y1 = _rect(w, box)
    g = w.canvas.drawable.scene.group_rect
    hit = (g[:, 0] + g[:, 2] > x0) & (g[:, 0] < x1) & (g[:, 1] + g[:, 3] > y0) & (g[:, 1] < y1)
    return [int(f) for f in np.flatnonzero(hit)]


def _linked(w: MainWindow, src: int, dst: int) -> bool:
    s = w.canvas.drawable.scene
    return bool(((s.edge_src == src) & (s.edge_dst == dst)).any())


def _choose(qtbot: QtBot, w: MainWindow, row: int) -> None:
    w.diff.dock.list.setCurrentRow(row)
    qtbot.waitUntil(lambda: not w.canvas.busy and w.canvas.selected_box() == w.canvas.drawable.ghost_box.get(row),
                    timeout=TIMEOUT)
    settle()


def _panel_b_fields(w: MainWindow) -> dict[str, str]:
    table = w.panels.node_panel.findChild(SidesTable)
    assert table is not None
    return {table.cell_text(r, 0).removeprefix("\u2260 "): table.cell_text(r, 2) for r in range(table.rowCount())}


def test_an_inserted_node_is_a_ghost_between_its_neighbours_selectable_and_not_editable(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _inserted(tmp_path, ["Neg"]), ghosts=True)
    c, doc = w.diff, doc_of(w)
    rows = [k for k, d in enumerate(c.dock.differences) if d.kind == "node_added"]
    assert [c.dock.differences[k].b for k in rows] == ["ins0"] and len(c.dock.differences) == 1
    d = w.canvas.drawable
    ghost = d.ghost_box[rows[0]]
    assert d.scene.box_kind[ghost] == BoxKind.GHOST and d.scene.box_title[ghost] == "Neg"
    assert w.canvas.shown_overlay is not None and "added in B (dashed)" in [s[0] for s in w.canvas.legend.swatches]
    # between the Relu it reads (node 3) and the Conv reading it (node 4): along the flow between, beside them
    relu, conv = d.node_box[3], d.node_box[4]
    assert _rect(w, relu)[1] <= _rect(w, ghost)[3] and _rect(w, ghost)[1] <= _rect(w, conv)[3]
    assert _rect(w, ghost)[0] > max(_rect(w, relu)[2], _rect(w, conv)[2])
    assert _overlaps(w, ghost) == [] and _frames_touched(w, ghost) == []
    assert _linked(w, relu, ghost) and _linked(w, ghost, conv)
    # chosen in the list: its box selected and brought into view, B's fields in the Node panel, A's selection empty
    view = w.canvas.view

    def in_view() -> bool:
        x0, y0, x1, y1 = _rect(w, ghost)
        top_left = view.map_to_scene(view.rect().topLeft().toPointF())
        bottom_right = view.map_to_scene(view.rect().bottomRight().toPointF())
        return top_left.x() <= x0 and x1 <= bottom_right.x() and top_left.y() <= y0 and y1 <= bottom_right.y()

    view.resize(500, 300)
    w.canvas.reveal_node("", len(doc.index.main.nodes) - 1)   # the last node: the ghost out of view
    qtbot.waitUntil(lambda: not in_view(), timeout=TIMEOUT)
    _choose(qtbot, w, rows[0])
    assert doc.selection.state.node < 0 and not doc.selection.state.value
    assert in_view()
    fields = _panel_b_fields(w)
    assert fields["op type"] == "Neg" and fields["name"] == "ins0" and fields["output 0"] == "ins0"
    assert w.panels.node_panel.title.text() == "Neg"
    # not editable: no node of A is selected, no edit of a node or value is offered for it
    assert w.canvas.selected_nodes() == []
    offered = [a.text().replace("&", "") for a in w.editing.context_menu().actions() if not a.isSeparator()]
    assert not any(key in text for text in offered for key in ("Delete", "Rename", "Attributes", "Extract"))
    # clicked on the canvas after another node: selected again, the list follows
    doc.selection.select_node("", 0)
    c.dock.list.setCurrentRow(-1)
    w.canvas.view.box_clicked.emit(ghost)
    assert w.canvas.selected_box() == ghost and c.dock.list.currentRow() == rows[0]
    assert "only in B (added)" in w.canvas.tooltips.text(ghost, -1)
    # closing the diff: the ghost goes, A's own boxes stay where they were
    before = d.scene.n_boxes
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=TIMEOUT):
        c.close_diff()
    settle()
    assert not w.canvas.drawable.ghost_box and w.canvas.drawable.scene.n_boxes == before - 1
    assert not (w.canvas.drawable.scene.box_kind == BoxKind.GHOST).any()


def test_a_chain_of_three_inserted_nodes_is_a_column_of_ghosts_stepped_through_with_f8(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _inserted(tmp_path, ["Relu", "Neg", "Abs"]), ghosts=True)
    c = w.diff
    rows = [k for k, d in enumerate(c.dock.differences) if d.kind == "node_added"]
    assert [c.dock.differences[k].b for k in rows] == ["ins0", "ins1", "ins2"]
    d = w.canvas.drawable
    ghosts = [d.ghost_box[k] for k in rows]
    tops = [_rect(w, g)[1] for g in ghosts]
    assert tops == sorted(tops) and len(set(tops)) == 3   # in order along the flow
    assert len({_rect(w, g)[0] for g in ghosts}) == 1      # one column
    assert all(_overlaps(w, g) == [] and _frames_touched(w, g) == [] for g in ghosts)
    relu, conv = d.node_box[3], d.node_box[4]
    assert _linked(w, relu, ghosts[0]) and _linked(w, ghosts[0], ghosts[1]) and _linked(w, ghosts[1], ghosts[2])
    assert _linked(w, ghosts[2], conv) and not _linked(w, relu, ghosts[1])
    # between the neighbours: the column's middle lies between the Relu's top and the Conv's bottom
    middle = (tops[0] + _rect(w, ghosts[2])[3]) / 2
    assert _rect(w, relu)[1] <= middle <= _rect(w, conv)[3]
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow)
    for k, ghost in enumerate(ghosts):
        qtbot.keyClick(w.canvas, Qt.Key.Key_F8)
        qtbot.waitUntil(lambda g=ghost: w.canvas.selected_box() == g, timeout=TIMEOUT)
        assert _panel_b_fields(w)["op type"] == ["Relu", "Neg", "Abs"][k]
    qtbot.keyClick(w.canvas, Qt.Key.Key_F8, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: w.canvas.selected_box() == ghosts[1], timeout=TIMEOUT)


def test_a_collapsed_group_holding_an_added_node_is_marked_by_a_ghost_counting_them(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _inserted(tmp_path, ["Relu", "Neg"]), ghosts=True)
    rows = [k for k, d in enumerate(w.diff.dock.differences) if d.kind == "node_added"]
    group = w.canvas.layout_obj.group_of(3).split("/")[0]
    assert group and w.canvas.layout_obj.group_of(4).split("/")[0] == group
    w.canvas.collapse_group(group)
    qtbot.waitUntil(lambda: not w.canvas.busy and group in w.canvas.drawable.group_box, timeout=TIMEOUT)
    settle()
    d = w.canvas.drawable
    box = d.group_box[group]
    assert not any(k in d.ghost_box for k in rows)   # not one by one: one ghost beside the group counts them
    marks = [b for b in np.flatnonzero(d.scene.box_kind == BoxKind.GHOST) if d.scene.box_ref[b].group == group]
    assert len(marks) == 1 and d.scene.box_title[marks[0]] == "2 added in B" and _overlaps(w, int(marks[0])) == []
    assert _rect(w, int(marks[0]))[0] > _rect(w, box)[2]   # beside the group box
    assert "click to open" in w.canvas.tooltips.text(int(marks[0]), -1)
    # clicked: the group opens and its ghosts are drawn between their nodes
    w.canvas.view.box_clicked.emit(int(marks[0]))
    qtbot.waitUntil(lambda: not w.canvas.busy and 3 in w.canvas.drawable.node_box, timeout=TIMEOUT)
    assert all(k in w.canvas.drawable.ghost_box for k in rows)
    # collapsed again, then chosen in the list: the group opens, the ghost is selected between the nodes
    w.canvas.collapse_group(group)
    qtbot.waitUntil(lambda: not w.canvas.busy and group in w.canvas.drawable.group_box, timeout=TIMEOUT)
    w.diff.dock.list.setCurrentRow(rows[0])
    qtbot.waitUntil(lambda: not w.canvas.busy and 3 in w.canvas.drawable.node_box
                    and w.canvas.selected_box() == w.canvas.drawable.ghost_box.get(rows[0]), timeout=TIMEOUT)
    d = w.canvas.drawable
    assert _linked(w, d.node_box[3], d.ghost_box[rows[0]])


def _vad_edited(tmp_path: Path) -> Path:
    """vad_if with a Neg inserted in the If's then branch (after its Relu), and the branch's ReduceMean changed."""
    m = onnx.load(EXPORTS / "vad_if.onnx")
    then = next(a for a in m.graph.node[8].attribute if a.name == "then_branch").g
    next(a for a in then.node[4].attribute if a.name == "axes").ints[:] = [1]
    then.node[4].input[0] = "negated"
    then.node.insert(4, helper.make_node("Neg", ["/Relu_output_0"], ["negated"], name="inserted_neg"))
    path = tmp_path / "vad_branch.onnx"
    onnx.save(m, path)
    return path


def test_an_inserted_node_in_an_if_branch_is_a_ghost_drilled_in_and_inline(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, EXPORTS / "vad_if.onnx")
    with qtbot.waitSignal(w.diff.diff_shown, timeout=TIMEOUT):
        w.diff.compare_with(_vad_edited(tmp_path))
    settle()
    c = w.diff
    row = next(k for k, d in enumerate(c.dock.differences) if d.kind == "node_added")
    scope = c.dock.differences[row].scope_a
    assert scope and c.dock.differences[row].b == "inserted_neg"
    # drilled in: the list's row opens the branch and selects the ghost between the Relu and the ReduceMean
    c.dock.list.setCurrentRow(row)
    qtbot.waitUntil(lambda: w.canvas.scope == scope and not w.canvas.busy
                    and w.canvas.selected_box() == w.canvas.drawable.ghost_box.get(row), timeout=TIMEOUT)
    d = w.canvas.drawable
    ghost = d.ghost_box[row]
    assert _linked(w, d.node_box[3], ghost) and _linked(w, ghost, d.node_box[4]) and _overlaps(w, ghost) == []
    assert _panel_b_fields(w)["op type"] == "Neg"
    assert not c.showing_b and w.canvas.doc is w.doc
    # inline in the main graph: the ghost is drawn inside the If's box, linked to the body's boxes
    w.canvas.show_scope("")
    qtbot.waitUntil(lambda: w.canvas.scope == "" and not w.canvas.busy, timeout=TIMEOUT)
    w.canvas.show_body_inline(8)
    qtbot.waitUntil(lambda: 8 in w.canvas.inline_nodes and not w.canvas.busy, timeout=TIMEOUT)
    settle()
    d = w.canvas.drawable
    emb = next(e for e in w.canvas.layout_obj.embedded if e.scope == scope)
    ghost = d.ghost_box[row]
    relu, mean = emb.box_start + emb.scene.box_of_node(3), emb.box_start + emb.scene.box_of_node(4)
    assert _linked(w, relu, ghost) and _linked(w, ghost, mean) and _overlaps(w, ghost) == []
    assert _frames_touched(w, ghost) == []   # beside the If's frame, not across its border
    c.dock.list.setCurrentRow(-1)
    c.dock.list.setCurrentRow(row)
    qtbot.waitUntil(lambda: w.canvas.selected_box() == w.canvas.drawable.ghost_box.get(row), timeout=TIMEOUT)
    assert w.canvas.scope == ""
    # the comparison colours are keyed by graph: the body's changed ReduceMean (node 4 of the branch) is
    # amber; the main graph's node 4 (an Unsqueeze, the same in B) is not, nor does it lend its colour
    rgba = w.canvas.shown_overlay.rgba
    assert tuple(int(v) for v in rgba[mean]) == COLOURS["node_changed"]
    assert rgba[d.node_box[4], 3] == 0 and rgba[relu, 3] == 0


def test_merge_ghosts_keeps_the_scene_and_turns_with_left_to_right_layouts() -> None:
    """Plain data: two boxes A -> B, a ghost between them beside, in both directions."""
    def scene(direction: str) -> Scene:
        lr = direction == "LR"
        return Scene(direction=direction, box_x=np.array([0, 200] if lr else [0, 0], np.float32),
                     box_y=np.array([0, 0] if lr else [0, 200], np.float32), box_w=np.full(2, 100, np.float32),
                     box_h=np.full(2, 30, np.float32), box_kind=np.zeros(2, np.int8), box_category=np.zeros(2, np.int8),
                     box_title=["A", "B"], box_name=["a", "b"], box_lines=[[], []],
                     box_ref=[BoxRef(BoxKind.OP, 0), BoxRef(BoxKind.OP, 1)],
                     node_box=np.array([0, 1], np.int64))
    ghosts = {"": [Ghost("", 7, "Neg", sources=(0,), targets=(1,))]}
    for direction in ("TB", "LR"):
        plain = scene(direction)
        merged = merge_ghosts(plain, ghosts)
        assert merged.n_boxes == 3 and plain.n_boxes == 2 and merged.box_ref[2] == BoxRef(BoxKind.GHOST, 7)
        assert merged.n_edges == 2 and list(merged.edge_src) == [0, 2] and list(merged.edge_dst) == [2, 1]
        lr = direction == "LR"
        along, across = (merged.box_x, merged.box_y) if lr else (merged.box_y, merged.box_x)
        assert across[2] > (30 if lr else 100)   # beside A and B
        assert (along[2] < 200 + 100 and along[2] + merged.box_w[2] > 0) if lr else 0 < along[2] + 15 < 230
        assert merged.box_w[2] > merged.box_h[2]   # a box reads the same whichever way the graph flows
        assert merge_ghosts(plain, {"other": ghosts[""]}) is plain   # no ghost of this graph: the same scene


def test_a_chain_too_long_to_draw_is_counted_and_its_nodes_are_shown_on_bs_graph(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _inserted(tmp_path, ["Neg"] * 320), ghosts=True)
    c, d = w.diff, w.canvas.drawable
    rows = [k for k, x in enumerate(c.dock.differences) if x.kind == "node_added"]
    assert len(rows) == 320 and not any(k in d.ghost_box for k in rows)
    counted = [b for b in np.flatnonzero(d.scene.box_kind == BoxKind.GHOST)]
    assert [d.scene.box_title[b] for b in counted] == ["320 added in B"]
    assert d.scene.box_lines[counted[0]] == ["more: Show B's graph"] and _overlaps(w, int(counted[0])) == []
    assert "only in B: dashed" in w.canvas.legend.title
    # one of them chosen in the list: B's graph, its node selected there
    c.dock.list.setCurrentRow(rows[5])
    qtbot.waitUntil(lambda: c.showing_b and c.doc_b.selection.state.node == c.dock.differences[rows[5]].node_b,
                    timeout=TIMEOUT)
