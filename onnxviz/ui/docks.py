"""The default dock arrangement of the main window, and raising the dock that fits the selection.

Features add their docks in ``install(window)``, each with an objectName (which
``saveState``/``restoreState`` need). Once all are installed, :func:`arrange`
puts the inspectors in one tab group on the right and the lists and logs in one
tab group at the bottom; the window then restores the user's own arrangement
from the settings, if there is one.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSettings, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar

from onnxviz.model.document import Document
from onnxviz.model.graph.index import INITIALIZER
from onnxviz.model.selection import SelectionState
from onnxviz.ui.settings import read_bool

NODE, VALUE, WEIGHTS, MODEL = "panels.node", "panels.value", "panels.weights", "panels.model"
PROBLEMS, RAW, HISTORY, ACTIVATIONS = "panels.problems", "panels.raw", "EditHistoryDock", "ActivationsDock"
RIGHT_TABS = (NODE, VALUE, WEIGHTS, MODEL)
BOTTOM_TABS = (PROBLEMS, RAW, HISTORY, ACTIVATIONS)
RIGHT_WIDTH = 320   # the Model panel's facts fit; the graph gets the rest
BOTTOM_HEIGHT = 160  # the Problems list shows a few rows; the graph gets the height
QUIET_KEY = "window/problemsFollowList"  # false once the user shows or closes the Problems panel
STATE_VERSION = 2  # bump when the default arrangement changes so old saved layouts are not applied


def find_dock(window: QMainWindow, name: str) -> QDockWidget | None:
    return window.findChild(QDockWidget, name)


def arrange(window: QMainWindow) -> None:
    """Right: Node/Value/Weights/Model as tabs; bottom: Problems/Raw/History/Activations as tabs."""
    right = _tab_group(window, RIGHT_TABS, Qt.DockWidgetArea.RightDockWidgetArea)
    bottom = _tab_group(window, BOTTOM_TABS, Qt.DockWidgetArea.BottomDockWidgetArea)
    window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
    _retire_stale_tab_bars(window, [right, bottom])
    _raise_name(window, MODEL)  # nothing is selected yet
    _raise_name(window, PROBLEMS)
    # sizes once the window has its real geometry (after features' own deferred sizing)
    QTimer.singleShot(0, lambda: _default_sizes(window, right, bottom))


def _tab_group(window: QMainWindow, names: tuple[str, ...], area: Qt.DockWidgetArea) -> list[QDockWidget]:
    group = [d for d in (find_dock(window, n) for n in names) if d is not None]
    for dock in group:
        window.removeDockWidget(dock)
        window.addDockWidget(area, dock)
        dock.show()
    for first, second in zip(group, group[1:], strict=False):
        window.tabifyDockWidget(first, second)
    return group


def _retire_stale_tab_bars(window: QMainWindow, groups: list[list[QDockWidget]]) -> None:
    """Hide the tab bars of tab groups that the re-arrangement dissolved.

    Qt keeps them visible (with their old tabs, e.g. stray "Node"/"Model" tabs next to
    the canvas) until some later layout change; the bars in use are those whose tabs
    are exactly a current group. Qt shows a bar again itself if it ever reuses it.
    """
    current = [[d.windowTitle() for d in group] for group in groups if len(group) > 1]
    for bar in window.findChildren(QTabBar, "", Qt.FindChildOption.FindDirectChildrenOnly):  # not the panels' own
        if [bar.tabText(i) for i in range(bar.count())] not in current:
            bar.hide()


def _default_sizes(window: QMainWindow, right: list[QDockWidget], bottom: list[QDockWidget]) -> None:
    if window.property("stateRestored"):
        return
    if right:
        window.resizeDocks([right[0]], [RIGHT_WIDTH], Qt.Orientation.Horizontal)
    if bottom:
        window.resizeDocks([bottom[0]], [BOTTOM_HEIGHT], Qt.Orientation.Vertical)


def _raise_name(window: QMainWindow, name: str) -> None:
    dock = find_dock(window, name)
    if dock is not None:
        dock.raise_()


def dock_for_selection(doc: Document, state: SelectionState) -> str:
    """Node for a node, Weights for an initializer, Value for another value, Model for nothing."""
    if state.node >= 0:
        return NODE
    if state.value:
        graph = doc.index.graphs.get(state.scope)
        is_weight = graph is not None and graph.producer_of(state.value) == INITIALIZER
        return WEIGHTS if is_weight else VALUE
    return MODEL


def raise_for_selection(window: QMainWindow, doc: Document, state: SelectionState) -> None:
    """Bring the inspector that fits ``state`` to the front of its tab group (if it is shown)."""
    dock = find_dock(window, dock_for_selection(doc, state))
    if dock is not None and dock.isVisible():
        dock.raise_()


class QuietBottom(QObject):
    """Until the user shows or closes the Problems panel themselves, the bottom panels take no room while
    the Problems list is empty, and come back when it lists something."""

    def __init__(self, window: QMainWindow, settings: QSettings) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.put_away: list[QDockWidget] = []
        problems = find_dock(window, PROBLEMS)
        if problems is not None:
            problems.installEventFilter(self)   # its close button
            problems.toggleViewAction().triggered.connect(self._toggled)

    @property
    def following(self) -> bool:
        return read_bool(self.settings, QUIET_KEY, True)

    def follow(self, count: int) -> None:
        """The Problems list now has ``count`` rows."""
        problems = find_dock(self.window, PROBLEMS)
        if problems is None or not self.following:
            return
        if count and problems.isHidden():
            self._bring_back(problems)
        elif not count and not problems.isHidden():
            others = [d for d in self.window.tabifiedDockWidgets(problems) if not d.isHidden()]
            if any(not d.visibleRegion().isEmpty() for d in others):
                return   # the user is reading another tab of the group (a run's activations)
            self.put_away = [d for d in (problems, *others) if d.objectName() in BOTTOM_TABS]
            for dock in self.put_away:
                dock.hide()

    def show_chosen(self) -> None:
        """The user asked for the Problems panel (e.g. from the status bar): shown, and kept."""
        problems = find_dock(self.window, PROBLEMS)
        if problems is not None:
            self._bring_back(problems)
        self._chosen()

    def _bring_back(self, problems: QDockWidget) -> None:
        for dock in self.put_away or [problems]:
            dock.show()
        self.put_away = []
        problems.raise_()

    def _toggled(self, shown: bool) -> None:
        """View > Problems Panel: the panels put away with it come back too."""
        problems = find_dock(self.window, PROBLEMS)
        if shown and problems is not None:
            self._bring_back(problems)
        self._chosen()

    def _chosen(self) -> None:
        self.settings.setValue(QUIET_KEY, False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Close:
            self._chosen()
        return False
