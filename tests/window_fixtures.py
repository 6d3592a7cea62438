"""The window fixtures the desktop tests share (a pytest plugin named in conftest): ``make_window``
makes MainWindows (shown, or hidden on request) and drops their documents afterwards, ``open_window`` makes
one with a model open; ``open_canvas`` gives a 1200x800 window once its canvas has drawn a model, and the
helpers wait for background work (``settle``), open (``open_and_wait``), compare (``diff_window``), click
(``click_group``) and undo (``press_undo``) as a user does. Qt is imported on first use, so tests of the
model layer never load it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pytestqt.qtbot import QtBot

if TYPE_CHECKING:
    from onnxviz.model.document import Document
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.main_window import MainWindow

TIMEOUT = 20000  # ms: an open, a layout or a run of the tests' small models


def wait_for_tasks() -> None:
    """Every pool's background work finished (its results are not delivered yet)."""
    from PySide6.QtCore import QThreadPool

    from onnxviz.ui.tasks import foreground_pool, waiting_pool

    for pool in (QThreadPool.globalInstance(), foreground_pool(), waiting_pool()):
        pool.waitForDone(20000)


def settle() -> None:
    """Background tasks finished and their results delivered."""
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        wait_for_tasks()
        QApplication.processEvents()


@pytest.fixture
def make_window(qtbot: QtBot) -> Iterator[Callable[..., MainWindow]]:
    """Makes MainWindows, shown unless ``make_window(shown=False)`` (a hidden window refreshes every panel at
    once, a shown one only the panels that can be seen); afterwards their documents are dropped and their
    background work delivered."""
    from onnxviz.ui.main_window import MainWindow

    made: list[MainWindow] = []

    def make(shown: bool = True) -> MainWindow:
        w = MainWindow()
        qtbot.addWidget(w)
        if shown:
            w.show()
        made.append(w)
        return w

    yield make
    for w in made:
        w.set_document(None)
    settle()


def open_and_wait(qtbot: QtBot, w: MainWindow, path: Path, timeout_ms: int = 20000) -> None:
    with qtbot.waitSignal(w.loading_finished, timeout=timeout_ms):
        w.open_path(path)


def diff_window(qtbot: QtBot, make_window: Callable[[], MainWindow], a: Path, b: Path, *, ghosts: bool = False,
                timeout_ms: int = 60000) -> MainWindow:
    """A window with ``a`` open and File > Compare With... ``b`` shown, its canvas idle (and drawing B's added
    nodes as ghost boxes when ``ghosts``)."""
    w = make_window()
    open_and_wait(qtbot, w, a, timeout_ms)
    with qtbot.waitSignal(w.diff.diff_shown, timeout=timeout_ms):
        w.diff.compare_with(b)
    qtbot.waitUntil(lambda: not w.canvas.busy and (not ghosts or bool(w.canvas.drawable.ghost_box)),
                    timeout=timeout_ms)
    settle()
    return w


@pytest.fixture
def open_window(qtbot: QtBot, make_window: Callable[[], MainWindow]) -> Callable[[Path], MainWindow]:
    """Makes a shown window (see ``make_window``) with the model at a path open."""
    def open_(path: Path) -> MainWindow:
        w = make_window()
        open_and_wait(qtbot, w, path)
        return w

    return open_


def open_canvas(qtbot: QtBot, path: Path) -> tuple[MainWindow, GraphCanvas]:
    """A shown 1200x800 window whose canvas has drawn the model at ``path``, and that canvas."""
    from onnxviz.ui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    canvas: GraphCanvas = window.canvas
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        window.open_path(path)
    return window, canvas


def click_group(qtbot: QtBot, w: MainWindow, group: str) -> None:
    """Click the box of the collapsed name-scope group ``group`` on the canvas."""
    from onnxviz.model.layout.scene import BoxKind

    def boxes() -> list[int]:
        drawable = w.canvas.drawable
        refs = drawable.scene.box_ref if drawable is not None else []
        return [b for b, ref in enumerate(refs) if ref.kind == BoxKind.GROUP and ref.group == group]

    w.canvas.collapse_group(group)
    qtbot.waitUntil(lambda: bool(boxes()) and not w.canvas.busy)
    w.canvas.view.box_clicked.emit(boxes()[0])


def doc_of(w: MainWindow) -> Document:
    """The window's open document (a test that asks has opened one)."""
    assert w.doc is not None
    return w.doc


def press_undo(qtbot: QtBot, w: MainWindow) -> None:
    """Ctrl+Z in the window, as a user presses it, then background results delivered."""
    from PySide6.QtCore import Qt

    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow)  # the shortcut works in the active window (a dialog just closed)
    qtbot.keyClick(w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    settle()
