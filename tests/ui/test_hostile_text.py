"""Text from a hostile file in the window: bidi controls in doc_strings are shown, not obeyed, and a
100,000-character name never makes a panel scroll sideways (its whole name stays in a tooltip and a copy)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QScrollArea, QTextBrowser, QWidget
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

from onnxviz.model.text import display_name, display_prose
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.panels.common import Page
from onnxviz.ui.widgets.names import BREAK, ElidedLabel, RichLabel

# the characters Unicode calls Bidi_Control, which reorder the text around them while staying invisible
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
HOSTILE = "run \u202etxt.exe\u202c now \u2067hidden\u2069 \u200fend\u200e"  # 'run exe.txt' when obeyed
LONG = 100_000


def test_prose_keeps_its_lines_and_shows_bidi_controls_escaped_like_names() -> None:
    text = "a\u202eb\nline two\ttab \U0001f469\u200d\U0001f4bb emoji, \u2067x\u2069 \x1b \U000e0041"
    shown = display_prose(text)
    assert shown == "a\\u202eb\nline two\ttab \U0001f469\u200d\U0001f4bb emoji, \\u2067x\\u2069 \\x1b \\U000e0041"
    assert not set(BIDI_CONTROLS) & set(display_prose(BIDI_CONTROLS))
    for c in BIDI_CONTROLS:  # one notation for names and prose
        assert display_prose(c) == display_name(c)


def _doc_model() -> onnx.ModelProto:
    """Doc strings with bidi controls on the model, its graph, a node, an If branch and a local function;
    one written as Markdown entities (the Markdown parser decodes them into the characters)."""
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then",
                             [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])],
                             doc_string="branch " + HOSTILE)
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else",
                              [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1])])
    fn = helper.make_function("local", "F", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                              [helper.make_opsetid("", 18)])
    fn.doc_string = "function " + HOSTILE
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu",
                              doc_string="**node** " + HOSTILE + " &#x202E;entity&#x202C; [li\u202enk](https://onnx.ai)"),
             helper.make_node("Greater", ["r", "x"], ["c"], name="cmp"),
             helper.make_node("If", ["c"], ["i"], name="if", then_branch=then, else_branch=other),
             helper.make_node("F", ["i"], ["y"], name="call", domain="local")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], doc_string="graph " + HOSTILE)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
                              functions=[fn], doc_string="model " + HOSTILE)
    model.ir_version = 9
    return model


def _blocks(page: QWidget) -> dict[str, str]:
    """The text of every Markdown block of a panel, by its section's title."""
    assert isinstance(page, Page)
    settle()
    return {title: b.toPlainText() for title, section in page.sections.items()
            for b in section.findChildren(QTextBrowser) if b.toPlainText()}


def _assert_shown_escaped(text: str) -> None:
    assert not set(BIDI_CONTROLS) & set(text), repr(text)
    assert "\\u202etxt.exe\\u202c" in text and "\\u2067hidden\\u2069" in text and "\\u200fend\\u200e" in text


