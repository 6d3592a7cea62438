"""The canvas in the main window on real models: selection both ways, search, groups, subgraphs, marks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx_data import node_model
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from window_fixtures import TIMEOUT, open_canvas

from onnxviz.model.document import Change, ChangeKind
from onnxviz.model.layout.scene import BoxKind
from onnxviz.ui.canvas.canvas import GraphCanvas
from onnxviz.ui.main_window import MainWindow


def box_point(canvas: GraphCanvas, box: int) -> QPoint:
    d = canvas.drawable
    assert d is not None
    x = float(d.x0[box] + d.scene.box_w[box] / 2)
    y = float(d.y0[box] + min(10.0, d.scene.box_h[box] / 2))
    return canvas.view.map_from_scene(QPointF(x, y)).toPoint()


def show_box(canvas: GraphCanvas, box: int) -> QPoint:
    d = canvas.drawable
    assert d is not None
    canvas.view.set_scale(1.0)
    canvas.view.center_on(QPointF(float(d.x0[box] + d.scene.box_w[box] / 2), float(d.y0[box] + d.scene.box_h[box] / 2)))
    return box_point(canvas, box)


def op_box(canvas: GraphCanvas, op_type: str) -> int:
    d = canvas.drawable
    assert d is not None
    return next(i for i, r in enumerate(d.scene.box_ref) if r.kind == BoxKind.OP and d.scene.box_title[i] == op_type)


def test_click_selects_and_selection_is_followed(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    assert canvas.scope == "" and canvas.drawable is not None and canvas.drawable.scene.n_boxes > 10
    doc = window.doc
    assert doc is not None
    box = op_box(canvas, "BatchNormalization")
    qtbot.mouseClick(canvas.view, Qt.MouseButton.LeftButton, pos=show_box(canvas, box))
    node = canvas.drawable.scene.box_ref[box].node
    assert doc.selection.state.node == node
    assert canvas.view.options.selected_box == box and len(canvas.view.options.selected_edges) == 2
    # another panel selects a node far away: the canvas highlights it and brings it into view
    last = op_box(canvas, "Softmax")
    doc.selection.select_node("", canvas.drawable.scene.box_ref[last].node)
    assert canvas.view.options.selected_box == last
    assert canvas.view.visible_scene_rect().contains(canvas.shown.box_rect(last))
    # empty space clears the selection
    canvas.view.set_scale(1.0)
    empty = canvas.view.map_from_scene(canvas.view.visible_scene_rect().topLeft()).toPoint() + QPoint(3, 3)
    qtbot.mouseClick(canvas.view, Qt.MouseButton.LeftButton, pos=empty)
    assert doc.selection.state.is_empty and canvas.view.options.selected_box == -1


def test_keyboard_steps_to_producer_and_consumer(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    doc = window.doc
    assert doc is not None
    relu = next(i for i, n in enumerate(doc.model.graph.node) if n.op_type == "Relu")
    doc.selection.select_node("", relu)
    canvas.view.setFocus()
    qtbot.keyClick(canvas.view, Qt.Key.Key_Up)
    assert doc.model.graph.node[doc.selection.state.node].op_type == "BatchNormalization"
    qtbot.keyClick(canvas.view, Qt.Key.Key_Down)
    qtbot.keyClick(canvas.view, Qt.Key.Key_Down)
    assert doc.model.graph.node[doc.selection.state.node].op_type == "MaxPool"


def test_fit_and_zoom_actions(qtbot: QtBot, example_path: Path) -> None:
    _, canvas = open_canvas(qtbot, example_path)
    assert not canvas.view.visible_scene_rect().contains(QRectF(*canvas.drawable.bounds))  # opens readable
    canvas.actions_by_name["fit"].trigger()
    assert canvas.view.visible_scene_rect().contains(QRectF(*canvas.drawable.bounds))
    fitted = canvas.view.scale
    canvas.actions_by_name["zoom_in"].trigger()
    assert canvas.view.scale == pytest.approx(fitted * 1.25)
    canvas.actions_by_name["actual"].trigger()
    assert canvas.view.scale == 1.0


def test_collapse_expand_and_search_reveals(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    doc = window.doc
    assert doc is not None and canvas.drawable is not None
    assert "attn" in canvas.drawable.scene.group_path
    before = canvas.drawable.scene.n_boxes
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.collapse_group("attn")
    d = canvas.drawable
    assert "attn" in d.group_box and d.scene.n_boxes < before
    # a node inside the collapsed group maps onto the group's box (badges land there)
    inside = next(i for i, n in enumerate(doc.model.graph.node) if n.name.startswith("/attn/") and n.op_type == "Softmax")
    canvas.set_node_badges({("", inside): "error"})
    assert canvas.view.options.badges == {d.group_box["attn"]: "error"}
    # search finds it and jumping reveals it
    canvas.open_search()
    canvas.search_panel.field.setText("softmax")
    canvas.search_panel.run()
    hits = [h for h in canvas.search_panel.hits if h.node == inside]
    assert hits, [h.text for h in canvas.search_panel.hits]
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.jump_to(hits[0])
    assert inside in canvas.drawable.node_box and doc.selection.state.node == inside
    assert canvas.view.options.badges == {canvas.drawable.node_box[inside]: "error"}
    # double-clicking a collapsed group box expands it
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.collapse_group("head")
    box = canvas.drawable.group_box["head"]
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        qtbot.mouseDClick(canvas.view, Qt.MouseButton.LeftButton, pos=show_box(canvas, box))
    assert "head" not in canvas.drawable.group_box and "head" in canvas.drawable.scene.group_path


def test_regex_search_and_bad_pattern(qtbot: QtBot, example_path: Path) -> None:
    _, canvas = open_canvas(qtbot, example_path)
    panel = canvas.search_panel
    panel.regex.setChecked(True)
    panel.field.setText("^/stem/.*Conv$")
    panel.run()
    assert [h.what for h in panel.hits] == ["node"]
    panel.field.setText("(")
    panel.run()
    assert panel.hits == [] and "invalid regular expression" in panel.status.text().lower()


def test_arrow_keys_in_the_find_field_choose_the_result(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    assert window.doc is not None
    canvas.open_search()
    panel = canvas.search_panel
    qtbot.keyClicks(panel.field, "matmul")
    qtbot.waitUntil(lambda: len(panel.hits) == 6)
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Up):
        qtbot.keyClick(panel.field, key)
    qtbot.keyClick(panel.field, Qt.Key.Key_Return)
    chosen = panel.hits[1]
    assert window.doc.selection.state.node == chosen.node and chosen.node >= 0


@pytest.mark.parametrize("folder", ["test_loop11", "test_if"])
def test_enter_and_leave_subgraph_with_breadcrumb(qtbot: QtBot, folder: str) -> None:
    _, canvas = open_canvas(qtbot, node_model(folder))
    holder = op_box(canvas, "Loop" if "loop" in folder else "If")
    targets = canvas.subgraphs_of(canvas.drawable.scene.box_ref[holder].node)
    assert targets and canvas.view.options.enterable == {holder}   # drawn with the "has a graph inside" mark
    with qtbot.waitSignal(canvas.scope_changed, timeout=TIMEOUT) as changed:
        if len(targets) == 1:
            qtbot.mouseDClick(canvas.view, Qt.MouseButton.LeftButton, pos=show_box(canvas, holder))
        else:
            canvas.enter_scope(targets[1][1])
    assert changed.args == [targets[0][1] if len(targets) == 1 else targets[1][1]]
    qtbot.waitUntil(lambda: not canvas.busy, timeout=TIMEOUT)
    assert canvas.drawable.scene.scope == canvas.scope != ""
    assert len(canvas.breadcrumb.buttons) == 2
    with qtbot.waitSignal(canvas.scope_changed, timeout=TIMEOUT):
        qtbot.mouseClick(canvas.breadcrumb.buttons[0], Qt.MouseButton.LeftButton)
    assert canvas.scope == "" and len(canvas.breadcrumb.buttons) == 1


def test_breadcrumb_resets_as_soon_as_another_model_is_set(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, node_model("test_loop11"))
    with qtbot.waitSignal(canvas.scope_changed, timeout=TIMEOUT):
        qtbot.mouseDClick(canvas.view, Qt.MouseButton.LeftButton, pos=show_box(canvas, op_box(canvas, "Loop")))
    assert [b.text() for b in canvas.breadcrumb.buttons] == ["main graph", "Loop #0 (body)"]
    with qtbot.waitSignal(window.loading_finished, timeout=TIMEOUT):
        window.open_path(example_path)
    assert canvas.busy                                    # the new layout is still to come
    assert canvas.scope == "" and [b.text() for b in canvas.breadcrumb.buttons] == ["main graph"]


def test_selection_in_another_scope_switches_to_it(qtbot: QtBot) -> None:
    window, canvas = open_canvas(qtbot, node_model("test_if"))
    scope = next(s for s in window.doc.index.graphs if s)
    with qtbot.waitSignal(canvas.scope_changed, timeout=TIMEOUT):
        window.doc.selection.select_node(scope, 0)
    qtbot.waitUntil(lambda: canvas.view.options.selected_box >= 0, timeout=TIMEOUT)
    assert canvas.scope == scope


def test_overlay_badges_and_export(qtbot: QtBot, example_path: Path, tmp_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    n = len(window.doc.model.graph.node)
    values = {("", i): float(i) for i in range(n)}
    canvas.set_overlay(values, "time (ms)", flagged=("", 3))
    overlay = canvas.view.options.overlay
    assert overlay is not None and canvas.legend is not None and canvas.legend.title == "time (ms)"
    first, last = canvas.drawable.node_box[0], canvas.drawable.node_box[n - 1]
    assert overlay[first, 3] == 255 and not np.array_equal(overlay[first], overlay[last])
    assert canvas.view.options.flagged_box == canvas.drawable.node_box[3]
    canvas.set_node_badges({("", 1): "warning", ("", 2): "error"})
    assert set(canvas.view.options.badges.values()) == {"warning", "error"}
    png, svg = tmp_path / "g.png", tmp_path / "g.svg"
    canvas.export_image(str(png))
    canvas.export_image(str(svg))
    image = QImage(str(png))
    assert image.height() > 600 and "MaxPool" in svg.read_text()
    canvas.clear_overlay()
    assert canvas.view.options.overlay is None and canvas.legend is None


def test_edits_rebuild_and_validation_relabels(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    qtbot.waitUntil(lambda: bool(canvas.drawable.scene.edge_inferred.any()), timeout=TIMEOUT)
    scale = canvas.view.scale
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        window.model_changed.emit(Change("Rename", ChangeKind.EDIT))
    assert canvas.view.scale == scale    # the view stays where it was
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        window.open_path(node_model("test_loop11"))
    assert canvas.scope == "" and "Loop" in canvas.drawable.scene.box_title


def test_first_problems_with_the_types_already_read_make_no_label_job(qtbot: QtBot, example_path: Path) -> None:
    """The first problems of a validation come with the inferred types there were: the edge labels are not made
    again for them (a layout pass and a frame on every open); a result with other types relabels."""
    from onnxviz.model.graph.validation import InferenceResult, ValidationResult

    window, canvas = open_canvas(qtbot, example_path)
    doc = window.doc
    assert doc is not None
    qtbot.waitUntil(lambda: not canvas.busy and not window.validation.busy, timeout=TIMEOUT)
    assert canvas.drawable.scene.edge_inferred.any()
    assert doc.apply_first_problems(doc.generation, list(doc.validation_problems))
    assert not canvas.busy
    fewer = {scope: dict(list(types.items())[1:]) for scope, types in doc.inferred_types.items()}
    assert doc.apply_validation(ValidationResult(doc.generation, InferenceResult(fewer), list(doc.validation_problems)))
    assert canvas.jobs.running is not None and canvas.jobs.running.label == "Edge labels"
    qtbot.waitUntil(lambda: not canvas.busy, timeout=TIMEOUT)
    assert doc.apply_first_problems(doc.generation, [])
    assert not canvas.busy


def test_types_coming_while_a_new_layout_waits_for_the_frame_make_no_label_job(qtbot: QtBot,
                                                                               example_path: Path) -> None:
    """A new document's layout waits for the window's next frame and reads the index's types as it starts: a
    validation result landing meanwhile is laid out with it, without a label job after it."""
    from onnxviz.model.graph.validation import InferenceResult, ValidationResult

    window, canvas = open_canvas(qtbot, example_path)
    doc = window.doc
    assert doc is not None
    qtbot.waitUntil(lambda: not canvas.busy and not window.validation.busy, timeout=TIMEOUT)
    inferred = int(canvas.drawable.scene.edge_inferred.sum())
    fewer = {scope: dict(list(types.items())[1:]) for scope, types in doc.inferred_types.items()}
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.set_document(doc)
        assert canvas.jobs.unstarted is not None
        assert doc.apply_validation(ValidationResult(doc.generation, InferenceResult(fewer), doc.validation_problems))
        assert not canvas.jobs.pending
    assert not canvas.busy and int(canvas.drawable.scene.edge_inferred.sum()) == inferred - 1


def test_enter_and_backspace_open_and_leave_a_loop_body(qtbot: QtBot) -> None:
    window, canvas = open_canvas(qtbot, node_model("test_loop11"))
    loop = op_box(canvas, "Loop")
    window.doc.selection.select_node("", canvas.drawable.scene.box_ref[loop].node)
    canvas.view.setFocus()
    with qtbot.waitSignal(canvas.scope_changed, timeout=TIMEOUT):
        qtbot.keyClick(canvas.view, Qt.Key.Key_Return)
    assert canvas.scope.endswith(".body") and canvas.trail == ["", canvas.scope]
    qtbot.waitUntil(lambda: not canvas.busy, timeout=TIMEOUT)
    with qtbot.waitSignal(canvas.scope_changed, timeout=TIMEOUT):
        qtbot.keyClick(canvas.view, Qt.Key.Key_Backspace)
    assert canvas.scope == ""


def test_tooltips_and_context_menu(qtbot: QtBot, example_path: Path) -> None:

    window, canvas = open_canvas(qtbot, example_path)
    qtbot.waitUntil(lambda: bool(window.doc.index.inferred.get("")), timeout=TIMEOUT)
    stem_conv = next(i for i, n in enumerate(window.doc.model.graph.node) if n.name == "/stem/conv/Conv")
    conv = canvas.drawable.node_box[stem_conv]
    text = canvas.tooltips.text(conv, -1)
    assert "<b>Conv</b>" in text and "/stem/conv/Conv" in text and "float32 [batch × 3 × 32 × 32]" in text
    assert "stem.conv.weight: float32 [16×3×3×3] (initializer)" in text
    edge = int(np.flatnonzero(canvas.drawable.scene.edge_src == conv)[0])
    assert canvas.drawable.scene.edge_value[edge] in canvas.tooltips.text(-1, edge)
    pos = show_box(canvas, conv)
    labels = [a.text() for a in canvas.context_menu(pos).actions()]
    assert "Copy Name" in labels and "Collapse stem" in labels and "&Fit Graph" in labels
    assert window.doc.selection.state.node == stem_conv   # right-click selects what is under the pointer
    # a real right-click shows the same menu, with the editing actions when editing is installed
    from PySide6.QtGui import QContextMenuEvent

    QApplication.sendEvent(canvas.view, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos,
                                                          canvas.view.mapToGlobal(pos)))
    assert canvas.last_menu is not None and "Copy Name" in [a.text() for a in canvas.last_menu.actions()]
    canvas.last_menu.close()


def test_dark_theme_changes_the_drawing(qtbot: QtBot, example_path: Path) -> None:
    from onnxviz.ui.canvas import style

    _, canvas = open_canvas(qtbot, example_path)
    light = canvas.view.grab().toImage().pixelColor(5, 5)
    try:
        canvas.set_dark(True)
        dark = canvas.view.grab().toImage().pixelColor(5, 5)
        assert dark.lightness() < 60 < light.lightness()
    finally:
        style.use_dark(False)


def test_search_index_finds_every_kind_in_every_scope(qapp: object) -> None:
    from onnxviz.model.document import Document
    from onnxviz.ui.canvas.search import SearchIndex

    doc = Document.open(node_model("test_loop11"))
    searcher = SearchIndex(doc.index)
    hits = searcher.search("loop")
    assert {h.what for h in hits} >= {"op"} and any(h.scope for h in searcher.search("add"))
    assert searcher.search("^y$", regex=True)[0].text == "y"
    assert [h.text for h in searcher.search("trip_count")] == ["trip_count"]
    with pytest.raises(ValueError, match="invalid regular expression"):
        searcher.search("[", regex=True)


def test_search_on_a_big_model_indexes_in_the_background(qtbot: QtBot, synth_small: Path) -> None:
    from onnxviz.ui.canvas import search

    window, canvas = open_canvas(qtbot, synth_small)
    old = search.SYNC_BUILD_NODES
    search.SYNC_BUILD_NODES = 10
    try:
        canvas.search_panel.set_index(window.doc.index)
        canvas.open_search()
        canvas.search_panel.field.setText("layers.3/attn")
        canvas.search_panel.run()
        assert canvas.search_panel.status.text() == "Indexing names..."
        qtbot.waitUntil(lambda: len(canvas.search_panel.hits) > 0, timeout=TIMEOUT)
    finally:
        search.SYNC_BUILD_NODES = old
    assert all("layers.3/attn" in h.text for h in canvas.search_panel.hits)


def test_minimap_click_moves_the_view(qtbot: QtBot, example_path: Path) -> None:
    _, canvas = open_canvas(qtbot, example_path)
    minimap = canvas.minimap
    assert minimap.isVisible() and minimap.height() > 50
    top = canvas.view.center.y()
    qtbot.mouseClick(minimap, Qt.MouseButton.LeftButton, pos=QPoint(minimap.width() // 2, minimap.height() - 8))
    assert canvas.view.center.y() > top + 200
    canvas.actions_by_name["minimap"].trigger()
    assert not minimap.isVisible()


def test_layout_runs_in_the_background_and_can_be_cancelled(qtbot: QtBot, example_path: Path) -> None:
    import time

    from onnxviz.model.progress import CancelToken, ProgressFn

    class EndlessLayout:
        def __init__(self, *_args: object) -> None:
            pass

        def build(self, progress: ProgressFn, token: CancelToken) -> object:
            while True:          # report() raises Cancelled once the token is cancelled
                progress(0.1, "Thinking")
                time.sleep(0.005)

    window, canvas = open_canvas(qtbot, example_path)
    canvas.layout_factory = EndlessLayout
    with qtbot.waitSignal(window.loading_finished, timeout=TIMEOUT):
        window.open_path(example_path)
    assert canvas.busy
    qtbot.waitUntil(lambda: canvas.progress_bar.isVisible() or hasattr(window, "task_progress"), timeout=TIMEOUT)
    canvas.view.zoom_by(1.5)   # the GUI stays responsive meanwhile
    canvas.cancel_layout()
    assert not canvas.busy and not canvas.progress_bar.isVisible()


def test_expand_all_progress_goes_on_through_the_drawing(qtbot: QtBot, example_path: Path) -> None:
    """The status bar's fraction only grows, and after the layout's own steps it names the drawing's arrays (123k
    nodes: ~1 s, which used to stand at "Layout done")."""
    _, canvas = open_canvas(qtbot, example_path)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["collapse_all"].trigger()
    steps: list[tuple[float, str]] = []
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["expand_all"].trigger()
        task = canvas.jobs.task
        assert task is not None
        task.progress.connect(lambda fraction, text: steps.append((fraction, text)))
    fractions = [f for f, _ in steps]
    assert fractions == sorted(fractions) and 0 < fractions[-1] < 1
    assert steps[-1][1] == "Preparing the drawing" and "Layout done" in [t for _, t in steps[:-1]]
    assert "attn/k" in canvas.drawable.scene.group_path


def test_cancel_while_the_drawing_is_prepared_leaves_the_canvas_free(qtbot: QtBot, example_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The status bar's Cancel cancels the task alone; clicked while the drawing's arrays are made (no check
    inside: ~1 s at 123k nodes), the job ends as cancelled, the drawing shown stays, and the next expand runs
    (the canvas used to wait for that job forever)."""
    import threading

    from onnxviz.ui.canvas import jobs

    _, canvas = open_canvas(qtbot, example_path)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["collapse_all"].trigger()
    shown, clicked, real = canvas.drawable, threading.Event(), jobs.Drawable
    tokens: list[Any] = []

    def drawing_cancelled_meanwhile(scene: Any) -> Any:
        assert clicked.wait(TIMEOUT / 1000)
        tokens[0].cancel()   # the status bar's Cancel: Task.cancel()
        return real(scene)

    monkeypatch.setattr(jobs, "Drawable", drawing_cancelled_meanwhile)
    canvas.actions_by_name["expand_all"].trigger()
    assert canvas.jobs.task is not None
    tokens.append(canvas.jobs.task.token)
    clicked.set()
    qtbot.waitUntil(lambda: not canvas.busy, timeout=TIMEOUT)
    assert canvas.drawable is shown and "attn" in canvas.drawable.group_box
    monkeypatch.setattr(jobs, "Drawable", real)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.expand_group("attn")
    assert "attn" in canvas.drawable.scene.group_path


