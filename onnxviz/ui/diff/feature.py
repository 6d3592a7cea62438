"""Plugs the model diff into the main window: File > Compare With..., the Diff menu's stepping and
closing actions, and the Differences dock at the bottom.

The menu and its actions (with their shortcuts and enabled states) are there from the first frame; the controller,
its dock and the matcher's modules (~35 ms of CPU at every start when they were made then) come on first use: an
action triggered, or another feature asking for :class:`DiffApi` (``window.diff`` too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from onnxviz.ui.ports import DiffApi, Frame, OnFirstUse, Registry, ShownDocument, Status, Tasks
from onnxviz.ui.widgets.actions import menu_action

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.diff.controller import DiffController

STEPPING = ("next", "previous", "show_b", "run_both", "run_with_inputs", "close")  # enabled while a diff is open


class DiffFeature:
    """File > Compare With... and the Diff menu; :attr:`controller` makes the controller (``window.diff``) the
    first time it is needed."""

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
                 registry: Registry) -> None:
        self.frame, self.document, self.canvas = frame, document, canvas
        self.status, self.tasks, self.registry = status, tasks, registry
        self.controller = OnFirstUse(self._make, self._attach)
        window, menus = frame.window, frame.menus
        self.actions = _actions(window, self)
        menus.file.insertAction(menus.save, self.actions["compare"])
        menus.file.insertSeparator(menus.save)
        menus.add_before_help(_diff_menu(window, self.actions))
        document.document_changed.connect(lambda *_: self.update_actions())
        registry.provide_on_demand(DiffApi, self.controller)  # type: ignore[type-abstract]
        self.update_actions()

    def _make(self) -> DiffController:
        from onnxviz.ui.diff.controller import DiffController

        return DiffController(self.frame, self.document, self.canvas, self.status, self.tasks, self.registry)

    def _attach(self, c: DiffController) -> None:
        c.actions = self.actions
        self.frame.dock_late(c, self.document)  # its dock shown when a diff is ready
        c.side_changed.connect(self.actions["show_b"].setChecked)
        for signal in (c.diff_shown, c.diff_closed):
            signal.connect(lambda *_: self.update_actions())
        c.set_document(self.document.doc)
        self.registry.provide(DiffApi, c)  # type: ignore[type-abstract]
        self.update_actions()

    def update_actions(self) -> None:
        active = (c := self.controller.made) is not None and c.active
        self.actions["compare"].setEnabled(self.document.doc is not None)
        for name in STEPPING:
            self.actions[name].setEnabled(active)


def install(frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
            registry: Registry) -> DiffFeature:
    """Adds File > Compare With... and the Diff menu; the controller (provided to the other features as
    :class:`DiffApi`) and the Differences dock come on first use."""
    return DiffFeature(frame, document, canvas, status, tasks, registry)


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


def _actions(window: QMainWindow, f: DiffFeature) -> dict[str, QAction]:
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
    a["compare"].triggered.connect(lambda: f.controller().compare_with_dialog())
    a["next"].triggered.connect(lambda: f.controller().step(1))
    a["previous"].triggered.connect(lambda: f.controller().step(-1))
    a["run_both"].triggered.connect(lambda: f.controller().run_both())
    a["run_with_inputs"].triggered.connect(lambda: f.controller().run_both_with_inputs())
    a["show_b"].setCheckable(True)
    a["show_b"].triggered.connect(lambda on: f.controller().show_b(on))
    a["close"].triggered.connect(lambda: f.controller().close_diff())
    return a
