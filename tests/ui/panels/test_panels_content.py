"""What the panels show of a model's content, read from their widgets: small constant values beside inputs,
contrib operators' schemas (names, docs, attribute defaults and types for editing), parameters and MACs
per graph, metadata written in lines (torch's stack traces, a dynamo export's graph signature)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from conftest import TEST_DATA
from content_models import branches_model, contrib_model, small_values_model
from onnx import AttributeProto
from pytestqt.qtbot import QtBot
from test_panels import labels_text, open_model

from onnxviz.model.document import Document
from onnxviz.ui.edit.attributes import AttributeEditor
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.panels.common import key_html
from onnxviz.ui.panels.feature import Panels

EXPORTS = TEST_DATA / "exports"


@pytest.fixture
def window(make_window: Callable[..., MainWindow]) -> MainWindow:
    return make_window(shown=False)  # hidden: every panel refreshes, seen or not


def saved(model: onnx.ModelProto, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    return path


def node_named(doc: Document, name: str, scope: str = "") -> int:
    return next(i for i, n in enumerate(doc.index.graphs[scope].nodes) if n.name == name)


def input_rows(panels: Panels) -> dict[str, str]:
    """The Node panel's Inputs section: each row's key (the schema's input name) and value HTML."""
    form = next(s for t, s in panels.node_panel.sections.items() if t.startswith("Inputs")).body
    return {key: label.text() for key, label in form.values.items()}  # type: ignore[attr-defined]


def test_node_panel_shows_small_values_beside_inputs(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    panels = open_model(qtbot, window, saved(small_values_model(), tmp_path, "small"))
    doc = window.doc
    assert doc is not None
    doc.selection.select_node("", node_named(doc, "eq"))
    rows = input_rows(panels)
    assert "B" in rows and "= <code>16000</code>" in rows["B"] and "initializer" in rows["B"]
    assert "= <code>" not in rows["A"]                                 # a graph input has no value
    doc.selection.select_node("", node_named(doc, "quant"))
    assert "= <code>0.039215688</code>" in input_rows(panels)["y_scale"]  # exact in the panel
    doc.selection.select_node("", node_named(doc, "reshape"))
    assert "= <code>[1, 3, 224]</code>" in input_rows(panels)["shape"]
    doc.selection.select_node("", node_named(doc, "add"))
    assert "= <code>" not in input_rows(panels)["B"]                   # 224 elements: not read


def test_real_exports_show_branch_selector_and_scales(qtbot: QtBot, window: MainWindow) -> None:
    panels = open_model(qtbot, window, EXPORTS / "vad_if.onnx")
    doc = window.doc
    assert doc is not None
    equal = next(i for i, n in enumerate(doc.model.graph.node) if n.op_type == "Equal")
    doc.selection.select_node("", equal)
    assert "= <code>16000</code>" in input_rows(panels)["B"]
    scene = window.canvas.layout_obj.build()  # type: ignore[union-attr]
    assert scene.box_lines[scene.box_of_node(equal)] == ["B = 16000"]
    panels = open_model(qtbot, window, EXPORTS / "resnet_int8_qdq.onnx")
    scene = window.canvas.layout_obj.build()  # type: ignore[union-attr]
    quantize = [scene.box_lines[b] for b in range(scene.n_boxes) if scene.box_title[b] == "QuantizeLinear"]
    assert quantize and all(lines[0].startswith("y_scale = 0.") and lines[1].startswith("y_zero_point = ")
                            for lines in quantize)


def test_contrib_node_panel_has_names_schema_and_docs(qtbot: QtBot, window: MainWindow) -> None:
    panels = open_model(qtbot, window, EXPORTS / "mlp_int4_matmulnbits.onnx")
    doc = window.doc
    assert doc is not None
    first = next(i for i, n in enumerate(doc.model.graph.node) if n.op_type == "MatMulNBits")
    doc.selection.select_node("", first)
    text = labels_text(panels.node_panel)
    assert "com.microsoft v1" in text and "no schema known" not in text
    assert list(input_rows(panels)) == ["A", "B", "scales"]
    assert "default 0 · int" in text                                   # accuracy_level, not set in the file
    assert any(t == "MatMulNBits documentation" for t in panels.node_panel.sections)
    assert [p.message for p in doc.problems] == []                    # checked, and nothing wrong
    scene = window.canvas.layout_obj.build()  # type: ignore[union-attr]
    assert scene.box_lines[scene.box_of_node(first)] == ["B uint8 <256×4×16>", "scales <256×4>"]


def test_contrib_attributes_are_edited_with_their_schema_types(qtbot: QtBot, tmp_path: Path) -> None:
    doc = Document.open(saved(contrib_model(), tmp_path, "contrib"))
    editor = AttributeEditor(doc, "", 0)  # MatMulNBits
    qtbot.addWidget(editor)
    names = [editor.add_combo.itemText(k) for k in range(editor.add_combo.count())]
    assert "accuracy_level" in names
    editor.add_combo.setCurrentText("accuracy_level")
    assert editor.add_value.placeholderText() == "default: 0"
    editor.add_value.setText("2")
    editor.add_attribute()
    added = next(a for a in doc.model.graph.node[0].attribute if a.name == "accuracy_level")
    assert added.type == AttributeProto.INT and added.i == 2          # an int, as the schema says


def test_model_panel_counts_parameters_and_macs_per_branch(qtbot: QtBot, window: MainWindow,
                                                           tmp_path: Path) -> None:
    panels = open_model(qtbot, window, saved(branches_model(), tmp_path, "branches"))
    model_panel = panels.model_panel
    qtbot.waitUntil(lambda: model_panel.settled, timeout=20000)
    assert model_panel.cost_form is not None
    parameters = model_panel.cost_form.values["Parameters"].text()
    assert parameters.startswith("127 (524 B)")
    for label, count in (("main graph", "10"), ("If branch (then_branch)", "110"),
                         ("If branch (else_branch)", "3"), ("Scale (function)", "4")):
        assert f"{label}</a> {count}" in parameters
    macs = model_panel.cost_form.values["MACs"].text()
    assert "one run of each body" in macs and "If branch (then_branch)</a> 200" in macs


def test_metadata_keeps_its_lines_in_the_node_and_model_panels(qtbot: QtBot, window: MainWindow,
                                                               tmp_path: Path) -> None:
    model = branches_model()
    model.functions[0].metadata_props.add(key="origin", value="traced\nby hand")
    panels = open_model(qtbot, window, saved(model, tmp_path, "branches"))
    doc = window.doc
    assert doc is not None
    doc.selection.select_node("", 0)  # the If, with a stack trace
    section = next(s for t, s in panels.node_panel.sections.items() if t.startswith("Metadata"))
    trace = section.body.values[key_html("pkg.torch.onnx.stack_trace")].text()  # type: ignore[attr-defined]
    assert "in forward\n    x = self.fc(x)\nFile &quot;torch/nn/" in trace and "\\x0a" not in trace
    doc.selection.clear()
    graph = panels.model_panel.metadata_forms["Graph metadata"].values
    assert "inputs:\n  x: USER_INPUT\noutputs:" in graph["graph_signature"].text()
    assert "ring\\x07" in graph["bell"].text()                        # other control characters stay escaped
    assert "Metadata" in panels.model_panel.metadata_forms              # the model's own, beside the graph's
    panels.model_panel.show_scope("fn:local:Scale:")  # the function's own metadata
    assert "origin: " in panels.model_panel.scope_label.text()
    assert "traced\nby hand" in panels.model_panel.scope_label.text()


def test_dynamo_export_shows_its_graph_signature(qtbot: QtBot, window: MainWindow) -> None:
    panels = open_model(qtbot, window, EXPORTS / "bert_dynamo.onnx")
    forms = panels.model_panel.metadata_forms
    label = forms["Graph metadata"].values[key_html("pkg.torch.export.ExportedProgram.graph_signature")]
    folded = label.text()   # opens folded: the panel starts on the model's facts, not hundreds of lines
    assert folded.count("\n") == 2 and "# inputs" in folded and "characters)" in folded and "show all" in folded
    label.linkActivated.emit("metadata:unfold")
    lines = label.text().count("\n") + 1
    assert lines > 12 and "characters)" not in label.text() and "show less" in label.text()
    label.linkActivated.emit("metadata:fold")
    assert label.text() == folded