def test_expand_and_collapse_all_groups(qtbot: QtBot, example_path: Path) -> None:
    _, canvas = open_canvas(qtbot, example_path)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["collapse_all"].trigger()
    assert set(canvas.drawable.group_box) == {"stem", "res", "attn", "head"} and not canvas.drawable.scene.group_path
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["expand_all"].trigger()
    assert not canvas.drawable.group_box and "attn/k" in canvas.drawable.scene.group_path


def test_enter_a_model_local_function(qtbot: QtBot, tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    fn = helper.make_function("custom", "Scale2", ["x"], ["y"],
                              [helper.make_node("Add", ["x", "x"], ["y"])],
                              [helper.make_opsetid("", 18)])
    graph = helper.make_graph([helper.make_node("Scale2", ["a"], ["b"], domain="custom", name="call")], "g",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, functions=[fn], opset_imports=[helper.make_opsetid("", 18),
                                                                    helper.make_opsetid("custom", 1)])
    path = tmp_path / "fn.onnx"
    onnx.save(model, path)
    _, canvas = open_canvas(qtbot, path)
    call = op_box(canvas, "Scale2")
    assert call in canvas.view.options.enterable
    with qtbot.waitSignal(canvas.scope_changed, timeout=TIMEOUT):
        qtbot.mouseDClick(canvas.view, Qt.MouseButton.LeftButton, pos=show_box(canvas, call))
    assert canvas.scope == "fn:custom:Scale2:" and canvas.trail == ["", "fn:custom:Scale2:"]
    qtbot.waitUntil(lambda: not canvas.busy, timeout=TIMEOUT)
    assert "Add" in canvas.drawable.scene.box_title
    assert [b.text() for b in canvas.breadcrumb.buttons] == ["main graph", "Scale2 (function)"]


def test_a_failing_layout_is_reported_and_clears_the_old_drawing(qtbot: QtBot, example_path: Path) -> None:
    class BrokenLayout:
        def __init__(self, *_args: object) -> None:
            pass

        def build(self, *_args: object) -> object:
            raise ValueError("no room")

    window, canvas = open_canvas(qtbot, example_path)
    canvas.layout_factory = BrokenLayout
    with qtbot.waitSignal(canvas.layout_failed, timeout=TIMEOUT) as failed:
        window.open_path(node_model("test_if"))
    assert "no room" in failed.args[0] and canvas.drawable is None
    assert "no room" in canvas.view.message and not canvas.busy
    canvas.view.grab()   # paints the message without error


def test_jobs_queued_on_a_layout_that_fails_are_dropped(qtbot: QtBot, example_path: Path) -> None:
    """Inferred shapes can arrive while a new model is laid out: their edge-label job waits for the
    layout, and when the layout fails there is nothing left to label (it ran on None and replaced the
    message, and the canvas stayed busy)."""
    import threading

    release = threading.Event()

    class SlowBrokenLayout:
        def __init__(self, *_args: object) -> None:
            pass

        def build(self, *_args: object) -> object:
            release.wait(10)
            raise ValueError("no room")

    window, canvas = open_canvas(qtbot, example_path)
    canvas.layout_factory = SlowBrokenLayout
    window.open_path(node_model("test_if"))
    qtbot.waitUntil(lambda: canvas.jobs.task is not None and canvas.jobs.unstarted is None, timeout=TIMEOUT)
    canvas.relabel()
    assert canvas.jobs.pending
    with qtbot.waitSignal(canvas.layout_failed, timeout=TIMEOUT) as failed:
        release.set()
    assert "no room" in failed.args[0] and "no room" in canvas.view.message
    assert not canvas.busy


def test_an_empty_graph_draws_a_message(qtbot: QtBot, tmp_path: Path) -> None:
    import onnx
    from onnx import helper

    path = tmp_path / "empty.onnx"
    onnx.save(helper.make_model(helper.make_graph([], "empty", [], [])), path)
    _, canvas = open_canvas(qtbot, path)
    assert canvas.drawable is not None and canvas.drawable.scene.n_boxes == 0
    assert "no nodes" in canvas.view.message
    canvas.fit()
    assert not canvas.minimap.isVisible()


def test_jump_to_an_initializer_highlights_its_reader(qtbot: QtBot, example_path: Path) -> None:
    from onnxviz.ui.canvas.search import SearchIndex

    window, canvas = open_canvas(qtbot, example_path)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["collapse_all"].trigger()
    hit = next(h for h in SearchIndex(window.doc.index).search("res.conv2.weight") if h.what == "initializer")
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.jump_to(hit)
    assert window.doc.selection.state.value == "res.conv2.weight"
    reader = next(i for i, n in enumerate(window.doc.model.graph.node) if "res.conv2.weight" in n.input)
    assert reader in canvas.drawable.node_box
    assert canvas.view.options.neighbour_boxes.tolist() == [canvas.drawable.node_box[reader]]


def test_new_documents_layout_starts_after_the_windows_next_frame(qtbot: QtBot, example_path: Path) -> None:
    """The layout thread would compete for the GIL with the first frame of a new document (panels, docks)."""
    window, canvas = open_canvas(qtbot, example_path)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.set_document(window.doc)
        assert canvas.jobs.unstarted is not None and canvas.jobs.unstarted is canvas.jobs.task   # queued, not running
    assert canvas.jobs.unstarted is None and canvas.drawable is not None


def test_new_documents_layout_does_not_queue_behind_background_tasks(qtbot: QtBot, example_path: Path) -> None:
    """Validation and the Model panel's figures hold global-pool threads while they wait for the worker
    process (a second at 12k nodes, five at 123k); a layout queued behind them drew that much later."""
    import threading

    from PySide6.QtCore import QThreadPool

    from onnxviz.ui.tasks import Task

    window, canvas = open_canvas(qtbot, example_path)
    release = threading.Event()
    pool = QThreadPool.globalInstance()
    blockers = [Task(lambda _p, _t: release.wait(TIMEOUT / 1000)) for _ in range(pool.maxThreadCount())]
    try:
        for blocker in blockers:
            blocker.start()
        qtbot.waitUntil(lambda: pool.activeThreadCount() >= pool.maxThreadCount(), timeout=TIMEOUT)
        with qtbot.waitSignal(canvas.scene_ready, timeout=5000):
            canvas.set_document(window.doc)
        assert canvas.drawable is not None
    finally:
        release.set()


def test_layout_of_a_hidden_canvas_starts_at_once(qtbot: QtBot, example_path: Path) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loading_finished, timeout=TIMEOUT):
        window.open_path(example_path)
    assert window.canvas.jobs.task is not None and window.canvas.jobs.unstarted is None


