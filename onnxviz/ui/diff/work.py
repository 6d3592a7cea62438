"""The diff's background work, one task at a time (opening a diff, Run Both): progress and Cancel in the status
bar, a failure said in one sentence."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.ui.tasks import Task, waiting_pool

if TYPE_CHECKING:
    from onnxviz.ui.ports import Status, Tasks


class DiffTasks:
    """The task running (``task``), started, cancelled and failed in one place."""

    def __init__(self, status: Status, tasks: Tasks, failed: Callable[[str], None]) -> None:
        self.status, self.tasks, self.on_failed = status, tasks, failed
        self.task: Task | None = None

    def start(self, task: Task, message: str) -> Task:
        self.task = task
        self.status.show_message(message)
        self.tasks.track_task(task)
        task.start(waiting_pool())
        return task

    def failed(self, task: Task, exc: object, tb: str, what: str) -> None:
        if task is not self.task:
            return
        self.task = None
        message = sentence(exc.message) if isinstance(exc, OnnxvizError) else f"{what}: {exc}."
        details = (exc.details if isinstance(exc, OnnxvizError) else "") or tb
        self.status.show_message(message, 10000)
        self.status.show_error("Compare", message, details)
        self.on_failed(message)

    def cancelled(self, task: Task, message: str) -> None:
        if task is self.task:
            self.task = None
            self.status.show_message(message, 5000)

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None
