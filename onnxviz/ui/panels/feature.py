"""Plugs the inspector panels into the main window: docks, View-menu toggles and selection following."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QWidget

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.selection import SelectionState
from onnxviz.ui.panels.model_panel import ModelPanel
from onnxviz.ui.panels.navigation import Navigator
from onnxviz.ui.panels.node_panel import NodePanel
from onnxviz.ui.panels.problems_panel import ProblemsPanel
from onnxviz.ui.panels.raw_panel import RawPanel
from onnxviz.ui.panels.value_panel import ValuePanel
from onnxviz.ui.panels.weights_panel import WeightsPanel
from onnxviz.ui.ports import Frame, NodeSection, PanelsApi, Registry, ShownDocument

if TYPE_CHECKING:
    from onnxviz.ui.canvas.canvas import GraphCanvas

RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea


class Panels(QObject):
    """Owns the panels and keeps them in step with the document and its selection."""

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, settings: QSettings) -> None:
        super().__init__(frame.window)
        self.window = frame.window
        self.view_menu, self.settings = frame.menus.view, settings
        self.doc: Document | None = None
        self.navigator = Navigator(document, canvas)
        self.navigator.show_attribute_tensor = self._show_attribute_tensor
        link = self.navigator.open
        self.model_panel = ModelPanel(link, self._select_node)
        self.node_panel = NodePanel(link)
        self.value_panel = ValuePanel(link)
        self.weights_panel = WeightsPanel()
        self.problems_panel = ProblemsPanel(self._select_node, self._select_value)
        self.raw_panel = RawPanel()
        self.docks: dict[str, QDockWidget] = {}
        self._pending: dict[str, Callable[[], None]] = {}  # refreshes waiting for their dock to be seen
        self._add_docks()
        document.document_changed.connect(self.set_document)
        document.model_changed.connect(self._on_model_changed)
        canvas.weight_row_clicked.connect(self._show_weight)
        self.set_document(document.doc)

    # -- docks -----------------------------------------------------------------------------------
    def _add_docks(self) -> None:
        specs = [("Model", self.model_panel, RIGHT), ("Node", self.node_panel, RIGHT),
                 ("Value", self.value_panel, RIGHT), ("Weights", self.weights_panel, RIGHT),
                 ("Problems", self.problems_panel, BOTTOM), ("Raw", self.raw_panel, BOTTOM)]
        w = self.window
        for title, widget, area in specs:
            dock = self._dock(title, widget)
            w.addDockWidget(area, dock)
            self.view_menu.addAction(dock.toggleViewAction())
        d = self.docks
        w.splitDockWidget(d["Model"], d["Weights"], Qt.Orientation.Vertical)
        w.tabifyDockWidget(d["Model"], d["Node"])
        w.tabifyDockWidget(d["Node"], d["Value"])
        w.tabifyDockWidget(d["Problems"], d["Raw"])
        if self.settings.value("window/state") is None:
            QTimer.singleShot(0, self._default_sizes)  # once the window has its real size
        d["Model"].raise_()
        d["Problems"].raise_()
        for title in ("Model", "Raw"):
            d[title].visibilityChanged.connect(lambda visible, t=title: self._on_visibility(t, visible))

    def _default_sizes(self) -> None:
        d, w = self.docks, self.window
        w.resizeDocks([d["Model"]], [440], Qt.Orientation.Horizontal)
        w.resizeDocks([d["Model"], d["Weights"]], [520, 440], Qt.Orientation.Vertical)
        w.resizeDocks([d["Problems"]], [170], Qt.Orientation.Vertical)

    def _dock(self, title: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(title, self.window)
        dock.setObjectName(f"panels.{title.lower()}")
        dock.setWidget(widget)
        dock.toggleViewAction().setText(f"{title} Panel")
        self.docks[title] = dock
        return dock

    # -- following the document --------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        if self.doc is not None:
            self.doc.selection.changed.disconnect(self._on_selection)
        self.doc = doc
        if doc is not None:
            doc.selection.changed.connect(self._on_selection)
        self._when_seen("Model", lambda: self.model_panel.show_document(doc))
        self.problems_panel.show_problems(doc)
        self.weights_panel.clear()
        self._on_selection(doc.selection.state if doc else SelectionState(), raise_dock=False)

    def _on_model_changed(self, change: Change) -> None:
        if self.doc is None:
            return
        doc = self.doc
        if change.kind == ChangeKind.VALIDATED:
            self._when_seen("Model", lambda: self.model_panel.show_validation(doc))
        else:
            self._when_seen("Model", lambda: self.model_panel.show_document(doc))  # a Save As renames the file
        if change.kind == ChangeKind.SAVED:
            return
        self.problems_panel.show_problems(doc)
        if change.kind != ChangeKind.VALIDATED:
            self.weights_panel.shown = ()  # the tensor may have been edited: reload it
        self._on_selection(self.doc.selection.state, raise_dock=False)

    def _on_selection(self, state: SelectionState, raise_dock: bool = True) -> None:
        doc = self.doc
        if doc is None:
            self.weights_panel.clear()
            self._refresh_raw()
            return
        if state.node >= 0:
            self.node_panel.show_node(doc, state.scope, state.node)
            shown = self.weights_panel.show_node(doc, state.scope, state.node)
            self._raise("Node", raise_dock)
        elif state.value:
            self.value_panel.show_value(doc, state.scope, state.value)
            shown = self.weights_panel.show_value(doc, state.scope, state.value)
            self._raise("Value", raise_dock)
        else:
            shown = False
            self.model_panel.show_scope(state.scope)
            self._raise("Model", raise_dock)
        if not shown and self.weights_panel.shown:
            self.weights_panel.clear()
        self._refresh_raw()

    def _raise(self, title: str, really: bool) -> None:
        if really:
            self.docks[title].raise_()

    def _refresh_raw(self) -> None:
        doc = self.doc
        self._when_seen("Raw", lambda: self.raw_panel.show_selection(
            doc, doc.selection.state if doc else SelectionState()))

    def _when_seen(self, title: str, refresh: Callable[[], None]) -> None:
        """Run ``refresh`` now if the dock can be seen (or the window is not shown yet), else once it is:
        rebuilding the model summary or the raw text of a 100k-node model for a hidden tab is waste."""
        dock = self.docks[title]
        if not self.window.isVisible() or (dock.isVisible() and not dock.visibleRegion().isEmpty()):
            self._pending.pop(title, None)
            refresh()
        else:
            self._pending[title] = refresh

    def _on_visibility(self, title: str, visible: bool) -> None:
        if visible and title in self._pending:
            self._pending.pop(title)()

    # -- actions from panels ----------------------------------------------------------------------
    def _select_node(self, scope: str, node: int) -> None:
        if self.doc is not None:
            self.doc.selection.select_node(scope, node)

    def _select_value(self, scope: str, name: str) -> None:
        if self.doc is not None:
            self.doc.selection.select_value(scope, name)

    def _show_weight(self, scope: str, name: str) -> None:
        """A weight row of a box was clicked: that weight in the Weights panel (the node stays selected)."""
        if self.doc is not None and self.weights_panel.show_value(self.doc, scope, name):
            self.docks["Weights"].raise_()

    def _show_attribute_tensor(self, scope: str, node: int, attr: str) -> None:
        if self.doc is not None and self.weights_panel.show_attribute(self.doc, scope, node, attr):
            self.docks["Weights"].raise_()


    # -- the API of the other features (PanelsApi) ----------------------------------------------------
    def add_node_section(self, section: NodeSection) -> None:
        self.node_panel.extras.append(section)

    def raise_panel(self, title: str) -> None:
        if title in self.docks:
            self.docks[title].raise_()

    def refresh_node(self) -> None:
        doc = self.doc
        if doc is not None and doc.selection.state.node >= 0:
            state = doc.selection.state
            self.node_panel.show_node(doc, state.scope, state.node)

    def show_other_node(self, key: object, title: str, subtitle: str,
                        sections: Sequence[tuple[str, QWidget]]) -> None:
        self.node_panel.show_other(key, title, subtitle, list(sections))
        self.raise_panel("Node")


def install(frame: Frame, document: ShownDocument, canvas: GraphCanvas, settings: QSettings,
            registry: Registry) -> Panels:
    """Adds the panels' docks beside the canvas, following ``document``; returns the panels (provided to the
    other features as :class:`PanelsApi`)."""
    panels = Panels(frame, document, canvas, settings)
    registry.provide(PanelsApi, panels)  # type: ignore[type-abstract]
    return panels
