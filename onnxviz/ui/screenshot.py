"""``onnxviz FILE --screenshot OUT.png``: open a model in the window, wait until it is drawn and the panels' background
work is in, grab the window to a PNG and quit (the window's own code stays a shell of the features)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QSize, QTimer

from onnxviz.model.errors import OnnxvizError
from onnxviz.ui.png import write_image

if TYPE_CHECKING:
    from onnxviz.ui.main_window import MainWindow

SCREENSHOT_WAIT_S = 30.0  # --screenshot grabs once validation and figures are in, or after this
LAYOUT_LEVELS = 12  # nested layouts settle_layouts lays out (a panel page: ~6)
SETTLED_POLL_MS = 10  # how often --screenshot looks whether they are in (cheap: a few attributes)


def background_settled(window: MainWindow) -> bool:
    """No validation, figures, layout or label job or other tracked task of ``window`` is still on its way (the
    edge labels a validation result brings come in a job after the first drawing)."""
    return (not window.task_progress.running and not window.validation.busy and window.panels.model_panel.settled
            and not window.canvas.busy)


def screenshot_and_quit(window: MainWindow, path: str | None, out: str, size: str = "1400x900",
                        settled: Callable[[], object] | None = None) -> int:
    """Open ``path`` in ``window``, wait until it is drawn, grab the window to ``out``, return the exit code.
    ``settled`` is called once the window is grabbed, before the PNG is made (the command kills its worker
    processes then: their end overlaps the PNG and its write)."""
    from onnxviz.ui.app import ensure_app

    app = ensure_app()
    window.remember_window_state = False  # a scripted grab is not the user's layout, nor a recent file
    w, h = (int(x) for x in size.lower().split("x"))
    window.resize(QSize(w, h))
    window.show()
    result = {"code": 0}

    def grab() -> None:
        app.processEvents()
        settle_layouts()
        picture = window.grab().toImage()
        if settled is not None:
            settled()
        try:
            write_image(picture, Path(out))  # every byte checked, written in one step
        except OnnxvizError as exc:
            sys.stderr.write(f"onnxviz: error: {exc.message}\n")
            result["code"] = 2
        app.quit()

    deadline = time.monotonic() + SCREENSHOT_WAIT_S

    def when_ready() -> None:  # drawn: wait for the panels' background work too, within reason
        if background_settled(window) or time.monotonic() > deadline:
            QTimer.singleShot(0, grab)
        else:
            QTimer.singleShot(SETTLED_POLL_MS, when_ready)

    if path:
        # the graph has been laid out and painted (or could not be)
        window.canvas.scene_ready.connect(when_ready)
        window.canvas.layout_failed.connect(lambda *_: when_ready())
        window.loading_finished.connect(lambda: when_ready() if window.doc is None else None)
        window.open_path(path)
    else:
        when_ready()
    app.exec()
    return result["code"]


def settle_layouts() -> None:
    """Lay out now what waits for the event loop: a widget that changed size asks its parent's layout in a posted
    event, a level per pass (the Model panel's page grown by the figures: ~6 levels). For a grab at once."""
    for _level in range(LAYOUT_LEVELS):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
