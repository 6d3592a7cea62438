"""Makes the graph canvas the main window's central widget and adds its View menu actions."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSettings
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.layout.options import LEFT_TO_RIGHT, TOP_TO_BOTTOM, LayoutOptions
from onnxviz.ui.canvas.canvas import GraphCanvas
from onnxviz.ui.canvas.minimap import DOCKED, PLACE_NAMES, PLACES
from onnxviz.ui.ports import Frame, ShownDocument, Status
from onnxviz.ui.settings import read_bool, read_text
from onnxviz.ui.statusbar import TaskProgress
from onnxviz.ui.theme import ThemeManager


class _Place:
    """What the canvas's menus and dialogs need of the window: a parent, the View menu, the settings, the status."""

    def __init__(self, frame: Frame, document: ShownDocument, status: Status, settings: QSettings) -> None:
        self.parent, self.view_menu, self.document = frame.window, frame.menus.view, document
        self.status, self.settings = status, settings


def install(frame: Frame, document: ShownDocument, status: Status, progress: TaskProgress, theme: ThemeManager,
            settings: QSettings) -> GraphCanvas:
    """Makes the canvas the window's central widget, showing what ``document`` shows; returns it (the canvas
    port of the other features)."""
    window = frame.window
    placeholder = window.takeCentralWidget()
    canvas = GraphCanvas(window)
    if placeholder is not None:
        canvas.set_placeholder(placeholder)
    window.setCentralWidget(canvas)
    canvas.status_progress = progress
    document.shown_changed.connect(canvas.set_document)
    document.model_changed.connect(canvas.on_model_changed)
    theme.changed.connect(canvas.set_dark)
    canvas.set_dark(theme.is_dark)
    canvas.layout_options = remembered_options(settings)
    canvas.view.options.show_names = canvas.layout_options.names
    _add_actions(_Place(frame, document, status, settings), canvas)
    return canvas


MINIMAP_KEY = "canvas/minimap"
MINIMAP_PLACE_KEY = "canvas/minimap_place"
NAMES_KEY = "view/node_names"
EDGE_NAMES_KEY = "view/tensor_names"
DIRECTION_KEY = "view/left_to_right"

# The keys GraphView.keyPressEvent and the search box handle themselves: (where, what, keys)
KEY_ROWS = (
    ("Graph", "Select a producer, a consumer", "Up, Down"),
    ("Graph", "Select the neighbour in the same row", "Left, Right"),
    ("Graph", "Open the selected subgraph or group", "Enter"),
    ("Graph", "Back to the parent graph", "Backspace"),
    ("Graph", "Zoom in, zoom out", "+, -"),
    ("Graph", "Pan", "Ctrl+Arrows"),
    ("Find", "Move through the results", "Up, Down"),
    ("Find", "Go to the chosen result", "Enter"),
    ("Find", "Close the search", "Esc"),
)


def _action(window: QObject, text: str, slot: object,
            shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
            tip: str = "") -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if tip:
        action.setToolTip(tip)
        action.setStatusTip(tip)
    action.triggered.connect(slot)
    return action


def remembered_options(settings: QSettings) -> LayoutOptions:
    """The layout choices the user made last time (View menu)."""
    return LayoutOptions(names=read_bool(settings, NAMES_KEY, False),
                         edge_names=read_bool(settings, EDGE_NAMES_KEY, False),
                         direction=LEFT_TO_RIGHT if read_bool(settings, DIRECTION_KEY, False) else TOP_TO_BOTTOM)


def _remembered(window: _Place, text: str, key: str, apply: Callable[[bool], None], tip: str) -> QAction:
    """A checkable View menu action whose state is kept in the settings under ``key``."""

    def toggled(on: bool) -> None:
        window.settings.setValue(key, on)
        apply(on)

    action = _action(window.parent, text, toggled, None, tip)
    action.setCheckable(True)
    action.setChecked(read_bool(window.settings, key, False))
    return action


