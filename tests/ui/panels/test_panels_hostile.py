"""Every openable hostile file and fuzz seed through every panel: facts or a clear message, never an exception."""

from __future__ import annotations

from pathlib import Path

import hostile
import onnx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.index import INITIALIZER
from onnxviz.model.graph.rawtext import model_text, node_text, value_text
from onnxviz.model.graph.summary import model_figures
from onnxviz.model.graph.tensors import load_tensor
from onnxviz.ui.panels.common import Form, find_initializer, key_html
from onnxviz.ui.panels.model_panel import ModelPanel
from onnxviz.ui.panels.node_panel import NodePanel
from onnxviz.ui.panels.problems_panel import ProblemsPanel
from onnxviz.ui.panels.value_panel import ValuePanel
from onnxviz.ui.panels.weights_panel import constant_tensor

MAX_NODES_PER_SCOPE = 40


def _documents(folder: Path) -> list[tuple[str, Document]]:
    docs = []
    for name, (case, path) in hostile.build_all(folder).items():
        if not case.refused:
            docs.append((name, Document.open(path)))
    for k, model in enumerate(hostile.seed_models()):
        path = folder / f"seed{k}.onnx"
        onnx.save(model, path)
        docs.append((f"seed{k}", Document.open(path)))
    return docs


def _exercise(doc: Document, node_panel: NodePanel, value_panel: ValuePanel) -> None:
    for scope, g in doc.index.graphs.items():
        for i in range(min(len(g.nodes), MAX_NODES_PER_SCOPE)):
            node_panel.show_node(doc, scope, i)
            node_text(g.nodes[i])
            found = constant_tensor(g.nodes[i]) if g.nodes[i].op_type == "Constant" else None
            if found is not None:
                _load(found[1], doc)
        names = list(g.producer)[:MAX_NODES_PER_SCOPE] + ["no such value"]
        for name in names:
            value_panel.show_value(doc, scope, name)
            value_text(doc.index, scope, name)
            if g.producer.get(name) == INITIALIZER:
                tensor = find_initializer(g, name)
                assert tensor is not None
                _load(tensor, doc)


def _load(tensor: onnx.TensorProto, doc: Document) -> None:
    try:
        load_tensor(tensor, doc.base_dir)
    except OnnxvizError as exc:
        assert exc.message and "\n" not in exc.message


def test_hostile_models_in_every_panel(qtbot: QtBot, tmp_path: Path) -> None:
    model_panel = ModelPanel(lambda href: None, lambda scope, node: None)
    node_panel, value_panel = NodePanel(lambda href: None), ValuePanel(lambda href: None)
    problems = ProblemsPanel(lambda scope, node: None, lambda scope, value: None)
    for widget in (model_panel, node_panel, value_panel, problems):
        qtbot.addWidget(widget)
    for name, doc in _documents(tmp_path):
        model_panel.show_document(doc)
        problems.show_problems(doc)
        model_figures(doc.model, doc.index)
        assert model_text(doc.model).text, name
        _exercise(doc, node_panel, value_panel)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_out_of_range_selection_says_so(qtbot: QtBot, example_path: Path, index: int) -> None:
    doc = Document.open(example_path)
    node_panel = NodePanel(lambda href: None)
    qtbot.addWidget(node_panel)
    node_panel.show_node(doc, ["", "", "no-such-scope"][index], [10**6, -5, 0][index])
    assert node_panel.sections == {}
    assert "Node not found" in [label.text() for label in node_panel.findChildren(QLabel)]


