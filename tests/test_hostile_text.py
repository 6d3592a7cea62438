"""Text from a hostile file in the window: bidi controls in doc_strings are shown, not obeyed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
from onnx import TensorProto, helper
from PySide6.QtWidgets import QTextBrowser, QWidget
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

from onnxviz.model.index import display_name, display_prose
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.panels.common import Page

# the characters Unicode calls Bidi_Control, which reorder the text around them while staying invisible
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
HOSTILE = "run \u202etxt.exe\u202c now \u2067hidden\u2069 \u200fend\u200e"  # 'run exe.txt' when obeyed


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
