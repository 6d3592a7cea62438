"""The ports a feature of the window is installed with, instead of the window itself.

The shell (:mod:`onnxviz.ui.main_window`) makes them and hands each feature's ``install`` only the ones it needs:

- :class:`ShownDocument`: the one owner of the window's document (the one edited, saved and run) and of the
  document the canvas shows (that one, or another the diff puts there: its B). Canvas, panels, editing, runs and
  diff follow its signals; nobody swaps the canvas's document behind the others' backs.
- :class:`Status` and :class:`Tasks`: messages, errors, and background work shown in the status bar.
- :class:`Frame`: the window as a place (the parent of dialogs, docks and toolbars), its menus, its closing.
- :class:`Files`: what only the shell does with documents (a new window, a save).
- :class:`Registry`: where a feature finds another's public API (the protocols below) whenever it is installed,
  so the order of installation does not matter and no feature imports another.
- :class:`OnFirstUse`: a feature's controller (and its modules) made the first time it is needed, then wired.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QMenuBar, QMessageBox, QWidget

if TYPE_CHECKING:
    import numpy as np

    from onnxviz.model.document import Change, Document
    from onnxviz.model.matching import ModelDiff
    from onnxviz.model.runner.sizes import GeneratedInputs
    from onnxviz.ui.tasks import Task

T = TypeVar("T")
C = TypeVar("C")


class ShownDocument(QObject):
    """The window's document and the document shown on the canvas: one owner, followed by every feature.

    ``doc`` is the window's model (None: the start page); ``shown`` is what the canvas shows: ``doc``, or for a
    while another document (the diff's B, read only). Setting the document shows it too."""

    document_changed = Signal(object)  # the new window's Document (or None), after shown_changed
    shown_changed = Signal(object)     # the Document the canvas now shows (or None)
    model_changed = Signal(object)     # a model.document.Change of ``doc`` (edit, undo, redo, save, validation)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc: Document | None = None
        self.shown: Document | None = None

    def set_document(self, doc: Document | None) -> None:
        """The window's document is now ``doc`` (the shell's job: opening, reloading, closing)."""
        if self.doc is not None:
            self.doc.changed.disconnect(self._on_change)
        self.doc = doc
        if doc is not None:
            doc.changed.connect(self._on_change)
        self.shown = doc
        self.shown_changed.emit(doc)
        self.document_changed.emit(doc)

    def _on_change(self, change: Change) -> None:
        self.model_changed.emit(change)

    def show(self, other: Document | None) -> None:
        """Show ``other`` on the canvas in place of the window's document (None: the window's own again)."""
        target = other if other is not None else self.doc
        if target is self.shown:
            return
        self.shown = target
        self.shown_changed.emit(target)

    @property
    def shows_own(self) -> bool:
        """The canvas shows the window's document (one that can be edited)."""
        return self.doc is not None and self.shown is self.doc


class Status(Protocol):
    """One-sentence messages in the status bar, and errors in a box that does not block."""

    def show_message(self, text: str, timeout_ms: int = 0) -> None: ...

    def show_error(self, title: str, message: str, details: str = "") -> QMessageBox: ...


class Tasks(Protocol):
    """Background work shown in the status bar (progress and a cancel button) until it ends."""

    def track_task(self, task: Task, cancellable: bool = True) -> Task: ...


class Files(Protocol):
    """What the shell does with a document it does not show: a window of its own, a file."""

    def open_in_new_window(self, doc: Document) -> QMainWindow: ...

    def save_copy(self, doc: Document, target: Path) -> None: ...


@dataclass(frozen=True)
class Menus:
    """The window's menu bar and menus; ``save`` is File > Save (what goes before the saving items)."""

    bar: QMenuBar
    file: QMenu
    edit: QMenu
    view: QMenu
    run: QMenu
    help: QMenu
    save: QAction

    def add_before_help(self, menu: QMenu) -> None:
        """``menu`` in the bar before Help, among the features' menus in :data:`FEATURE_MENUS`' order (whatever
        the order the features are installed in)."""
        rank = _menu_rank(menu)
        later = [m for m in (a.menu() for a in self.bar.actions()) if isinstance(m, QMenu) and rank < _menu_rank(m)]
        self.bar.insertMenu(later[0].menuAction() if later else self.help.menuAction(), menu)


FEATURE_MENUS = ("Diff", "Transform")  # the features' menus between Run and Help, in this order


def _menu_rank(menu: QMenu) -> int:
    """Its place in :data:`FEATURE_MENUS` (-1: not a feature's menu, such as File or Help)."""
    title = menu.title().replace("&", "")
    return FEATURE_MENUS.index(title) if title in FEATURE_MENUS else -1


class DockedController(Protocol):
    """A feature's controller with a dock of its own that follows the shown document."""

    @property
    def dock(self) -> QDockWidget: ...

    def set_document(self, doc: Document | None) -> None: ...

    def on_model_changed(self, change: Change) -> None: ...


@dataclass(frozen=True)
class Frame:
    """The window as a place: the parent of dialogs, docks and toolbars (plain Qt), its menus, and its closing
    (emitted once the close is accepted)."""

    window: QMainWindow
    menus: Menus
    closing: SignalInstance

    def dock_late(self, controller: DockedController, document: ShownDocument) -> None:
        """A controller made on first use: its dock at the bottom, where the user last had it if the window's saved
        state says, hidden until it has something to show; it follows ``document`` from now on (the caller hands
        it the current one once its own signals are connected)."""
        self.window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, controller.dock)
        self.window.restoreDockWidget(controller.dock)
        controller.dock.hide()
        document.document_changed.connect(controller.set_document)
        document.model_changed.connect(controller.on_model_changed)