def test_links_in_a_models_description_open_only_web_pages(qtbot: QtBot, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A doc_string's [docs](file:///...) must not replace the Description with a local file, and
    javascript:/smb: links must not reach the desktop's URL handlers; https links open in the browser."""
    from PySide6.QtCore import QObject, QPoint, Qt, QUrl, Slot
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QTextBrowser

    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    opened: list[str] = []

    class Handler(QObject):
        @Slot(QUrl)
        def handle(self, url: QUrl) -> None:
            opened.append(url.toString())

    handler = Handler()
    for scheme in ("javascript", "smb", "https", "file"):
        QDesktopServices.setUrlHandler(scheme, handler, "handle")
    try:
        for target, expected in ((secret.as_uri(), []), ("javascript:alert(1)", []), ("smb://host/x", []),
                                 ("https://onnx.ai/", ["https://onnx.ai/"])):
            opened.clear()
            model = hostile.valid_model()
            model.doc_string = f"see [the docs]({target}) here"
            path = tmp_path / "doc.onnx"
            onnx.save(model, path)
            panel = ModelPanel(lambda href: None, lambda scope, node: None)
            qtbot.addWidget(panel)
            panel.resize(500, 800)
            panel.show()
            panel.show_document(Document.open(path))
            [view] = [b for b in panel.findChildren(QTextBrowser) if "the docs" in b.toPlainText()]
            qtbot.waitExposed(view)
            pos = view.cursorRect(view.document().find("the docs")).center() - QPoint(8, 0)
            assert view.anchorAt(pos) == target
            qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
            assert view.toPlainText() == "see the docs here" and opened == expected, target
    finally:
        for scheme in ("javascript", "smb", "https", "file"):
            QDesktopServices.unsetUrlHandler(scheme)


def test_names_with_markup_and_invisible_characters_are_shown_as_written(qtbot: QtBot, tmp_path: Path) -> None:
    """A value named '<b>x</b><img width=3000 ...>' was drawn bold with a 3,000 px image as the Value panel's
    title; a node named 'a\\nb' read 'a b', and a bidi override reordered the names in links."""
    from onnx import helper

    img = '<b>x</b><img width=3000 height=50 src="y">'
    node = helper.make_node("Relu", ["x"], [img], name="a\nb")
    node.attribute.append(helper.make_attribute("<i>note</i>", 1))
    model = hostile.model_of([node, helper.make_node("Relu", [img], ["y"], name="gpj.\u202eexe")])
    path = tmp_path / "markup.onnx"
    onnx.save(model, path)
    doc = Document.open(path)
    value_panel, node_panel = ValuePanel(lambda href: None), NodePanel(lambda href: None)
    for panel in (value_panel, node_panel):
        qtbot.addWidget(panel)
    value_panel.show_value(doc, "", img)
    title = value_panel.content.findChildren(QLabel)[0]
    assert title.text() == img and title.sizeHint().width() < 1000
    assert value_panel.sections["Connections"].body.values["Producer"].text().count("a\\x0ab") == 1
    assert "gpj.\\u202eexe" in value_panel.sections["Connections"].body.values["Consumers (1)"].text()
    node_panel.show_node(doc, "", 0)
    form = node_panel.sections["Node"].body
    assert "a\\x0ab" in form.values["Name"].text()
    attributes = node_panel.sections["Attributes (1)"].body
    [key] = [k for k in attributes.keys.values() if "note" in k.text()]
    assert key.textFormat() == Qt.TextFormat.RichText and "&lt;i&gt;note" in key.text()


def test_form_keys_plain_only_where_html_reads_them_as_written(qtbot: QtBot) -> None:
    """A key that HTML reads as written is shown as plain text (no text document); one with a tag, an entity,
    folded spaces, a line break or a zero-width space to wrap at stays HTML (a name from the file escaped into it
    still shows as written, and wraps as it did)."""
    form = Form()
    qtbot.addWidget(form)
    long = key_html("pkg.torch.export.ExportedProgram.graph_signature")
    for key in ("IR version", "Shape inference", key_html("<b>x</b>"), "a &amp; b", "two  spaces", "a\nb", long):
        form.add(key, "1")
    formats = {key: label.textFormat() for key, label in form.keys.items()}
    assert formats["IR version"] == formats["Shape inference"] == Qt.TextFormat.PlainText
    assert {formats[key_html("<b>x</b>")], formats["a &amp; b"], formats["two  spaces"], formats["a\nb"], formats[long]} \
        == {Qt.TextFormat.RichText}
    assert form.keys[key_html("<b>x</b>")].text() == "&lt;b&gt;x&lt;/b&gt;"


def test_metadata_keys_and_values_show_invisible_characters(qtbot: QtBot, tmp_path: Path) -> None:
    """A metadata key 'a\\nb' read as 'a b' in the Model panel, and a 100k-character value was laid out whole."""
    from onnx import helper

    model = hostile.model_of([helper.make_node("Relu", ["x"], ["y"])])
    onnx.helper.set_model_props(model, {"a\nb": "v\u202eal", "big": "x" * 100_000})
    path = tmp_path / "meta.onnx"
    onnx.save(model, path)
    panel = ModelPanel(lambda href: None, lambda scope, node: None)
    qtbot.addWidget(panel)
    panel.show_document(Document.open(path))
    values = panel.metadata_forms["Metadata"].values
    assert values["a\\x0ab"].text() == '<span style="white-space:pre-wrap">v\\u202eal</span>'  # a key is a name
    assert max(len(label.text()) for label in values.values()) < 5000  # 100,000 characters cut at 4,000
