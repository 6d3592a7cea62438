"""Run > Export All Values...: every value of the last run written into a folder, as ``onnxviz run --dump``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.runner.store import export_run
from onnxviz.ui.tasks import Task

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from onnxviz.ui.ports import Status
    from onnxviz.ui.run.runs import Runs
    from onnxviz.ui.run.shown import ShownRuns


class ValueExport:
    """Writes the values in the background, as one of the runs' tasks (the status bar's progress; Cancel Run
    stops it and leaves nothing)."""

    def __init__(self, parent: QWidget, runs: Runs, shown: ShownRuns, status: Status) -> None:
        self.parent, self.runs, self.shown, self.status = parent, runs, shown, status

    def export_all(self) -> None:
        result = self.shown.result
        if result is None or self.runs.busy():
            return
        chosen = QFileDialog.getExistingDirectory(self.parent, "Export All Values to Folder")
        if not chosen:
            return
        folder = Path(chosen)
        task = Task(lambda progress, token: export_run(result, folder, progress, token), "Exporting the values",
                    parent=self.runs)
        task.finished.connect(lambda count: self._exported(f"Wrote {count} values to {folder} (index.json)."))
        task.failed.connect(lambda exc, _tb: self._exported(
            sentence(exc.message) if isinstance(exc, OnnxvizError) else f"Could not export the values: {exc}.", exc))
        task.cancelled.connect(lambda: self._exported("Export cancelled; nothing was written."))
        self.runs.begin(task, f"Exporting the values to {folder}...")

    def _exported(self, text: str, error: BaseException | None = None) -> None:
        self.runs.end()
        self.status.show_message(text, 10000)
        if error is not None:
            self.status.show_error("Export All Values", text, "")