def test_waiting_layout_starts_without_a_frame(qtbot: QtBot, example_path: Path) -> None:
    """A window that paints nothing (minimised) still gets its layout, after FRAME_WAIT_MS."""
    window, canvas = open_canvas(qtbot, example_path)
    canvas.view.painted.disconnect(canvas.jobs.frame_painted)
    canvas.set_document(window.doc)
    assert canvas.drawable is None and canvas.jobs.unstarted is not None
    qtbot.waitUntil(lambda: canvas.jobs.task is None and canvas.drawable is not None, timeout=TIMEOUT)


@pytest.mark.parametrize("model", ["example", "synth"])
def test_overlay_colours_a_box_by_the_largest_value_it_shows(qtbot: QtBot, example_path: Path, synth_small: Path,
                                                            model: str) -> None:
    """The vectorised overlay against the per-node rule: a node colours its own box, or the collapsed
    group hiding it; a Constant drawn inside its consumer colours nothing."""
    from onnxviz.ui.canvas.marks import overlay_colours

    window, canvas = open_canvas(qtbot, example_path if model == "example" else synth_small)
    d = canvas.drawable
    assert d is not None and window.doc is not None
    n = len(window.doc.model.graph.node)
    rng = np.random.default_rng(0)
    values = {("", i): float(v) for i, v in enumerate(rng.normal(size=n))}
    values[("", 1)] = float("nan")
    values[("other", 0)] = 1e9  # another scope's value plays no part
    shown = overlay_colours(d, values, "", canvas.shown.box_of_node)
    rgba, lo, hi = shown.rgba, shown.legend.lo, shown.legend.hi
    expected: dict[int, float] = {}
    for (scope, node), v in values.items():
        box = canvas.shown.box_of_node(node)
        if scope == "" and np.isfinite(v) and box >= 0:
            expected[box] = max(v, expected.get(box, -np.inf))
    assert (lo, hi) == (min(expected.values()), max(expected.values()))  # what is drawn, not every value
    assert set(np.flatnonzero(rgba[:, 3])) == set(expected)
    top = max(expected, key=expected.get)
    bottom = min(expected, key=expected.get)
    assert rgba[top].tolist() != rgba[bottom].tolist()
    if model == "synth":
        assert any(d.scene.box_ref[b].kind == BoxKind.GROUP for b in expected)  # collapsed groups take values