def _add_actions(window: _Place, canvas: GraphCanvas) -> None:
    view = canvas.view
    menu = window.view_menu
    fit = _action(window.parent, "&Fit Graph", canvas.fit, "Ctrl+0", "Show the whole graph")
    actual = _action(window.parent, "&Actual Size", canvas.actual_size, "Ctrl+1",
                     "Zoom to 1:1 on the selection (or the graph)")
    zoom_in = _action(window.parent, "Zoom &In", lambda: view.zoom_by(1.25), QKeySequence.StandardKey.ZoomIn,
                      "Zoom in")
    zoom_out = _action(window.parent, "Zoom &Out", lambda: view.zoom_by(0.8), QKeySequence.StandardKey.ZoomOut,
                       "Zoom out")
    find = _action(window.parent, "Fin&d...", canvas.open_search, QKeySequence.StandardKey.Find,
                   "Find nodes, op types, values and initializers")
    up = _action(window.parent, "&Parent Graph", canvas.go_up, "Alt+Up", "Leave the subgraph")
    names = _remembered(window, "Show Node &Names", NAMES_KEY, canvas.set_show_names,
                        "Node names in the boxes (boxes widen for them; the tooltip has the whole name)")
    edge_names = _remembered(window, "Show Tensor Names on Ed&ges", EDGE_NAMES_KEY, canvas.set_edge_names,
                             "Each edge's tensor name before its shape")
    across = _remembered(window, "Lay Out &Left to Right", DIRECTION_KEY,
                         lambda on: canvas.set_direction(LEFT_TO_RIGHT if on else TOP_TO_BOTTOM),
                         "Data flows from left to right instead of top to bottom")
    expand_all = _action(window.parent, "E&xpand All Groups", lambda: canvas.expand_all(True), None,
                         "Show every node (lays the graph out again)")
    collapse_all = _action(window.parent, "&Collapse All Groups", lambda: canvas.expand_all(False), None,
                           "One box per top-level group")
    minimap = _minimap_actions(window, canvas)
    export_action = _action(window.parent, "&Export Image...", lambda: export_dialog(window, canvas), "Ctrl+E",
                            "Save the whole graph as PNG or SVG")
    for action in (fit, actual, zoom_in, zoom_out):
        menu.addAction(action)
    menu.addSeparator()
    for action in (find, up, expand_all, collapse_all, names, edge_names, across, minimap):
        menu.addAction(action)
    menu.addMenu(_minimap_place_menu(window, canvas))
    menu.addSeparator()
    menu.addAction(export_action)
    canvas.actions_by_name.update({"fit": fit, "actual": actual, "zoom_in": zoom_in, "zoom_out": zoom_out,
                                   "find": find, "up": up, "names": names, "edge_names": edge_names,
                                   "left_to_right": across, "minimap": minimap,
                                   "expand_all": expand_all, "collapse_all": collapse_all,
                                   "export": export_action})
    canvas.add_tool_buttons([(zoom_out, "−"), (zoom_in, "+"), (actual, "1:1"), (fit, "Fit"), (find, "Find")])

    def update_enabled(*_: object) -> None:
        """The graph's actions need a model; Parent Graph also needs a subgraph to leave."""
        for action in (fit, actual, zoom_in, zoom_out, find, expand_all, collapse_all, export_action):
            action.setEnabled(canvas.doc is not None)
        up.setEnabled(canvas.doc is not None and bool(canvas.scope))

    window.document.shown_changed.connect(update_enabled)
    canvas.scope_changed.connect(update_enabled)
    update_enabled()


def _minimap_actions(window: _Place, canvas: GraphCanvas) -> QAction:
    """View > Show Minimap, remembered between runs."""
    shown = read_bool(window.settings, MINIMAP_KEY, True)

    def toggled(on: bool) -> None:
        canvas.set_minimap_enabled(on)
        window.settings.setValue(MINIMAP_KEY, on)

    minimap = _action(window.parent, "Show &Minimap", toggled, None, "An overview of the graph; click it to move the view")
    minimap.setCheckable(True)
    minimap.setChecked(shown)
    canvas.set_minimap_enabled(shown)
    return minimap


def _minimap_place_menu(window: _Place, canvas: GraphCanvas) -> QMenu:
    """View > Minimap Position: docked beside the graph (covers nothing) or one corner; remembered."""
    menu = QMenu("Minimap Po&sition", window.parent)
    group = QActionGroup(menu)
    place = read_text(window.settings, MINIMAP_PLACE_KEY, DOCKED, PLACES)

    def chooser(where: str) -> Callable[[], None]:
        def choose() -> None:
            canvas.set_minimap_place(where)
            window.settings.setValue(MINIMAP_PLACE_KEY, where)
        return choose

    for where in PLACES:
        action = menu.addAction(PLACE_NAMES[where], chooser(where))
        action.setCheckable(True)
        action.setChecked(where == place)
        group.addAction(action)
        canvas.actions_by_name[f"minimap:{where}"] = action
    canvas.set_minimap_place(place)
    return menu


def export_dialog(window: _Place, canvas: GraphCanvas) -> None:
    if canvas.drawable is None:
        QMessageBox.information(window.parent, "Export Image", "Open a model first.")
        return
    doc = window.document.doc
    stem = doc.path.stem if doc is not None and doc.path else "graph"
    path, _ = QFileDialog.getSaveFileName(window.parent, "Export Image", f"{stem}.png",
                                          "PNG image (*.png);;SVG drawing (*.svg)")
    if not path:
        return
    try:
        canvas.export_image(path)
    except OnnxvizError as exc:
        window.status.show_error("Export Image", exc.message, exc.details)
        return
    window.status.show_message(f"Exported {path}", 5000)
