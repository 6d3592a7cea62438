"""pyqtgraph, imported the first time a plot is needed and off the GUI thread, and plots made a few per
turn of the event loop.

The window's start and its first frame need no plot (pyqtgraph's import was 0.15-0.7 s of the start).
A view with plots (the tensor view, the A/B values) imports it in a worker when it first needs them,
then makes its plots one step per turn (a heatmap with its colour bar is 20-70 ms to make, the first
one more): the GUI thread never waits for all of it at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from PySide6.QtCore import QObject, QTimer

from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.tasks import Task

T = TypeVar("T")
_imported = threading.Event()


def plots_imported() -> bool:
    """pyqtgraph is imported completely (widgets using it can be made at once)."""
    return _imported.is_set()


def import_plots(_progress: ProgressFn | None = None, _token: CancelToken | None = None) -> None:
    """Import pyqtgraph (as a task's work, in a worker thread); quick once done."""
    import pyqtgraph  # noqa: F401

    _imported.set()


def with_plots(work: Callable[[ProgressFn, CancelToken], T]) -> Callable[[ProgressFn, CancelToken], T]:
    """``work``, after pyqtgraph is imported in the same worker thread."""
    def run(progress: ProgressFn, token: CancelToken) -> T:
        import_plots()
        return work(progress, token)

    return run


def when_plots_imported(owner: QObject, then: Callable[[], None]) -> None:
    """``then()`` now if pyqtgraph is imported, else once a worker has imported it (not if ``owner``
    is deleted meanwhile)."""
    if plots_imported():
        then()
        return
    task = Task(import_plots, "Preparing plots", parent=owner)
    task.finished.connect(lambda _result: then())
    task.start()


class StepBuild:
    """Makes widgets one step per turn of the event loop, then calls ``then()`` on the next turn (what
    the steps made is laid out by then); :meth:`finish` makes what is left at once for a caller that
    needs it now. Nothing more happens once ``owner`` is deleted."""

    def __init__(self, owner: QObject, steps: Sequence[Callable[[], None]],
                 then: Callable[[], None] | None = None) -> None:
        self._owner = owner
        self._remaining = list(steps)
        self._then = then
        QTimer.singleShot(0, owner, self._step)

    def finish(self) -> None:
        while self._remaining:
            self._remaining.pop(0)()

    def _step(self) -> None:
        if self._remaining:
            self._remaining.pop(0)()
            QTimer.singleShot(0, self._owner, self._step)
        elif self._then is not None:
            then, self._then = self._then, None
            then()