def test_overlay_spanning_many_decades_is_coloured_on_a_log_scale(qtbot: QtBot, example_path: Path) -> None:
    """max |x| from 0.001 to 1e9 on a linear bar is one colour for all but the largest box; on the
    log bar each decade gets its own colour, and the legend says so."""
    window, canvas = open_canvas(qtbot, example_path)
    d = canvas.drawable
    assert d is not None and window.doc is not None
    boxes = {i: canvas.shown.box_of_node(i) for i in range(len(window.doc.model.graph.node))}
    own = [i for i, b in boxes.items() if b >= 0 and list(boxes.values()).count(b) == 1][:4]
    assert len(own) == 4
    wide = {("", i): v for i, v in zip(own, (1e-3, 1.0, 1e3, 1e9), strict=True)}
    canvas.set_overlay(wide, "max |x|")
    legend = canvas.legend
    assert legend is not None and legend.log and (legend.lo, legend.hi) == (1e-3, 1e9)
    colours = [tuple(canvas.view.options.overlay[boxes[i]]) for i in own]
    assert len(set(colours)) == 4  # every decade apart, the smallest three too
    canvas.set_overlay({("", i): v for i, v in zip(own, (0.5, 1.0, 2.0, 3.0), strict=True)}, "max |x|")
    assert canvas.legend is not None and not canvas.legend.log
    canvas.set_overlay({("", i): v for i, v in zip(own, (-1e-3, 1.0, 1e3, 1e9), strict=True)}, "mean")
    assert canvas.legend is not None and not canvas.legend.log  # signed values stay linear


