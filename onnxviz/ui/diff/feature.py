"""Plugs the model diff into the main window: File > Compare With..., the Diff menu's stepping and
closing actions, and the Differences dock at the bottom."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from onnxviz.ui.diff.controller import DiffController
from onnxviz.ui.widgets.actions import menu_action

if TYPE_CHECKING:
    from onnxviz.ui.main_window import MainWindow


def install(window: MainWindow) -> DiffController:
    """Called once by the main window after the panels and the run feature exist; returns the controller
    (``window.diff``)."""
    controller = DiffController(window)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, controller.dock)
    controller.dock.hide()  # shown when a diff is ready
    actions = _actions(window, controller)
    compare = actions["compare"]
    window.file_menu.insertAction(window.save_action, compare)
    window.file_menu.insertSeparator(window.save_action)
    window.menuBar().insertMenu(window.help_menu.menuAction(), _diff_menu(window, actions))
    window.document_changed.connect(controller.set_document)
    window.model_changed.connect(controller.on_model_changed)
    controller.actions = actions
    _enable(controller)
    for signal in (window.document_changed, controller.diff_shown, controller.diff_closed):
        signal.connect(lambda *_: _enable(controller))
    controller.set_document(window.doc)
    return controller


def _diff_menu(window: MainWindow, actions: dict[str, QAction]) -> QMenu:
    menu = QMenu("&Diff", window)
    for name in ("compare", None, "next", "previous", "show_b", None, "run_both", "run_with_inputs", None, "close"):
        if name is None:
            menu.addSeparator()
        else:
            menu.addAction(actions[name])
    return menu


def _action(window: MainWindow, text: str, tip: str, shortcut: str | None = None) -> QAction:
    action = menu_action(window, text, tip, shortcut)
    window.addAction(action)  # its shortcut works wherever the focus is
    return action


def _actions(window: MainWindow, c: DiffController) -> dict[str, QAction]:
    a = {
        "compare": _action(window, "Co&mpare With...", "Diff this model against another .onnx (e.g. its "
                           "optimized, quantized or re-exported version)"),
        "next": _action(window, "&Next Difference", "Select the next difference", "F8"),
        "previous": _action(window, "&Previous Difference", "Select the previous difference", "Shift+F8"),
        "run_both": _action(window, "&Run Both", "Run A and B on the same inputs and colour matched values "
                            "by their error"),
        "run_with_inputs": _action(window, "Run Both with &Inputs...", "Pick A's inputs (files, images, values) "
                                   "and run A and B on them"),
        "show_b": _action(window, "Show &B's Graph", "Show B's graph on the canvas, the nodes only B has marked"),
        "close": _action(window, "&Close Diff", "Back to the plain view of this model", "Ctrl+Shift+F8"),
    }
    a["compare"].triggered.connect(c.compare_with_dialog)
    a["next"].triggered.connect(lambda: c.step(1))
    a["previous"].triggered.connect(lambda: c.step(-1))
    a["run_both"].triggered.connect(c.run_both)
    a["run_with_inputs"].triggered.connect(c.run_both_with_inputs)
    a["show_b"].setCheckable(True)
    a["show_b"].triggered.connect(c.show_b)
    c.side_changed.connect(a["show_b"].setChecked)
    a["close"].triggered.connect(c.close_diff)
    return a


def _enable(c: DiffController) -> None:
    has_doc = c.window.doc is not None
    c.actions["compare"].setEnabled(has_doc)
    for name in ("next", "previous", "show_b", "run_both", "run_with_inputs", "close"):
        c.actions[name].setEnabled(c.active)
