"""Plugs the model diff into the main window: File > Compare With..., the Diff menu's stepping and
closing actions, and the Differences dock at the bottom."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from onnxviz.ui.diff.controller import DiffController
from onnxviz.ui.ports import DiffApi, Frame, Registry, ShownDocument, Status, Tasks
from onnxviz.ui.widgets.actions import menu_action

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.canvas.canvas import GraphCanvas


def install(frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
            registry: Registry) -> DiffController:
    """Adds File > Compare With..., the Diff menu and the Differences dock; returns the controller (provided to
    the other features as :class:`DiffApi`)."""
    controller = DiffController(frame, document, canvas, status, tasks, registry)
    window, menus = frame.window, frame.menus
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, controller.dock)
    controller.dock.hide()  # shown when a diff is ready
    actions = _actions(window, controller)
    compare = actions["compare"]
    menus.file.insertAction(menus.save, compare)
    menus.file.insertSeparator(menus.save)
    menus.add_before_help(_diff_menu(window, actions))
    document.document_changed.connect(controller.set_document)
    document.model_changed.connect(controller.on_model_changed)
    controller.actions = actions
    _enable(controller)
    for signal in (document.document_changed, controller.diff_shown, controller.diff_closed):
        signal.connect(lambda *_: _enable(controller))
    controller.set_document(document.doc)
    registry.provide(DiffApi, controller)  # type: ignore[type-abstract]
    return controller


def _diff_menu(window: QMainWindow, actions: dict[str, QAction]) -> QMenu:
    menu = QMenu("&Diff", window)
    for name in ("compare", None, "next", "previous", "show_b", None, "run_both", "run_with_inputs", None, "close"):
        if name is None:
            menu.addSeparator()
        else:
            menu.addAction(actions[name])
    return menu


def _action(window: QMainWindow, text: str, tip: str, shortcut: str | None = None) -> QAction:
    action = menu_action(window, text, tip, shortcut)
    window.addAction(action)  # its shortcut works wherever the focus is
    return action


def _actions(window: QMainWindow, c: DiffController) -> dict[str, QAction]:
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
    has_doc = c.document.doc is not None
    c.actions["compare"].setEnabled(has_doc)
    for name in ("next", "previous", "show_b", "run_both", "run_with_inputs", "close"):
        c.actions[name].setEnabled(c.active)