def _own_boxes(window: MainWindow, canvas: GraphCanvas, k: int) -> list[int]:
    """``k`` nodes drawn each in a box of its own."""
    assert window.doc is not None
    boxes = {i: canvas.shown.box_of_node(i) for i in range(len(window.doc.model.graph.node))}
    own = [i for i, b in boxes.items() if b >= 0 and list(boxes.values()).count(b) == 1][:k]
    assert len(own) == k
    return own


def test_a_yes_no_overlay_has_a_two_state_legend_and_clean_nodes_neutral(qtbot: QtBot, example_path: Path) -> None:
    """NaN/Inf present on a clean run was a gradient labelled "0 ... 0" with every box mid-colour."""
    from onnxviz.ui.canvas import style
    from onnxviz.ui.canvas.marks import Scheme

    window, canvas = open_canvas(qtbot, example_path)
    own = _own_boxes(window, canvas, 3)
    flag = Scheme("flag", ("no NaN/Inf", "has NaN/Inf"))
    canvas.set_overlay({("", i): 0.0 for i in own}, "NaN/Inf present", scheme=flag)
    legend, overlay = canvas.legend, canvas.view.options.overlay
    assert legend is not None and overlay is not None
    assert [label for label, _ in legend.swatches] == ["no NaN/Inf", "has NaN/Inf"]
    neutral, warning = style.FLAG_NO.getRgb(), style.FLAG_YES.getRgb()
    assert {tuple(overlay[canvas.shown.box_of_node(i)]) for i in own} == {neutral}
    canvas.set_overlay({("", own[0]): 0.0, ("", own[1]): 1.0, ("", own[2]): 0.0}, "NaN/Inf present", scheme=flag)
    assert tuple(canvas.view.options.overlay[canvas.shown.box_of_node(own[1])]) == warning
    assert "has NaN/Inf" in canvas.tooltips.text(canvas.shown.box_of_node(own[1]), -1)
    canvas.grab().save("/tmp/overlay/test_flag_legend.png")


