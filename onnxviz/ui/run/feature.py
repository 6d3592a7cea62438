"""Plugs running into the main window: the Run menu and toolbar, and the Activations dock."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar

from onnxviz.ui.ports import Frame, Registry, RunApi, ShownDocument, Status, Tasks
from onnxviz.ui.run.controller import RunController
from onnxviz.ui.widgets.actions import menu_action

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.canvas.canvas import GraphCanvas


def install(frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
            settings: QSettings, registry: Registry) -> RunController:
    """Adds the Run menu and toolbar and the Activations dock; returns the controller (provided to the other
    features as :class:`RunApi`)."""
    controller = RunController(frame, document, canvas, status, tasks, settings)
    window = frame.window
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, controller.dock)
    controller.dock.hide()  # placed beside the Weights panel when the first run finishes
    controller.actions = _actions(window, controller)
    _fill_menu(frame, controller)
    document.document_changed.connect(controller.set_document)
    document.model_changed.connect(controller.on_model_changed)
    controller.update_actions()
    registry.provide(RunApi, controller)  # type: ignore[type-abstract]
    return controller


def _actions(window: QMainWindow, c: RunController) -> dict[str, QAction]:
    a = {
        "run": menu_action(window, "&Run", "Run the model on CPU and capture every node output", "F9"),
        "run_inputs": menu_action(window, "Run with &Inputs...", "Choose the inputs, then run", "Shift+F9"),
        "cancel": menu_action(window, "&Cancel Run", "Stop the running model", "Ctrl+F9"),
        "compare_engines": menu_action(window, "Compare &Engines", "Run on onnxruntime and on the reference "
                                   "evaluator with the same inputs and compare every value"),
        "compare_saved": menu_action(window, "Compare with &Saved File", "Run the file on disk and the edited "
                                 "model with the same inputs and compare every value"),
        "compare_file": menu_action(window, "Compare with &Model...", "Run another model (e.g. its float16 or "
                                "quantized version) with the same inputs; values are paired by the model diff's "
                                "matcher (a quantized value through its DequantizeLinear)"),
        "first_nan": menu_action(window, "Jump to First &NaN/Inf", "Select the first node whose output has NaN "
                             "or Inf", "Ctrl+Shift+N"),
        "next_nan": menu_action(window, "Jump to Ne&xt NaN/Inf", "Select the next node after the selected one (in "
                            "topological order) whose output has NaN or Inf"),
        "export_all": menu_action(window, "Export A&ll Values...", "Write every value of the last run into a "
                              "folder, as onnxviz run --dump does (values.bin and index.json)"),
        "optimized": menu_action(window, "&Optimized Session", "Use onnxruntime graph optimizations (values may "
                             "not match the nodes one to one)", checkable=True),
        "profile": menu_action(window, "&Profile Node Times", "Record each node's run time for the overlay "
                           "(onnxruntime's profiler slows the run down)", checkable=True),
        "reference": menu_action(window, "Use the Reference E&valuator", "Run on onnx.reference instead of "
                             "onnxruntime", checkable=True),
    }
    a["run"].triggered.connect(lambda: c.run())
    a["run_inputs"].triggered.connect(lambda: c.run(ask=True))
    a["cancel"].triggered.connect(c.cancel)
    a["compare_engines"].triggered.connect(lambda: c.run(compare="engines"))
    a["compare_saved"].triggered.connect(lambda: c.run(compare="saved"))
    a["compare_file"].triggered.connect(c.compare_with_file)
    a["first_nan"].triggered.connect(c.results.jump_to_first_nonfinite)
    a["next_nan"].triggered.connect(c.results.jump_to_next_nonfinite)
    a["export_all"].triggered.connect(c.exports.export_all)
    return a


def _fill_menu(frame: Frame, c: RunController) -> None:
    window, menu = frame.window, frame.menus.run
    a = c.actions
    for name in ("run", "run_inputs", "cancel"):
        menu.addAction(a[name])
    menu.addSeparator()
    for name in ("compare_engines", "compare_saved", "compare_file"):
        menu.addAction(a[name])
    menu.addSeparator()
    menu.addAction(a["first_nan"])
    menu.addAction(a["next_nan"])
    menu.addAction(a["export_all"])
    menu.addAction(c.dock.toggleViewAction())
    menu.addSeparator()
    for name in ("optimized", "profile", "reference"):
        menu.addAction(a[name])
    toolbar = QToolBar("Run", window)
    toolbar.setObjectName("RunToolBar")
    toolbar.addAction(a["run"])
    toolbar.addAction(a["run_inputs"])
    toolbar.addAction(a["cancel"])
    window.addToolBar(toolbar)
    c.toolbar = toolbar
