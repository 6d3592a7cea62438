"""Plugs running into the main window: the Run menu and toolbar, and the Activations dock.

The menu, the toolbar (with their shortcuts and enabled states) and the dock's tab are there from the first frame;
the controller, the dock's content and the runner's modules (~40 ms of CPU at every start when they were made then)
come on first use: an action triggered, the dock shown, or another feature asking for :class:`RunApi`
(``window.run_controller`` too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar

from onnxviz.ui.ports import Frame, OnFirstUse, Registry, RunApi, ShownDocument, Status, Tasks
from onnxviz.ui.run.activations_dock import ActivationsDock
from onnxviz.ui.widgets.actions import menu_action

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.run.controller import RunController

WITH_DOCUMENT = ("run", "run_inputs", "compare_engines", "compare_file")  # enabled while a document is open


class RunFeature:
    """The Run menu and toolbar and the Activations dock; :attr:`controller` makes the controller
    (``window.run_controller``) the first time it is needed."""

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
                 settings: QSettings, registry: Registry) -> None:
        self.frame, self.document, self.canvas = frame, document, canvas
        self.status, self.tasks, self.settings, self.registry = status, tasks, settings, registry
        self.controller = OnFirstUse(self._make, self._attach)
        window = frame.window
        self.dock = ActivationsDock(window)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.dock.hide()  # placed beside the Weights panel when the first run finishes
        self.dock.visibilityChanged.connect(lambda shown: self.controller() if shown else None)
        self.actions = _actions(window, self)
        self.toolbar = _fill_menu(frame, self.actions, self.dock)
        document.document_changed.connect(lambda *_: self.update_actions())
        registry.provide_on_demand(RunApi, self.controller)  # type: ignore[type-abstract]
        self.update_actions()

    def _make(self) -> RunController:
        from onnxviz.ui.run.controller import RunController

        return RunController(self.frame, self.dock, self.document, self.canvas, self.status, self.tasks,
                             self.settings)

    def _attach(self, c: RunController) -> None:
        d = self.document
        c.actions, c.toolbar = self.actions, self.toolbar
        d.document_changed.connect(c.set_document)
        d.model_changed.connect(c.on_model_changed)
        c.adopt(d.doc)
        self.registry.provide(RunApi, c)  # type: ignore[type-abstract]

    def update_actions(self) -> None:
        """The actions' enabled states: the controller's once it is made (it follows runs too)."""
        if (c := self.controller.made) is not None:
            c.update_actions()
            return
        doc = self.document.doc
        for name in WITH_DOCUMENT:
            self.actions[name].setEnabled(doc is not None)
        self.actions["compare_saved"].setEnabled(doc is not None and doc.path is not None)
        for name in ("cancel", "first_nan", "next_nan", "export_all"):
            self.actions[name].setEnabled(False)


def install(frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
            settings: QSettings, registry: Registry) -> RunFeature:
    """Adds the Run menu and toolbar and the Activations dock; the controller (provided to the other features as
    :class:`RunApi`) comes on first use."""
    return RunFeature(frame, document, canvas, status, tasks, settings, registry)


def _actions(window: QMainWindow, f: RunFeature) -> dict[str, QAction]:
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
    a["run"].triggered.connect(lambda: f.controller().run())
    a["run_inputs"].triggered.connect(lambda: f.controller().run(ask=True))
    a["cancel"].triggered.connect(lambda: f.controller().cancel())
    a["compare_engines"].triggered.connect(lambda: f.controller().run(compare="engines"))
    a["compare_saved"].triggered.connect(lambda: f.controller().run(compare="saved"))
    a["compare_file"].triggered.connect(lambda: f.controller().compare_with_file())
    a["first_nan"].triggered.connect(lambda: f.controller().results.jump_to_first_nonfinite())
    a["next_nan"].triggered.connect(lambda: f.controller().results.jump_to_next_nonfinite())
    a["export_all"].triggered.connect(lambda: f.controller().exports.export_all())
    return a


def _fill_menu(frame: Frame, a: dict[str, QAction], dock: ActivationsDock) -> QToolBar:
    window, menu = frame.window, frame.menus.run
    for name in ("run", "run_inputs", "cancel"):
        menu.addAction(a[name])
    menu.addSeparator()
    for name in ("compare_engines", "compare_saved", "compare_file"):
        menu.addAction(a[name])
    menu.addSeparator()
    menu.addAction(a["first_nan"])
    menu.addAction(a["next_nan"])
    menu.addAction(a["export_all"])
    menu.addAction(dock.toggleViewAction())
    menu.addSeparator()
    for name in ("optimized", "profile", "reference"):
        menu.addAction(a[name])
    toolbar = QToolBar("Run", window)
    toolbar.setObjectName("RunToolBar")
    toolbar.addAction(a["run"])
    toolbar.addAction(a["run_inputs"])
    toolbar.addAction(a["cancel"])
    window.addToolBar(toolbar)
    return toolbar
