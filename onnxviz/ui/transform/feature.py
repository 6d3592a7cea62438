"""Plugs transforms into the main window: the Transform menu, the canvas's Keep in Float, and the Transform dock
(bottom, beside the Differences)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from onnxviz.model.transform.catalog import TOOLS
from onnxviz.ui.transform.controller import TransformController
from onnxviz.ui.widgets.actions import menu_action

if TYPE_CHECKING:
    from onnxviz.ui.main_window import MainWindow

OPTIMIZERS = ("onnxslim", "onnxscript", "ort-optimize", "simplify", "opset")
QUANTIZERS = ("quantize-dynamic", "quantize-static", "quantize-int4")


def install(window: MainWindow) -> TransformController:
    """Called once by the main window after the diff exists (a transform opens it); returns the controller
    (``window.transforms``)."""
    controller = TransformController(window)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, controller.dock)
    controller.dock.hide()  # shown by the first transform
    controller.actions = _actions(window, controller)
    window.menuBar().insertMenu(window.help_menu.menuAction(), _menu(window, controller))
    window.canvas.context_actions.append(controller.add_context_actions)
    window.document_changed.connect(controller.set_document)
    window.model_changed.connect(controller.on_model_changed)
    window.document_changed.connect(lambda *_: controller.update_actions())
    controller.set_document(window.doc)
    controller.update_actions()
    return controller


def _actions(window: MainWindow, c: TransformController) -> dict[str, QAction]:
    a: dict[str, QAction] = {}
    for name, tool in TOOLS.items():
        action = menu_action(window, tool.title + "...", tool.summary[:1].upper() + tool.summary[1:])
        action.triggered.connect(lambda _=False, n=name: c.open_dialog(n))
        a[f"tool:{name}"] = action
    a["cancel"] = menu_action(window, "&Cancel Transform", "Stop the running transform (its process ends at once); "
                              "the model is unchanged")
    a["cancel"].triggered.connect(c.cancel)
    a["keep_float"] = menu_action(window, "&Keep Selection in Float", "Exclude the selected nodes (or group) from "
                                  "the next quantization")
    a["quantize_again"] = menu_action(window, "&Quantize Again", "The last quantization again, from the model it "
                                      "started from, the nodes kept in float excluded")
    a["clear_float"] = menu_action(window, "C&lear Nodes Kept in Float", "Quantize every node again")
    a["cost"] = menu_action(window, "&See What It Cost", "Run the models before and after the last transform on the "
                            "same inputs: each layer's error and each model's onnxruntime time")
    a["keep_float"].triggered.connect(lambda: c.keep_in_float())
    a["quantize_again"].triggered.connect(c.quantize_again)
    a["clear_float"].triggered.connect(c.clear_float)
    a["cost"].triggered.connect(lambda: c.see_cost(c.dock.runs.value()))
    return a


def _menu(window: MainWindow, c: TransformController) -> QMenu:
    menu = QMenu("&Transform", window)
    for group in (OPTIMIZERS, QUANTIZERS):
        for name in group:
            menu.addAction(c.actions[f"tool:{name}"])
        menu.addSeparator()
    menu.addAction(c.actions["cancel"])
    menu.addSeparator()
    for key in ("keep_float", "quantize_again", "clear_float", None, "cost"):
        if key is None:
            menu.addSeparator()
        else:
            menu.addAction(c.actions[key])
    menu.addAction(c.dock.toggleViewAction())
    return menu
