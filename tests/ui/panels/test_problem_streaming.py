"""A model with many problems: the Problems list fills a chunk per turn of the event loop (errors
first), never the whole list at once; canvas badges find their boxes through the scene's table."""

from __future__ import annotations

import random
from pathlib import Path

import onnx
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot
from window_fixtures import open_canvas

from onnxviz.model.document import Document
from onnxviz.model.problems import Severity
from onnxviz.ui.canvas.marks import worst_badges
from onnxviz.ui.panels.problems_panel import CHUNK, ProblemsPanel


def _unknown_ops(path: Path, nodes: int) -> Path:
    """A chain of ``nodes`` nodes, every other one of an op no opset defines (one problem each)."""
    chain = [helper.make_node("Relu" if i % 2 else "NoSuchOp", [f"v{i}"], [f"v{i + 1}"], name=f"n{i}")
             for i in range(nodes)]
    graph = helper.make_graph(chain, "g", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info(f"v{nodes}", TensorProto.FLOAT, [1, 4])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def test_many_problems_are_listed_a_chunk_at_a_time(qtbot: QtBot, tmp_path: Path) -> None:
    doc = Document.open(_unknown_ops(tmp_path / "m.onnx", 2 * (2 * CHUNK + 100)))
    panel = ProblemsPanel(lambda *_: None, lambda *_: None)
    qtbot.addWidget(panel)
    counts: list[int] = []
    panel.listed.connect(counts.append)
    panel.show_problems(doc)
    total = len(doc.problems)
    assert total > 2 * CHUNK and counts == [total]            # the count is the whole list's at once
    assert panel.model.rowCount() == CHUNK and panel.filling  # the rest comes on later turns
    assert str(total) in panel.summary.text().replace(",", "")
    qtbot.waitUntil(lambda: not panel.filling, timeout=10000)
    assert panel.model.rowCount() == total
    assert panel.model.payload == panel.problems              # row k is problem k: a click selects it
    rank = {Severity.ERROR.word: 0, Severity.WARNING.word: 1, Severity.INFO.word: 2}
    words = [rank[r[0]] for r in panel.model.rows]
    assert words == sorted(words) and words[0] == 0         # errors first, through every chunk
    panel.show_problems(doc)   # listed again while filling: the earlier chunks are dropped, none twice
    panel.show_problems(doc)
    qtbot.waitUntil(lambda: not panel.filling, timeout=10000)
    assert panel.model.rowCount() == total


def test_a_list_sorted_by_a_header_is_sorted_once_whole(qtbot: QtBot, tmp_path: Path) -> None:
    doc = Document.open(_unknown_ops(tmp_path / "m.onnx", 2 * (2 * CHUNK + 100)))
    panel = ProblemsPanel(lambda *_: None, lambda *_: None)
    qtbot.addWidget(panel)
    panel.view.sortByColumn(3, panel.view.horizontalHeader().sortIndicatorOrder())  # by node
    panel.show_problems(doc)
    qtbot.waitUntil(lambda: not panel.filling, timeout=10000)
    column = [r[3] for r in panel.model.rows]
    assert len(column) == len(doc.problems)
    assert column in (sorted(column, key=str.lower), sorted(column, key=str.lower, reverse=True))


def test_badges_land_on_the_same_boxes_through_the_table(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    assert window.doc is not None
    with qtbot.waitSignal(canvas.scene_ready, timeout=20000):
        canvas.collapse_group("attn")
    d = canvas.drawable
    assert d is not None and "attn" in d.group_box
    rng = random.Random(3)
    badges = {("", n): rng.choice(["error", "warning", "info"]) for n in range(len(window.doc.model.graph.node))}
    badges[("elsewhere", 0)] = "error"
    one_by_one = worst_badges(badges, "", canvas.shown.box_of_node)
    assert d.group_box["attn"] in one_by_one and len(one_by_one) > 5
    assert worst_badges(badges, "", canvas.shown.box_of_node, d) == one_by_one
