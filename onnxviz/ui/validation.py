"""Background validation after load and after every edit: debounced, stale results dropped.

Results are remembered by the model's bytes, so undo and redo back to a state
already validated get their problems and shapes at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import OrderedDict

from PySide6.QtCore import QObject, QTimer, Signal

from onnxviz.model.document import Change, Document
from onnxviz.model.validation import ValidationResult, validate
from onnxviz.ui.tasks import Task

KNOWN_STATES = 16  # validated model states remembered for undo/redo


class ValidationService(QObject):
    """Runs :func:`onnxviz.model.validation.validate` off the GUI thread for the current document."""

    started = Signal()
    finished = Signal(object)  # ValidationResult that was applied

    def __init__(self, debounce_ms: int = 30, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc: Document | None = None
        self._task: Task | None = None
        self._known: OrderedDict[bytes, ValidationResult] = OrderedDict()  # model digest -> result
        self._debounce_ms = debounce_ms
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(self._start)

    def set_document(self, doc: Document | None) -> None:
        if self.doc is not None:
            self.doc.changed.disconnect(self._on_changed)
        self.doc = doc
        self._known.clear()
        if doc is not None:
            doc.changed.connect(self._on_changed)
            self._timer.start()

    def _on_changed(self, change: Change) -> None:
        if change.kind in ("edit", "undo", "redo", "reload"):
            # idle: start on the next event-loop turn (a burst such as a jump in the history is one
            # pass); while a pass runs, wait a little so a stream of edits does not queue stale work
            running = self._task is not None and not self._task.done
            self._timer.start(self._debounce_ms if running or self._timer.isActive() else 0)

    def _start(self) -> None:
        doc = self.doc
        if doc is None:
            return
        if self._task is not None:
            self._task.cancel()
        # the worker gets its own bytes (fast to make, and what onnx wants anyway):
        # the GUI thread may edit the document meanwhile
        try:
            data = doc.model.SerializeToString()
        except ValueError:  # over 2 GiB: protobuf cannot serialize it; the checker could not either
            return
        generation = doc.generation
        digest = hashlib.blake2b(data, digest_size=16).digest()
        known = self._known.get(digest)
        if known is not None:
            self._known.move_to_end(digest)
            self._on_result(dataclasses.replace(known, generation=generation))
            return
        task = Task(lambda progress, token: validate(data, None, generation), "Validating")
        task.finished.connect(lambda result: self._remember(digest, result))
        task.finished.connect(self._on_result)
        self._task = task
        self.started.emit()
        task.start()

    def _remember(self, digest: bytes, result: ValidationResult) -> None:
        self._known[digest] = result
        while len(self._known) > KNOWN_STATES:
            self._known.popitem(last=False)

    def _on_result(self, result: ValidationResult) -> None:
        if self.doc is not None and self.doc.apply_validation(result):
            self.finished.emit(result)

    @property
    def task(self) -> Task | None:
        """The running (or last) validation task, e.g. to show its progress."""
        return self._task

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done or self._timer.isActive()