def test_bidi_controls_in_every_doc_string_are_shown_not_obeyed(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    """A doc_string's right-to-left override made 'run exe.txt' read 'run txt.exe' in the Model and Node
    panels; graph, If-branch and function doc_strings were not shown at all."""
    path = tmp_path / "bidi_docs.onnx"
    onnx.save(_doc_model(), path)
    w = make_window()
    open_and_wait(qtbot, w, path)
    doc, panels = w.doc, w.panels  # type: ignore[attr-defined]
    assert doc is not None
    blocks = _blocks(panels.model_panel)
    assert blocks["Description"].startswith("model ") and blocks["Main graph description"].startswith("graph ")
    for title in ("Description", "Main graph description"):
        _assert_shown_escaped(blocks[title])

    doc.selection.select_node("", 0)
    text = _blocks(panels.node_panel)["Node doc_string"]
    _assert_shown_escaped(text)
    assert "\\u202eentity\\u202c" in text and "li\\u202enk" in text and "**" not in text  # still Markdown
    [view] = [b for b in panels.node_panel.sections["Node doc_string"].findChildren(QTextBrowser)]
    cursor = view.document().find("\\u202e")
    fmt = cursor.charFormat()
    assert fmt.toolTip().startswith("U+202E RIGHT-TO-LEFT OVERRIDE") and fmt.foreground().color() != \
        view.palette().text().color()  # marked as not being text of the file

    doc.selection.select_node("", 3)
    _assert_shown_escaped(_blocks(panels.node_panel)["F documentation"])

    doc.selection.clear("2.then_branch")  # browsing the If's branch: the Model panel describes it
    settle()
    assert panels.model_panel.scope_section.isVisibleTo(panels.model_panel)
    scope_text = _blocks(panels.model_panel)["Current graph"]
    _assert_shown_escaped(scope_text)
    assert scope_text.startswith("branch ")
    doc.selection.clear("fn:local:F:")
    settle()
    assert _blocks(panels.model_panel)["Current graph"].startswith("function ")


# -- 100,000-character names ------------------------------------------------------------------------
NODE, VALUE, INPUT, OUTPUT, WEIGHT = ("n" * LONG, "v" * LONG, "i" * LONG, "o" * LONG, "w" * LONG)


def _long_names_model() -> onnx.ModelProto:
    """input + weight -> Add (a long name) -> value -> Relu -> output, every name 100,000 characters."""
    weight = onnx.numpy_helper.from_array(np.arange(4, dtype=np.float32), WEIGHT)
    nodes = [helper.make_node("Add", [INPUT, WEIGHT], [VALUE], name=NODE),
             helper.make_node("Relu", [VALUE], [OUTPUT], name="relu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, [1, 4])], initializer=[weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


@pytest.fixture
def long_names(tmp_path: Path) -> Path:
    path = tmp_path / "long_names.onnx"
    onnx.save(_long_names_model(), path)
    return path


WIDTH = 1000  # the window; its docks are a few hundred pixels wide


def _open(qtbot: QtBot, make_window: Callable[[], MainWindow], path: Path) -> MainWindow:
    w = make_window()
    w.resize(WIDTH, 760)
    open_and_wait(qtbot, w, path)
    settle()
    return w


def _assert_nothing_widened(w: MainWindow, where: str) -> None:
    """Every dock shown in turn: no page scrolls sideways and no dock asks for more than a narrow width; the
    window keeps its width."""
    docks = [d for d in w.findChildren(QDockWidget) if not d.isHidden()]
    for dock in docks:
        dock.raise_()
        settle()
        assert dock.minimumSizeHint().width() < 420, (where, dock.windowTitle(), dock.minimumSizeHint())
        for page in dock.findChildren(QScrollArea):
            if isinstance(page, Page) and page.isVisible():
                assert page.horizontalScrollBar().maximum() == 0, (where, dock.windowTitle())
                assert page.widget().width() <= page.viewport().width(), (where, dock.windowTitle())
    assert w.width() == WIDTH and w.minimumSizeHint().width() < WIDTH, where


def test_long_names_never_make_a_panel_scroll_sideways(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path) -> None:
    """A 100,000-character node, value, input, output or initializer name made the Node and Value panels
    523,937 px wide (they scrolled sideways to read a row), the Raw panel's note and the Weights panel's
    title as wide as the name."""
    w = _open(qtbot, make_window, long_names)
    doc, panels = w.doc, w.panels  # type: ignore[attr-defined]
    assert doc is not None
    _assert_nothing_widened(w, "model")
    for where, select in (("node", lambda: doc.selection.select_node("", 0)),
                          ("value", lambda: doc.selection.select_value("", VALUE)),
                          ("input", lambda: doc.selection.select_value("", INPUT)),
                          ("output", lambda: doc.selection.select_value("", OUTPUT)),
                          ("initializer", lambda: doc.selection.select_value("", WEIGHT))):
        select()
        settle()
        _assert_nothing_widened(w, where)
    weights = panels.weights_panel
    assert weights.view.title.text().startswith("wwww") and weights.view.title.width() <= weights.width()

    doc.edit.rename_node("relu", "r" * LONG)  # the Edit History names the edit
    settle()
    _assert_nothing_widened(w, "renamed")
    [history] = [d.widget() for d in w.findChildren(QDockWidget) if d.objectName() == "EditHistoryDock"]
    assert history.horizontalScrollBar().maximum() == 0 and len(history.item(1).text()) < 300


def test_a_long_name_is_wrapped_in_its_row_elided_in_its_title_and_whole_in_tooltip_and_copy(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path) -> None:
    w = _open(qtbot, make_window, long_names)
    doc, page = w.doc, w.panels.node_panel  # type: ignore[attr-defined]
    assert doc is not None
    doc.selection.select_node("", 0)
    w.panels.docks["Node"].raise_()  # type: ignore[attr-defined]
    settle()
    row = page.sections["Node"].body.values["Name"]
    assert isinstance(row, RichLabel) and row.wordWrap() and BREAK in row.text()
    assert row.height() > 4 * row.fontMetrics().height() and row.width() < page.viewport().width()  # wrapped
    assert "(+99,700 characters)" in row.text()
    tip = row.toolTip()
    assert tip.count("<br>") >= 20 and max(len(line) for line in tip.split("<br>")) < 120  # lines, not one
    clipboard = QGuiApplication.clipboard()
    [copy_name] = [a for a in row.context_menu().actions() if a.text() == "Copy Name"]
    copy_name.trigger()
    assert clipboard.text() == NODE
    row.setFocus()  # as the click that selects would (else Ctrl+C is the focused graph's Copy Name)
    row.setSelection(0, 40)  # a copy of what is selected leaves out the places to wrap
    assert row.selectedText().count(BREAK) == 3
    qtbot.keySequence(row, QKeySequence.StandardKey.Copy)
    assert clipboard.text() == "n" * 37
    [copy] = [a for a in row.context_menu().actions() if a.text() == "Copy"]
    clipboard.clear()
    copy.trigger()
    assert clipboard.text() == "n" * 37

    doc.selection.select_value("", VALUE)
    w.panels.docks["Value"].raise_()  # type: ignore[attr-defined]
    settle()
    title = w.panels.value_panel.title  # type: ignore[attr-defined]
    assert isinstance(title, ElidedLabel) and title.elided and title.height() < 3 * title.fontMetrics().height()
    shown = title.elided_text()
    assert shown.startswith("vvv") and "…" in shown and title.fontMetrics().horizontalAdvance(shown) <= title.width()
    [copy_name] = title.context_menu().actions()
    copy_name.trigger()
    assert clipboard.text() == VALUE


def test_problems_and_find_cut_long_names_instead_of_scrolling(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    """A problem quoting a 100,000-character name showed it in full in its cells and tooltip (a tooltip
    wider than any screen), and a find result was a 100,000-character line the list scrolled sideways to."""
    missing = "u" * LONG + "\u202e"
    model = _long_names_model()
    model.graph.node[1].input.append(missing)  # Relu reads a value nothing defines: a problem naming it
    path = tmp_path / "problem.onnx"
    onnx.save(model, path)
    w = _open(qtbot, make_window, path)
    problems = w.panels.problems_panel  # type: ignore[attr-defined]
    [row] = [r for r in problems.model.rows if "is not defined" in r[1]]  # the name quoted is cut
    assert row[1].startswith("input 'uuuu") and row[1].endswith("(+99,921 characters)' of relu is not defined by anything")
    assert "\u202e" not in "".join(row) and all(len(cell) < 400 for cell in row), [len(c) for c in row]
    tip = problems.model.index(problems.model.rows.index(row), 1).data(Qt.ItemDataRole.ToolTipRole)
    assert len(tip) < 3000 and max(len(line) for line in tip.split("<br>")) < 120
    assert problems.view.horizontalScrollBar().maximum() == 0
    assert w.doc is not None
    w.doc.selection.select_node("", 1)  # its Problems section quotes the name too
    settle()
    _assert_nothing_widened(w, "node with a problem")

    search = w.canvas.search_panel  # type: ignore[attr-defined]
    w.canvas.open_search()  # type: ignore[attr-defined]
    search.field.setText("nnnnnnnnnn")
    search.run()
    item = search.model.index(0, 0)
    text = item.data(Qt.ItemDataRole.DisplayRole)
    assert text.startswith("nnnn") and len(text) < 300
    assert search.results.horizontalScrollBar().maximum() == 0 and search.width() < 500
    assert max(len(line) for line in item.data(Qt.ItemDataRole.ToolTipRole).split("<br>")) < 120


def test_activations_of_a_long_named_node_fit_the_dock(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    """The Activations dock's title and facts name the selected node and its output. (20,000 characters:
    the worker cannot take a feed whose name is longer than 65,535 bytes, a zip entry's limit.)"""
    model = _long_names_model()
    for old, new in ((NODE, "n" * 20_000), (VALUE, "v" * 20_000), (INPUT, "i" * 20_000)):
        for node in model.graph.node:
            node.name = new if node.name == old else node.name
            node.input[:] = [new if x == old else x for x in node.input]
            node.output[:] = [new if x == old else x for x in node.output]
        for vi in model.graph.input:
            vi.name = new if vi.name == old else vi.name
    path = tmp_path / "run.onnx"
    onnx.save(model, path)
    w = _open(qtbot, make_window, path)
    c = w.run_controller  # type: ignore[attr-defined]
    with qtbot.waitSignal(c.run_finished, timeout=60000):
        c.run()
    assert w.doc is not None
    with qtbot.waitSignal(c.dock.view.loaded, timeout=30000):
        w.doc.selection.select_node("", 0)
    settle()
    dock = c.dock
    title = dock.view.title
    assert isinstance(title, ElidedLabel) and title.text().startswith("vvv") and title.width() <= dock.width()
    assert title.height() < 3 * title.fontMetrics().height()
    assert dock.facts.minimumSizeHint().width() < 300 and BREAK in dock.facts.text()
    _assert_nothing_widened(w, "activations")


def test_a_long_function_name_in_the_breadcrumb_and_the_current_graph(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    name = "f" * LONG
    fn = helper.make_function("local", name, ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                              [helper.make_opsetid("", 18)])
    graph = helper.make_graph([helper.make_node(name, ["x"], ["y"], domain="local")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
                              functions=[fn])
    path = tmp_path / "function.onnx"
    onnx.save(model, path)
    w = _open(qtbot, make_window, path)
    canvas = w.canvas  # type: ignore[attr-defined]
    with qtbot.waitSignal(canvas.scene_ready, timeout=30000):
        canvas.enter_scope(f"fn:local:{name}:")
    settle()
    current = canvas.breadcrumb.buttons[-1]
    assert len(current.text()) < 120 and max(len(line) for line in current.toolTip().split("<br>")) < 120
    assert len(current.toolTip()) < 3000
    _assert_nothing_widened(w, "function")
    QApplication.processEvents()


def test_elided_label_ends_its_painter(qtbot: QtBot) -> None:
    """A painter left for garbage collection stays active while anything holds the paint frame (a
    sampling profiler, a traceback): the backing store then ended its paint with it active, and the
    next widget painted crashed (bench_responsiveness's sampler: a segfault in 4 of 14 opens)."""
    import sys
    from types import FrameType

    label = ElidedLabel()
    qtbot.addWidget(label)
    label.set_name("a_name_that_is_long_enough/" * 4)
    label.show()
    frames: list[FrameType] = []

    def keep(frame: FrameType, event: str, _arg: object) -> None:
        if event == "return" and frame.f_code.co_name == "paintEvent":
            frames.append(frame)

    sys.setprofile(keep)
    try:
        label.grab()
    finally:
        sys.setprofile(None)
    assert frames and not frames[0].f_locals["painter"].isActive()
