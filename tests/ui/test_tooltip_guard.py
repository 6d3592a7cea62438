"""The second line of defence: a tooltip whose escape was missed loads nothing (issue 38, "even where an escape is
missed"). Each case gives a widget a raw ``<img src=FIFO>`` tooltip, as a forgotten ``plain_tooltip`` would, and
asks for it as the mouse does (a ToolTip help event); the FIFO's watcher sees whether Qt opened it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from markup_model import FifoTraps
from PySide6.QtCore import QCoreApplication, QEvent, QPoint
from PySide6.QtGui import QHelpEvent, Qt
from PySide6.QtWidgets import (
    QApplication,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolTip,
    QWidget,
)
from pytestqt.qtbot import QtBot

from onnxviz.ui.widgets.tooltips import as_written, guard_tooltips, loads_a_resource


@pytest.fixture
def traps(tmp_path: Path) -> Iterator[FifoTraps]:
    folder = tmp_path / "fifos"
    folder.mkdir()
    with FifoTraps(folder) as t:
        yield t
    QToolTip.hideText()


def hover(widget: QWidget, at: QPoint) -> None:
    """A tooltip asked for at ``at`` of ``widget``, as a resting mouse asks for it."""
    QCoreApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, at, widget.mapToGlobal(at)))
    QApplication.processEvents()


def test_a_raw_tooltip_loads_its_image_without_the_guard(qtbot: QtBot, traps: FifoTraps) -> None:
    """The trap works here: Qt itself opens the FIFO a raw rich-text tooltip names."""
    button = QPushButton("x")
    qtbot.addWidget(button)
    button.show()
    QToolTip.showText(button.mapToGlobal(QPoint(2, 2)), traps.tag("direct") + " name", button)
    QApplication.processEvents()
    assert traps.take() == ["direct"]


def test_a_widgets_an_items_a_headers_and_a_tabs_raw_tooltips_load_nothing(qtbot: QtBot, traps: FifoTraps) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    guard_tooltips(app)
    button = QPushButton("x")
    button.setToolTip(traps.tag("widget") + " conv1/out")
    table = QTableWidget(1, 1)
    item = QTableWidgetItem("cell")
    item.setToolTip(traps.tag("item"))
    table.setItem(0, 0, item)
    header = QTableWidgetItem("column")
    header.setToolTip(traps.tag("header"))
    table.setHorizontalHeaderItem(0, header)
    tabs = QTabWidget()
    tabs.addTab(QWidget(), "tab")
    tabs.setTabToolTip(0, traps.tag("tab"))
    for w in (button, table, tabs):
        qtbot.addWidget(w)
        w.show()
    qtbot.waitExposed(table)

    hover(button, QPoint(2, 2))
    assert traps.take() == [] and QToolTip.text() == as_written(button.toolTip())
    hover(table.viewport(), table.visualItemRect(item).center())
    assert traps.take() == [] and QToolTip.text() == as_written(item.toolTip())
    h = table.horizontalHeader()
    hover(h.viewport(), QPoint(h.sectionViewportPosition(0) + 5, h.height() // 2))
    assert traps.take() == [] and QToolTip.text() == as_written(header.toolTip())
    bar = tabs.tabBar()
    hover(bar, bar.tabRect(0).center())
    assert traps.take() == [] and QToolTip.text() == as_written(tabs.tabToolTip(0))


def test_tooltips_that_load_nothing_are_left_to_qt(qtbot: QtBot) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    guard_tooltips(app)
    guard_tooltips(app)  # once only
    assert len([c for c in app.children() if c.objectName() == "onnxviz-tooltip-guard"]) == 1
    button = QPushButton("x")
    button.setToolTip("<b>Run</b> (F9)")
    qtbot.addWidget(button)
    button.show()
    hover(button, QPoint(2, 2))
    assert QToolTip.text() == "<b>Run</b> (F9)"
    assert not loads_a_resource("&lt;img src=&quot;/dev/zero&quot;&gt;")  # escaped: shown as written by Qt
    assert loads_a_resource("<IMG SRC='/dev/zero'>") and loads_a_resource("<p style='background: url(/x)'>")
    assert as_written("<b>a</b>\nb") == "<p style='white-space:pre-wrap'>&lt;b&gt;a&lt;/b&gt;<br>b</p>"
    assert Qt.mightBeRichText(as_written("a"))