def test_an_overlay_where_every_box_has_the_same_value_says_so(qtbot: QtBot, example_path: Path) -> None:
    """A Loop model's max |x| was one value on every box, shown as a gradient "13 ... 13"."""
    window, canvas = open_canvas(qtbot, example_path)
    own = _own_boxes(window, canvas, 3)
    canvas.set_overlay({("", i): 13.0 for i in own}, "max |x|")
    legend = canvas.legend
    assert legend is not None and [label for label, _ in legend.swatches] == ["every box: 13"]
    colours = {tuple(canvas.view.options.overlay[canvas.shown.box_of_node(i)]) for i in own}
    assert colours == {legend.swatches[0][1]}


def test_a_signed_overlay_is_diverging_and_centred_at_zero(qtbot: QtBot, example_path: Path) -> None:
    """mean from -0.22 to 0.5 on viridis hid zero; on a diverging map 0 is its neutral middle."""
    from onnxviz.ui.canvas.marks import Scheme

    window, canvas = open_canvas(qtbot, example_path)
    own = _own_boxes(window, canvas, 3)
    canvas.set_overlay({("", i): v for i, v in zip(own, (-0.22, 0.0, 0.5), strict=True)}, "mean",
                       scheme=Scheme("signed"))
    legend, overlay = canvas.legend, canvas.view.options.overlay
    assert legend is not None and legend.zero == pytest.approx(0.22 / 0.72) and not legend.log
    negative, zero, positive = (overlay[canvas.shown.box_of_node(i)].astype(int) for i in own)
    assert min(zero[:3]) > 220  # the neutral middle: near white
    assert negative[2] > negative[0] and positive[0] > positive[2]  # blue below 0, red above
    canvas.set_overlay({("", i): v for i, v in zip(own, (-0.22, 0.0, 0.5), strict=True)}, "max |x|")
    assert canvas.legend is not None and canvas.legend.zero is None  # a level is never diverging
    canvas.grab().save("/tmp/overlay/test_signed_legend.png")


