"""File > Save for the window: small models at once, big ones in a background Task with progress.

A failed save changes nothing: the document stays dirty, the old file stays
intact (``Document.save`` writes atomically) and the user sees one sentence
with the details folded away.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from onnxviz.model.document import Change, Document
from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.events import Signal
from onnxviz.ui.tasks import Task

if TYPE_CHECKING:
    from onnxviz.ui.main_window import MainWindow

BACKGROUND_SAVE_BYTES = 8 * 1024 * 1024  # bench_window.py: a 51 MB save held the GUI thread ~1 s


def save_document(window: MainWindow, doc: Document, target: Path,
                  then: Callable[[], None] | None = None) -> None:
    """Save ``doc`` to ``target``; on success update the window and run ``then``."""
    if doc.model.ByteSize() < BACKGROUND_SAVE_BYTES:
        try:
            saved = doc.save(target)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message, nothing is lost
            _report_failure(window, target, exc, "")
            return
        _succeeded(window, doc, saved, then)
        return
    _save_in_background(window, doc, target, then)


def _save_in_background(window: MainWindow, doc: Document, target: Path,
                        then: Callable[[], None] | None) -> None:
    # The window is disabled so nothing edits the model while the worker serializes
    # it, and the document's notifications are held back: they would otherwise run
    # every view's slots on the worker thread. They are replayed on the GUI thread.
    listeners = doc.changed
    doc.changed = Signal()
    window.setEnabled(False)

    def restore() -> None:
        doc.changed = listeners
        window.setEnabled(True)

    def finished(saved: Path) -> None:
        restore()
        listeners.emit(Change("Save", "saved"))
        _succeeded(window, doc, saved, then)

    def failed(exc: object, tb: str) -> None:
        restore()
        _report_failure(window, target, exc, tb)

    task = Task(lambda _progress, _token: doc.save(target), f"Saving {target.name}")
    task.finished.connect(finished)
    task.failed.connect(failed)
    window.track_task(task, cancellable=False)
    window.statusBar().showMessage(f"Saving {target.name}...")
    task.start()


def _succeeded(window: MainWindow, doc: Document, saved: Path, then: Callable[[], None] | None) -> None:
    window.after_save(doc, saved)
    window.statusBar().showMessage(f"Saved {saved.name}.{problems_note(doc)}", 10000)
    if then is not None:
        then()


def problems_note(doc: Document) -> str:
    """Saving a model with problems is allowed; the status bar says so."""
    count = len(doc.problems)
    if not count:
        return ""
    return f" Note: the model has {count} problem{'s' if count != 1 else ''} (see the Problems panel)."


def _report_failure(window: MainWindow, target: Path, exc: object, tb: str) -> None:
    if isinstance(exc, OnnxvizError):
        message, details = exc.message, exc.details or tb
    else:
        message, details = f"Could not save {target.name}: {exc}.", tb
    message = sentence(message)  # 'bad.onnx is ...' keeps its file name as written
    window.statusBar().showMessage(f"{message} Your edits are still here.", 10000)
    window.show_error("Cannot Save Model", message, details)
