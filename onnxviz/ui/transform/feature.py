"""Plugs transforms into the main window: the Transform menu, the canvas's Keep in Float, and the Transform dock
(bottom, beside the Differences).

The menu and its actions (with their shortcuts and enabled states) are there from the first frame; the controller,
its dock and the transform modules (~45 ms of CPU at every start when they were imported then) come on first use:
an action triggered, or the menu about to show (its dock's toggle joins the menu then)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from onnxviz.model.transform.catalog import TOOLS
from onnxviz.ui.ports import Files, Frame, Menus, OnFirstUse, Registry, ShownDocument, Status, Tasks
from onnxviz.ui.transform.actions import add_context_actions, enable_actions
from onnxviz.ui.widgets.actions import menu_action

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.transform.controller import TransformController

OPTIMIZERS = ("onnxslim", "onnxscript", "ort-optimize", "simplify", "opset")
QUANTIZERS = ("quantize-dynamic", "quantize-static", "quantize-int4")


class TransformFeature:
    """The window's Transform menu and actions; :attr:`controller` makes the controller (``window.transforms``)
    the first time it is needed."""

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
                 files: Files, registry: Registry) -> None:
        self.frame, self.document, self.canvas = frame, document, canvas
        self.status, self.tasks, self.files, self.registry = status, tasks, files, registry
        self.controller = OnFirstUse(self._make, self._attach)
        self.actions = _actions(frame.window, self)
        self.menu = _menu(frame.window, frame.menus, self.actions)
        self.menu.aboutToShow.connect(self.controller)
        canvas.context_actions.append(self.add_context_actions)
        document.document_changed.connect(lambda *_: self.update_actions())
        self.update_actions()

    def _make(self) -> TransformController:
        from onnxviz.ui.transform.controller import TransformController

        return TransformController(self.frame, self.document, self.canvas, self.status, self.tasks, self.files,
                                   self.registry)

    def _attach(self, c: TransformController) -> None:
        c.actions = self.actions
        self.frame.dock_late(c, self.document)  # its dock shown by the first transform
        self.menu.addAction(c.dock.toggleViewAction())
        c.set_document(self.document.doc)
        c.update_actions()

    def update_actions(self) -> None:
        if (c := self.controller.made) is not None:
            c.update_actions()
        else:
            enable_actions(self.actions, self.document.doc is not None)

    def add_context_actions(self, menu: QMenu) -> None:
        if (c := self.controller.made) is not None:
            c.add_context_actions(menu)
        else:
            add_context_actions(self.document, self.canvas, self.actions, menu, quantized=False)


def install(frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks, files: Files,
            registry: Registry) -> TransformFeature:
    """Adds the Transform menu (the controller comes on first use; it finds the diff in ``registry``)."""
    return TransformFeature(frame, document, canvas, status, tasks, files, registry)


def _actions(window: QMainWindow, f: TransformFeature) -> dict[str, QAction]:
    a: dict[str, QAction] = {}
    for name, tool in TOOLS.items():
        action = menu_action(window, tool.title + "...", tool.summary[:1].upper() + tool.summary[1:])
        action.triggered.connect(lambda _=False, n=name: f.controller().open_dialog(n))
        a[f"tool:{name}"] = action
    a["cancel"] = menu_action(window, "&Cancel Transform", "Stop the running transform (its process ends at once); "
                              "the model is unchanged")
    a["cancel"].triggered.connect(lambda: f.controller().cancel())
    a["keep_float"] = menu_action(window, "&Keep Selection in Float", "Exclude the selected nodes (or group) from "
                                  "the next quantization")
    a["quantize_again"] = menu_action(window, "&Quantize Again", "The last quantization again, from the model it "
                                      "started from, the nodes kept in float excluded")
    a["clear_float"] = menu_action(window, "C&lear Nodes Kept in Float", "Quantize every node again")
    a["cost"] = menu_action(window, "&See What It Cost", "Run the models before and after the last transform on the "
                            "same inputs: each layer's error and each model's onnxruntime time")
    a["keep_float"].triggered.connect(lambda: f.controller().keep_in_float())
    a["quantize_again"].triggered.connect(lambda: f.controller().quantize_again())
    a["clear_float"].triggered.connect(lambda: f.controller().clear_float())
    a["cost"].triggered.connect(lambda: (c := f.controller()).see_cost(c.dock.runs.value()))
    return a


def _menu(window: QMainWindow, menus: Menus, a: dict[str, QAction]) -> QMenu:
    """The Transform menu, before Help; the Transform dock's toggle is added last, with the dock."""
    menu = QMenu("&Transform", window)
    for group in (OPTIMIZERS, QUANTIZERS):
        for name in group:
            menu.addAction(a[f"tool:{name}"])
        menu.addSeparator()
    menu.addAction(a["cancel"])
    menu.addSeparator()
    for key in ("keep_float", "quantize_again", "clear_float", None, "cost"):
        if key is None:
            menu.addSeparator()
        else:
            menu.addAction(a[key])
    menus.add_before_help(menu)
    return menu