class OnFirstUse(Generic[C]):
    """A feature's controller made on first use, in two steps: ``make`` builds it (importing its modules), it is
    kept, then ``attach`` wires it into the window (signals, dock, registry). Kept before it is wired: a use during
    the wiring (a dock shown that asks for its controller) gets this one, not a second. Called, it gives the
    controller; :attr:`made` is None until then."""

    def __init__(self, make: Callable[[], C], attach: Callable[[C], object]) -> None:
        self._make, self._attach = make, attach
        self.made: C | None = None

    def __call__(self) -> C:
        made = self.made
        if made is None:
            made = self.made = self._make()
            self._attach(made)
        return made


class Registry:
    """The features' public APIs by protocol: a feature provides its own and finds the others' when they come,
    whatever the order of installation."""

    def __init__(self) -> None:
        self._apis: dict[type, object] = {}
        self._waiting: dict[type, list[Callable[[Any], object]]] = {}
        self._makers: dict[type, Callable[[], object]] = {}

    def provide(self, key: type[T], api: T) -> None:
        self._apis[key] = api
        self._makers.pop(key, None)
        for callback in self._waiting.pop(key, []):
            callback(api)

    def provide_on_demand(self, key: type[T], make: Callable[[], T]) -> None:
        """A feature made on first use: ``make`` (which calls :meth:`provide`) runs the first time another feature
        asks for its API (:meth:`find`, :meth:`get`); :meth:`when`'s callbacks wait until it is made."""
        self._makers[key] = make

    def find(self, key: type[T]) -> T | None:
        make = self._makers.pop(key, None) if key not in self._apis else None
        if make is not None:
            make()
        api = self._apis.get(key)
        return api  # type: ignore[return-value]

    def get(self, key: type[T]) -> T:
        api = self.find(key)
        if api is None:
            raise LookupError(f"no feature provides {key.__name__}")
        return api

    def when(self, key: type[T], callback: Callable[[T], object]) -> None:
        """Call ``callback`` with the API once it is provided (now, if it already is; a feature made on demand is
        not made for this)."""
        api = self._apis.get(key)
        if api is not None:
            callback(api)  # type: ignore[arg-type]
        else:
            self._waiting.setdefault(key, []).append(callback)


# -- the features' public APIs, as the others see them ---------------------------------------------------------

NodeSection = Callable[["Document", str, int], "tuple[str, QWidget] | None"]


class PanelsApi(Protocol):
    """The inspector panels (:mod:`onnxviz.ui.panels`)."""

    def add_node_section(self, section: NodeSection) -> None:
        """A section the Node panel shows under a node's own fields (None: nothing to add)."""

    def raise_panel(self, title: str) -> None: ...

    def refresh_node(self) -> None:
        """Show the selected node again (a section's content changed)."""

    def show_other_node(self, key: object, title: str, subtitle: str,
                        sections: Sequence[tuple[str, QWidget]]) -> None:
        """A node of no graph of the window's document (the diff's ghost) in the Node panel, raised."""


class Feeds(Protocol):
    """A model's inputs as the Run with Inputs... dialog chose them (arrays given, others to generate), for the
    runs of another feature (the diff's Run Both)."""

    @property
    def samples(self) -> tuple[str, ...]:
        """Files of several samples, each run in turn (empty: one run)."""

    def to_run(self) -> tuple[dict[str, np.ndarray], GeneratedInputs | None]: ...

    def with_sample(self, path: str) -> Feeds: ...


class RunApi(Protocol):
    """Runs and their results (:mod:`onnxviz.ui.run`)."""

    @property
    def run_finished(self) -> SignalInstance: ...

    def ask_inputs(self, doc: Document, then: Callable[[Feeds], object]) -> None:
        """The Run with Inputs... dialog for ``doc``; ``then`` gets the inputs it is accepted with."""

    def comparison_replaced(self, reason: str) -> None: ...

    def forget(self, owner: object, reason: str) -> None:
        """``owner``'s runs (shown by :meth:`show_comparison`) are about to go."""

    def show_comparison(self, *args: Any, **kwargs: Any) -> None:
        """Another feature's comparison of the window's document with another model, in the Activations dock."""

    def show_own_colours(self) -> None: ...


class DiffApi(Protocol):
    """The model diff (:mod:`onnxviz.ui.diff`): its A is the window's document."""

    @property
    def diff(self) -> ModelDiff | None: ...

    @property
    def doc_b(self) -> Document | None: ...

    @property
    def diff_shown(self) -> SignalInstance: ...

    @property
    def dock(self) -> QDockWidget: ...

    def compare_with(self, path: Path, transformed: bool = False) -> Task | None: ...

    def show_b(self, on: bool) -> None: ...

    def current_difference(self) -> int: ...

    def choose_difference(self, row: int) -> None: ...

