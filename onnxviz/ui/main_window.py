"""The main window: owns the open document (through :class:`~onnxviz.ui.ports.ShownDocument`), the docks and the
menus.

Features plug in through ``install(...)`` functions in their own packages (canvas, panels, editing, running, diff,
transforms), each given only the ports it needs (:mod:`onnxviz.ui.ports`), so this file stays a shell: opening,
reloading, watching, saving, prompts about unsaved edits, the status bar, themes and what is remembered between runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
)
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMenu, QMessageBox

from onnxviz.model.document import Change, Document
from onnxviz.model.errors import Cancelled, OnnxvizError
from onnxviz.model.io.loading import TextFormatError
from onnxviz.model.process_tuning import building
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.selection import SelectionState
from onnxviz.ui import docks, questions
from onnxviz.ui.canvas import feature as canvas_feature
from onnxviz.ui.diff import feature as diff_feature
from onnxviz.ui.edit import feature as edit_feature
from onnxviz.ui.filewatch import FileWatcher
from onnxviz.ui.panels import feature as panels_feature
from onnxviz.ui.ports import Frame, Menus, Registry, ShownDocument
from onnxviz.ui.recent import RecentFiles
from onnxviz.ui.run import feature as run_feature
from onnxviz.ui.settings import open_settings, read_bool, read_bytes
from onnxviz.ui.settings import sync as sync_settings
from onnxviz.ui.shortcuts import KEY_ROWS_PROPERTY, show_shortcuts
from onnxviz.ui.statusbar import install_status_bar, selected_name
from onnxviz.ui.tasks import Task
from onnxviz.ui.theme import ThemeManager, add_theme_menu
from onnxviz.ui.transform import feature as transform_feature
from onnxviz.ui.validation import ValidationService
from onnxviz.ui.welcome import WelcomeWidget
from onnxviz.ui.widgets.names import short_name
from onnxviz.ui.widgets.tooltips import guard_tooltips

if TYPE_CHECKING:
    from onnxviz.ui.diff.controller import DiffController
    from onnxviz.ui.run.controller import RunController
    from onnxviz.ui.transform.controller import TransformController

WATCH_KEY = "file/watch"
MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"


class MainWindow(QMainWindow):
    """One window, one document."""

    loading_finished = Signal()         # a document was opened and the view is ready (or the open failed)
    theme_changed = Signal(bool)        # True when the window is now dark
    closing = Signal()                  # the close was accepted (after any unsaved-changes question)
    load_failed = Signal(str)           # an open or reload failed: its one-sentence message

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        from onnxviz.ui.app import app_icon

        self.settings = settings if settings is not None else open_settings()
        self.document = ShownDocument(self)  # the one owner of the document shown: the features follow it
        self.document.model_changed.connect(self._on_model_changed)  # first: the title before the features
        self.registry = Registry()  # the features' public APIs, for each other
        self._load_task: Task | None = None
        self._close_confirmed = False
        self._asking_about_disk_change = False
        # off for --screenshot: a scripted grab is not the user's layout, nor a file for their recent files
        self.remember_window_state = True
        self.setWindowTitle("onnxviz")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.resize(1400, 900)
        self.theme = ThemeManager(self.settings, self)
        self.theme.changed.connect(self.theme_changed)
        self.theme.apply()
        self.placeholder = WelcomeWidget(app_icon())
        self.placeholder.open_requested.connect(self.open_dialog)
        self.placeholder.example_requested.connect(self.open_example)
        self.placeholder.recent_requested.connect(self.open_path)
        self.setCentralWidget(self.placeholder)
        self.task_progress, self.status_fields = install_status_bar(self.statusBar())
        self.watcher = FileWatcher(parent=self)
        self.watcher.changed.connect(self._on_file_changed_on_disk)
        self._build_menus()
        self.validation = ValidationService(parent=self)
        self.validation.started.connect(self._track_validation)
        self.document.document_changed.connect(self._on_document)  # first: the window before the features
        self._install_features()
        self.setProperty(KEY_ROWS_PROPERTY, canvas_feature.KEY_ROWS)  # keys the graph handles itself, for Help
        self._add_late_actions()
        docks.arrange(self)
        self._restore_window_state()
        self.quiet_bottom = docks.QuietBottom(self, self.settings)
        self.status_fields.problems_clicked.connect(self.quiet_bottom.show_chosen)
        self.panels.problems_panel.listed.connect(self.quiet_bottom.follow)
        self.quiet_bottom.follow(len(self.panels.problems_panel.problems))
        self.statusBar().showMessage("Ready")
        app = QApplication.instance()
        if isinstance(app, QApplication):  # made by ensure_app, or by a host (tests, show()'s kernel)
            guard_tooltips(app)  # once built: no tooltip before it is shown, and building sends ~5,500 events

    def _install_features(self) -> None:
        """Each feature gets the ports it needs (not the window) and finds the others' APIs in the registry."""
        frame = Frame(self, Menus(self.menuBar(), self.file_menu, self.edit_menu, self.view_menu, self.run_menu,
                                  self.help_menu, self.save_action), self.closing)
        doc, reg, settings = self.document, self.registry, self.settings
        self.canvas = canvas_feature.install(frame, doc, self, self.task_progress, self.theme, settings)
        self.panels = panels_feature.install(frame, doc, self.canvas, settings, reg)
        self.editing = edit_feature.install(frame, doc, self.canvas, self, self)
        # the menus (and the Activations dock's tab) now, the rest on first use
        self.run_feature = run_feature.install(frame, doc, self.canvas, self, self, settings, reg)
        self.diff_feature = diff_feature.install(frame, doc, self.canvas, self, self, reg)
        self.transform_feature = transform_feature.install(frame, doc, self.canvas, self, self, self, reg)

    @property
    def doc(self) -> Document | None:
        """The window's document (the one edited, saved and run): :attr:`document`'s."""
        return self.document.doc

    @property
    def document_changed(self) -> SignalInstance:
        """The new Document (or None) after open/close."""
        return self.document.document_changed

    @property
    def model_changed(self) -> SignalInstance:
        """A model.document.Change after each edit/undo/redo/save/validation of the window's document."""
        return self.document.model_changed

    @property
    def run_controller(self) -> RunController:
        """The Run feature's controller, made (its modules imported) the first time it is asked for."""
        return self.run_feature.controller()

    @property
    def diff(self) -> DiffController:
        """The Diff feature's controller, made (its modules imported) the first time it is asked for."""
        return self.diff_feature.controller()

    @property
    def transforms(self) -> TransformController:
        """The Transform feature's controller, made (its modules imported) the first time it is asked for."""
        return self.transform_feature.controller()

    # -- menus ---------------------------------------------------------------------
    def _build_menus(self) -> None:
        bar = self.menuBar()
        self.file_menu, self.edit_menu, self.view_menu, self.run_menu, self.help_menu = (
            bar.addMenu(t) for t in ("&File", "&Edit", "&View", "&Run", "&Help"))
        menu = self.file_menu
        menu.addAction(self._action("&Open...", self.open_dialog, QKeySequence.StandardKey.Open))
        self.recent_menu = QMenu("Open &Recent", self)
        menu.addMenu(self.recent_menu)
        self.recent = RecentFiles(self.settings, self.recent_menu, self.open_path)
        self.recent.changed.connect(self.placeholder.set_recent)
        self.placeholder.set_recent(self.recent.paths())
        menu.addAction(self._action("Open &Example", self.open_example))
        self.reload_action = self._action("Re&load from Disk", lambda: self.reload(), "F5")
        menu.addAction(self.reload_action)
        self.watch_action = self._action("&Watch File for Changes", self._set_watching)
        self.watch_action.setCheckable(True)
        self.watch_action.setChecked(read_bool(self.settings, WATCH_KEY, False))
        self.watch_action.setStatusTip("Reload automatically when the file changes on disk")
        menu.addAction(self.watch_action)
        menu.addSeparator()
        self.save_action = self._action("&Save", lambda: self.save(), QKeySequence.StandardKey.Save)
        self.save_as_action = self._action("Save &As...", lambda: self.save_as(), QKeySequence.StandardKey.SaveAs)
        menu.addActions([self.save_action, self.save_as_action])
        menu.addSeparator()
        self.close_model_action = self._action("&Close Model", self.close_model, "Ctrl+W")
        menu.addAction(self.close_model_action)
        menu.addAction(self._action("&Quit", self.close, "Ctrl+Q"))
        self.help_menu.addAction(self._action("&Keyboard Shortcuts", lambda: show_shortcuts(self), "Ctrl+/"))
        self.help_menu.addAction(self._action("&About onnxviz", self.show_about))
        self._update_actions()

    def _add_late_actions(self) -> None:
        """Actions that go after what the features added to their menus."""
        self.theme_actions = add_theme_menu(self.view_menu, self.theme)
        self.edit_menu.addSeparator()
        self.copy_name_action = self._action("Cop&y Name", self.copy_selected_name, QKeySequence.StandardKey.Copy)
        self.copy_name_action.setStatusTip("Copy the selected node's or value's name")
        # Ctrl+C copies the name only while the canvas has focus; panel tables keep their own Ctrl+C
        self.copy_name_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.canvas.addAction(self.copy_name_action)
        self.edit_menu.addAction(self.copy_name_action)
        self._update_copy_action()

    def _action(self, text: str, slot: Callable[..., object],
                shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        return action

    def _update_actions(self) -> None:
        has_doc = self.doc is not None
        has_file = has_doc and self.doc.path is not None  # type: ignore[union-attr]
        self.save_action.setEnabled(has_doc)
        self.save_as_action.setEnabled(has_doc)
        self.reload_action.setEnabled(bool(has_file))
        self.close_model_action.setEnabled(has_doc)

    # -- status and background tasks (the Status and Tasks ports) ------------------
    def show_message(self, text: str, timeout_ms: int = 0) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    def track_task(self, task: Task, cancellable: bool = True) -> Task:
        """Show ``task`` in the status bar (progress and a cancel button) until it ends."""
        self.task_progress.track(task, cancellable)
        return task

    def _track_validation(self) -> None:
        task = self.validation.task
        if task is not None:
            self.track_task(task, cancellable=False)

    # -- opening -------------------------------------------------------------------
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open ONNX Model", self._start_folder(), MODEL_FILTER)
        if path:
            self.open_path(path)

    def _start_folder(self) -> str:
        """Where file dialogs start: the open model's folder, else the newest recent file's."""
        if self.doc is not None and self.doc.path is not None:
            return str(self.doc.path.parent)
        recent = self.recent.paths()
        return str(Path(recent[0]).parent) if recent else ""

    def open_example(self) -> None:
        from onnxviz.ui.app import example_model_path

        self.open_path(example_model_path())

    def open_path(self, path: str | Path) -> None:
        """Load in the background; the current document stays until the new one is ready.

        With unsaved edits the user is asked first (Save / Discard / Cancel)."""
        self.resolve_unsaved_changes(lambda: self._start_load(Path(path)))

    def close_model(self) -> None:
        """File > Close Model: back to the start page; asks first when there are unsaved edits."""
        self.resolve_unsaved_changes(lambda: self.set_document(None))

    def reload(self, *, ask: bool = True) -> None:
        """Read the current file again (F5); asks first when there are unsaved edits (unless ``ask`` is False:
        the user chose Reload in another question)."""
        if self.doc is None or self.doc.path is None:
            return
        path = self.doc.path
        if not self.doc.is_dirty or not ask:
            self._start_load(path, reloading=True)
            return
        self.confirm_reload_over_edits(
            f"Reload {path.name} from disk and discard your unsaved edits?",
            lambda yes: self._start_load(path, reloading=True) if yes else None)

    def show_model(self, path: Path, copy_name: str | None = None) -> None:
        """Show ``path`` in place of the model shown, keeping the view (graph, groups, zoom, selection): a model
        a Python session sends (``onnxviz.show``, its ``update``). ``copy_name``: ``path`` is a copy made for
        onnxviz, shown under that name with no file of its own. Unsaved edits are not asked about here."""
        self._start_load(path, reloading=self.doc is not None, copy_name=copy_name)

    def _start_load(self, path: Path, reloading: bool = False, quiet: bool = False,
                    copy_name: str | None = None) -> None:
        """``quiet``: a failure is only reported in the status bar (a reload by the file watcher). ``copy_name``:
        see :meth:`show_model`."""
        if self._load_task is not None:
            self._load_task.cancel()
        verb = "Reloading" if reloading else "Opening"
        # the worker processes analyse the file meanwhile, reading it themselves (see ValidationService.prefetch)
        self.validation.prefetch(path)
        task = Task(_load_work(path, copy_name), f"{verb} {copy_name or path.name}", parent=self)
        started = time.monotonic()
        task.finished.connect(lambda doc: self._on_loaded(task, doc, reloading, time.monotonic() - started))
        task.failed.connect(lambda exc, tb: self._on_load_failed(task, path, exc, tb, quiet))
        task.cancelled.connect(lambda: self._on_load_cancelled(task, path))
        self._load_task = task
        self.statusBar().showMessage(f"{verb} {copy_name or path.name}...")
        self.track_task(task)
        task.start()

    def _on_loaded(self, task: Task, doc: Document, reloading: bool, seconds: float) -> None:
        if task is not self._load_task:
            return
        self._load_task = None
        previous = self.doc.selection.state if reloading and self.doc is not None else None
        view = self.canvas.view_state() if reloading else None
        self.set_document(doc)
        if view is not None:
            self.canvas.restore_view_state(view)
        if previous is not None:
            _restore_selection(doc, previous)
        if doc.path is not None and self.remember_window_state:
            self.recent.add(doc.path)
        verb = "Reloaded" if reloading else "Opened"
        took = f" in {seconds:.1f} s" if seconds >= 0.1 else ""
        self.statusBar().showMessage(f"{verb} {doc.name}{took}.", 5000)
        self.loading_finished.emit()

    def _on_load_failed(self, task: Task, path: Path, exc: object, tb: str, quiet: bool = False) -> None:
        if task is not self._load_task:
            return
        self._load_task = None
        message = exc.message if isinstance(exc, OnnxvizError) else f"{path.name} could not be opened: {exc}."
        details = (exc.details if isinstance(exc, OnnxvizError) else "") or tb
        self.load_failed.emit(message)
        self.loading_finished.emit()
        if quiet:  # e.g. caught mid-write: the next change on disk reloads again
            self.statusBar().showMessage(f"{message} Keeping the model as it was.")
            return
        self.statusBar().showMessage(message)
        if isinstance(exc, TextFormatError):  # a model written as text: offer to parse it as such
            from onnxviz.ui.text_format import offer_text_format

            offer_text_format(self, path, exc)
            return
        self.show_error("Cannot Open Model", message, details)

    def _on_load_cancelled(self, task: Task, path: Path) -> None:
        if task is not self._load_task:
            return
        self._load_task = None
        self.statusBar().showMessage(f"Opening {path.name} was cancelled.", 5000)
        self.loading_finished.emit()

    def set_document(self, doc: Document | None) -> None:
        if self.doc is not None:
            self.doc.selection.changed.disconnect(self._on_selection_changed)
        # first the validation: a small model's analysis, done as a rule, comes with it to the canvas and the panels
        self.validation.set_document(doc)
        self.document.set_document(doc)  # the canvas, this window (_on_document), then the features follow
        if doc is not None:  # after the panels' own handler, so the dock raised here wins
            doc.selection.changed.connect(self._on_selection_changed)
            docks.raise_for_selection(self, doc, doc.selection.state)  # a fresh model: its Model panel

    def _on_document(self, doc: Document | None) -> None:
        self.watcher.watch(doc.path if doc is not None and self.watch_action.isChecked() else None)
        self._on_model_changed()
        self._update_copy_action()

    def open_in_new_window(self, doc: Document) -> MainWindow:
        """A new window with these settings, showing ``doc`` (an extracted part, a transform's variant); it is
        deleted when closed (the Files port: features ask for it, none of them imports the window's class)."""
        new = MainWindow(self.settings)
        new.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        new.set_document(doc)
        new.show()
        return new

    def _on_model_changed(self, _change: Change | None = None) -> None:
        """Title, File actions and the status bar's document fields, once per open, edit or save."""
        self._update_title()
        self._update_actions()
        self.status_fields.show_document(self.doc)

    def _on_selection_changed(self, state: SelectionState) -> None:
        if self.doc is None:
            return
        self.status_fields.show_selection(self.doc, state)
        self._update_copy_action()
        docks.raise_for_selection(self, self.doc, state)

    def _update_copy_action(self) -> None:
        self.copy_name_action.setEnabled(self.doc is not None and bool(selected_name(self.doc)))

    def _update_title(self) -> None:
        if self.doc is None:
            self.setWindowTitle("onnxviz")
            self.setWindowModified(False)
            return
        self.setWindowTitle(f"{self.doc.name}[*] - onnxviz")
        self.setWindowModified(self.doc.is_dirty)

    # -- drag and drop -------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        if _dropped_file(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 - Qt override
        if _dropped_file(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        path = _dropped_file(event)
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        QTimer.singleShot(0, lambda: self.open_path(path))  # let the drag source finish first

    # -- watching the file ---------------------------------------------------------
    def _set_watching(self, on: bool) -> None:
        self.settings.setValue(WATCH_KEY, on)
        sync_settings(self.settings)
        self.watcher.watch(self.doc.path if on and self.doc is not None and self.doc.path else None)
        self.statusBar().showMessage("Watching the file for changes." if on else "No longer watching the file.",
                                     4000)

    def _on_file_changed_on_disk(self, path: str) -> None:
        if self.doc is None or self.doc.path is None or Path(path) != self.doc.path.absolute():
            return
        if not self.doc.is_dirty:
            self._start_load(self.doc.path, reloading=True, quiet=True)
            return
        if self._asking_about_disk_change:  # one question for a burst of writes
            return
        self._asking_about_disk_change = True
        name = self.doc.path.name

        def answered(yes: bool) -> None:
            self._asking_about_disk_change = False
            if yes:
                self._start_load(Path(path), reloading=True, quiet=True)
            else:
                self.statusBar().showMessage(f"{name} changed on disk; your edits were kept.", 8000)

        self.confirm_reload_over_edits(f"{name} changed on disk. Reload it and discard your unsaved edits?",
                                       answered)

    # -- saving --------------------------------------------------------------------
    def save(self, then: Callable[[], None] | None = None) -> None:
        """File > Save (Save As when the model has no file yet); ``then`` runs after a successful save."""
        if self.doc is None:
            return
        if self.doc.path is None:
            self.save_as(then)
            return
        self.save_copy(self.doc, self.doc.path, then)

    def save_as(self, then: Callable[[], None] | None = None) -> None:
        if self.doc is None:
            return
        start = str(self.doc.path) if self.doc.path else str(Path(self._start_folder(), Path(self.doc.name).stem))
        path, _ = QFileDialog.getSaveFileName(self, "Save ONNX Model As", start, MODEL_FILTER)
        if path:
            target = Path(path)
            if not target.suffix:  # "model" typed in the dialog means model.onnx
                target = target.with_suffix(".onnx")
            self.save_copy(self.doc, target, then)

    def after_save(self, doc: Document, saved: Path) -> None:
        """Called by :mod:`onnxviz.ui.saving` once ``doc`` is on disk at ``saved`` (the title, actions and status
        fields follow the document's SAVED change, once)."""
        self.recent.add(saved)
        if doc is self.doc and self.watch_action.isChecked():
            self.watcher.watch(saved)  # also takes the new stamp: our own write is not a change

    def save_copy(self, doc: Document, target: Path, then: Callable[[], None] | None = None) -> None:
        """Save ``doc`` (the window's, or a transform's variant: the Files port) to ``target``; ``then`` runs after
        a successful save. :mod:`onnxviz.ui.saving` and the model's saving modules come with the first save."""
        from onnxviz.ui.saving import save_document

        save_document(self, doc, target, then)

    # -- questions -----------------------------------------------------------------
    def resolve_unsaved_changes(self, then: Callable[[], None]) -> None:
        """Run ``then`` once unsaved edits are saved or discarded; not at all on Cancel."""
        if self.doc is None or not self.doc.is_dirty:
            then()
            return

        def answered(button: QMessageBox.StandardButton) -> None:
            if button == questions.Button.Save:
                self.save(then)
            elif button == questions.Button.Discard:
                then()

        self.ask_save_changes(answered)

    def ask_save_changes(self, answer: Callable[[QMessageBox.StandardButton], None]) -> None:
        questions.ask_save_changes(self, self.doc, answer)

    def confirm_reload_over_edits(self, question: str, answer: Callable[[bool], None]) -> None:
        questions.confirm_reload_over_edits(self, question, answer)

    def show_error(self, title: str, message: str, details: str = "") -> QMessageBox:
        """The Status port's errors (:func:`~onnxviz.ui.questions.show_error`)."""
        return questions.show_error(self, title, message, details)

    def show_about(self) -> QMessageBox:
        return questions.show_about(self)

    # -- clipboard -----------------------------------------------------------------
    def copy_selected_name(self) -> None:
        name = selected_name(self.doc) if self.doc is not None else ""
        if not name:
            self.statusBar().showMessage("Nothing selected to copy.", 3000)
            return
        QGuiApplication.clipboard().setText(name)
        self.statusBar().showMessage(f"Copied {short_name(name, 80)}", 3000)

    # -- window state and closing --------------------------------------------------
    def _restore_window_state(self) -> None:
        geometry = read_bytes(self.settings, "window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = read_bytes(self.settings, "window/state")
        if state is not None and self.restoreState(state, docks.STATE_VERSION):
            self.setProperty("stateRestored", True)  # the user's dock sizes win over the defaults

    def _save_window_state(self) -> None:
        if not self.remember_window_state:
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState(docks.STATE_VERSION))
        sync_settings(self.settings)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if not self.isEnabled():  # a background save is writing the file
            event.ignore()
            return
        if self._close_confirmed or self.doc is None or not self.doc.is_dirty:
            self._save_window_state()
            self.watcher.watch(None)
            for task in self.task_progress.running:
                task.cancel()
            self.closing.emit()
            event.accept()
            return
        event.ignore()
        self.resolve_unsaved_changes(self._close_after_confirmation)

    def _close_after_confirmation(self) -> None:
        self._close_confirmed = True
        QTimer.singleShot(0, self.close)  # Qt ignores close() from inside closeEvent (a synchronous answer)


def _load_work(path: Path, copy_name: str | None = None) -> Callable[[ProgressFn, CancelToken], Document]:
    """Open ``path`` (in a background thread); as a copy named ``copy_name`` when given (see show_model)."""
    def work(_progress: ProgressFn, token: CancelToken) -> Document:
        # no collection meanwhile (one walking the half-built index held the GIL ~0.2 s at 123k nodes),
        # and the document, which lives on, settled: later collections need not walk it
        with building():
            # the pause: between slices of a big file's parse
            doc = Document.open(path, pause=token.pause) if copy_name is None else \
                Document.open_copy(path, copy_name, pause=token.pause)
            doc.prepare()  # off the GUI thread
        if token.cancelled:
            raise Cancelled()
        return doc

    return work


def _restore_selection(doc: Document, previous: SelectionState) -> None:
    """After a reload, select again what was selected if it still exists."""
    graph = doc.index.graphs.get(previous.scope)
    if graph is None:
        return
    if 0 <= previous.node < len(graph.nodes):
        doc.selection.select_node(previous.scope, previous.node)
    elif previous.value and graph.defines(previous.value):
        doc.selection.select_value(previous.scope, previous.value)


def _dropped_file(event: QDropEvent | QDragEnterEvent | QDragMoveEvent) -> Path | None:
    """The first local file of a drag, or None."""
    mime = event.mimeData()
    if mime is None or not mime.hasUrls():
        return None
    for url in mime.urls():
        if url.isLocalFile() and Path(url.toLocalFile()).is_file():
            return Path(url.toLocalFile())
    return None