def _folded_constant_model(path: Path) -> Path:
    """Constant (drawn as a row inside the Add's box) -> Add -> Relu."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Constant", [], ["w"], name="w", value=numpy_helper.from_array(np.ones(3, np.float32))),
             helper.make_node("Add", ["x", "w"], ["a"], name="add"), helper.make_node("Relu", ["a"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    onnx.checker.check_model(str(path))
    return path


def test_run_time_of_a_folded_node_is_added_to_the_box_showing_it(qtbot: QtBot, tmp_path: Path) -> None:
    """vgg19's top time was a ConstantOfShape drawn as a W row: no visible box reached the hot colour."""
    from onnxviz.ui.canvas.marks import Scheme

    window, canvas = open_canvas(qtbot, _folded_constant_model(tmp_path / "m.onnx"))
    d = canvas.drawable
    assert d is not None and 0 not in d.node_box  # the Constant has no box of its own
    add, relu = d.node_box[1], d.node_box[2]
    canvas.set_overlay({("", 0): 920_000.0, ("", 1): 100.0, ("", 2): 3400.0}, "run time", scheme=Scheme("duration"))
    legend, overlay = canvas.legend, canvas.view.options.overlay
    assert legend is not None and (legend.lo, legend.hi) == (3400.0, 920_100.0) and not legend.log
    assert legend.scheme.text(legend.lo) == "3.4 ms" and legend.scheme.text(legend.hi) == "0.92 s"
    hot = canvas.legend.colours[-1]
    assert overlay[add].tolist() == hot.tolist() and overlay[relu].tolist() != hot.tolist()
    assert "run time: <b>0.92 s, including 1 node folded into this box</b>" in canvas.tooltips.text(add, -1)


def test_a_rename_within_its_group_redraws_the_box_without_a_layout(qtbot: QtBot, example_path: Path) -> None:
    """Renames keeping a node in its name-scope group, and their undo and redo, change the box's text in
    place: no layout thread (at 123k nodes one made the window stutter for 100-300 ms after every rename)."""
    window, canvas = open_canvas(qtbot, example_path)
    doc = window.doc
    assert doc is not None and canvas.drawable is not None
    qtbot.waitUntil(lambda: not canvas.busy and not window.validation.busy, timeout=TIMEOUT)
    drawable = canvas.drawable
    box = drawable.node_box[7]
    assert drawable.scene.box_name[box] == "/res/Add"
    for step, name in ((lambda: doc.edit.rename_node(7, "/res/Sum"), "/res/Sum"), (doc.undo, "/res/Add"),
                       (doc.redo, "/res/Sum")):
        step()
        assert canvas.jobs.task is None and not canvas.jobs.pending   # nothing laid out
        assert canvas.drawable is drawable and drawable.scene.box_name[box] == name
    doc.edit.set_metadata("note", "x")  # nothing drawn changes
    assert canvas.jobs.task is None and canvas.drawable is drawable
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        doc.edit.rename_node(7, "/head/Add")   # into another group: laid out again
        assert canvas.jobs.task is not None
    assert canvas.drawable is not drawable
    assert canvas.layout_obj.group_of(7) == "head"
    shown = canvas.drawable.node_box[7]
    assert canvas.drawable.scene.box_name[shown] == "/head/Add"
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        doc.undo()
    assert canvas.layout_obj.group_of(7) == "res"


def test_a_rename_during_a_job_on_the_layout_waits_for_it(qtbot: QtBot, example_path: Path) -> None:
    """A rename while the edge labels (or an expansion) are computed changes the box once that job ends,
    still without a layout; the job reads and replaces the scene, so it must not change meanwhile."""
    import threading

    window, canvas = open_canvas(qtbot, example_path)
    doc = window.doc
    assert doc is not None
    qtbot.waitUntil(lambda: not canvas.busy and not window.validation.busy, timeout=TIMEOUT)
    layout = canvas.layout_obj
    release = threading.Event()
    relabel = layout.relabel

    def slow_relabel() -> object:
        release.wait(TIMEOUT / 1000)
        return relabel()

    layout.relabel = slow_relabel
    try:
        canvas.relabel()
        assert canvas.jobs.task is not None
        doc.edit.rename_node(7, "/res/Total")
        assert canvas.jobs.running is not None and not canvas.jobs.running.new_layout and not canvas.jobs.pending
    finally:
        release.set()
    qtbot.waitUntil(lambda: canvas.jobs.task is None, timeout=TIMEOUT)
    assert canvas.layout_obj is layout and canvas.drawable is not None
    assert canvas.drawable.scene.box_name[canvas.drawable.node_box[7]] == "/res/Total"


def test_attention_mask_fills_are_drawn_apart_and_do_not_flatten_the_scale(qtbot: QtBot, example_path: Path) -> None:
    """A mask's -3.4e38 made max |x| put 98% of a transformer's boxes in the lowest colour; such values
    now take a colour of their own, named on the key, and the scale spans the other boxes."""
    from onnxviz.ui.canvas.marks import BEYOND_RGBA

    window, canvas = open_canvas(qtbot, example_path)
    own = _own_boxes(window, canvas, 4)
    canvas.set_overlay({("", i): v for i, v in zip(own, (1.0, 2.0, 3.0, 3.4e38), strict=True)}, "max |x|")
    legend = canvas.legend
    assert legend is not None and legend.beyond == 1 and (legend.lo, legend.hi) == (1.0, 3.0)
    colours = [tuple(canvas.view.options.overlay[canvas.shown.box_of_node(i)]) for i in own]
    assert colours[3] == BEYOND_RGBA and len(set(colours[:3])) == 3 and BEYOND_RGBA not in colours[:3]
    shots = os.environ.get("ONNXVIZ_SHOTS")
    if shots:  # for a person to look at
        canvas.view.grab().save(str(Path(shots) / "overlay_masks.png"))


def test_a_few_outliers_leave_the_scale_to_the_percentiles_and_the_key_says_so(
        qtbot: QtBot, synth_small: Path) -> None:
    window, canvas = open_canvas(qtbot, synth_small)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["expand_all"].trigger()
    own = _own_boxes(window, canvas, 200)  # the 99th percentile of 200 values leaves one out
    values = {("", i): float(k % 10) for k, i in enumerate(own[:-1])}
    values[("", own[-1])] = 1000.0  # one outlier: a linear bar would put every other box in its lowest tenth
    canvas.set_overlay(values, "std")
    legend = canvas.legend
    assert legend is not None and legend.basis == "1st-99th percentile" and not legend.log and legend.hi < 10
    from onnxviz.ui.canvas.legend import legend_title

    assert legend_title(legend) == "std, 1st-99th percentile"
    top = tuple(canvas.view.options.overlay[canvas.shown.box_of_node(own[-1])])
    nines = [tuple(canvas.view.options.overlay[canvas.shown.box_of_node(i)]) for k, i in enumerate(own[:-1]) if k % 10 == 9]
    assert top == nines[0]  # beyond the scale: the end colour
    canvas.set_overlay({("", i): float(k % 10) for k, i in enumerate(own)}, "std")
    assert canvas.legend is not None and canvas.legend.basis == ""  # no outliers: min to max
