"""File > Save for the window: small models at once, big ones in a background Task with progress.

A failed or cancelled save changes nothing: the document stays dirty, the old files stay intact
(:mod:`onnxviz.model.io.saving` decides what is written, :mod:`onnxviz.model.io.disk` writes it
atomically) and the user sees one sentence with the details folded away; a save that could not write
offers Save As. "Saved" is said only once every file is complete on disk. A save that would replace
what the user did not name (the file changed on disk by another program, another model's data file,
text that was not valid UTF-8), write a model reading data files another program changed, or put a
model with errors in the place of a file without any asks first, offering the answers the model layer
gives (and Save As..., or Reload, where they help).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.io.disk import DiskError
from onnxviz.model.io.saving import DataChangedError, InvalidModelError, SaveOptions, SavePlan, SaveQuestion
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.ports import Status, Tasks
from onnxviz.ui.tasks import Task
from onnxviz.ui.widgets.names import message_text

BACKGROUND_SAVE_BYTES = 8 * 1024 * 1024  # bench_window.py: a 51 MB save held the GUI thread ~1 s


class SaveHost(Status, Tasks, Protocol):
    """What a save needs of the window it is made from (the shell): messages, a tracked task, the window itself
    (:meth:`window`: the parent of the questions, disabled while a background save writes), and the answers only
    it gives (Save As..., Reload) and what it does after a save."""

    def window(self) -> QWidget: ...

    def save_as(self, then: Callable[[], None] | None = None) -> None: ...

    def reload(self, *, ask: bool = True) -> None: ...

    def after_save(self, doc: Document, saved: Path) -> None: ...


def save_document(window: SaveHost, doc: Document, target: Path,
                  then: Callable[[], None] | None = None, options: SaveOptions | None = None) -> None:
    """Save ``doc`` to ``target``; on success update the window and run ``then``."""
    _Save(window, doc, target, then).attempt(options or SaveOptions())


class _Save:
    """One save of ``doc`` to ``target``: tried with the default options, then, when the model layer asks a question
    (:class:`SaveQuestion`), tried again with the options of the answer, by this object (the failure handler only
    asks; it never starts another save)."""

    def __init__(self, window: SaveHost, doc: Document, target: Path, then: Callable[[], None] | None) -> None:
        self.window, self.doc, self.target, self.then = window, doc, target, then

    def attempt(self, options: SaveOptions) -> None:
        window, doc, target, then = self.window, self.doc, self.target, self.then
        try:
            in_background = _is_big(doc)
            if not in_background:
                plan = doc.plan_save(target, options)
                plan.write()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message or a question, nothing is lost
            self.failed(exc, "")
            return
        if in_background:
            _save_in_background(window, doc, target, options, then, self.failed)
        else:
            _succeeded(window, doc, plan, then)

    def failed(self, exc: object, tb: str) -> None:
        window, doc, target, then = self.window, self.doc, self.target, self.then
        if isinstance(exc, SaveQuestion):
            ask_save_question(window, exc, self.attempt, _window_answers(window, doc, exc, then))
            return
        if isinstance(exc, OnnxvizError):
            message, details = exc.message, exc.details or tb
        else:
            message, details = f"Could not save {target.name}: {exc}.", tb
        message = sentence(message)  # 'bad.onnx is ...' keeps its file name as written
        window.show_message(f"{message} Your edits are still here.", 10000)
        if isinstance(exc, DiskError):  # the file could not be written there: another place may do
            _cannot_write(window, message, details, lambda: window.save_as(then))
        else:
            window.show_error("Cannot Save Model", message, details)


def _is_big(doc: Document) -> bool:
    """A save that may take long: a big model, or weights in data files that may be copied or read."""
    return doc.size_hint() >= BACKGROUND_SAVE_BYTES or doc.has_external_data


def _save_in_background(window: SaveHost, doc: Document, target: Path, options: SaveOptions,
                        then: Callable[[], None] | None, on_failure: Callable[[object, str], None]) -> None:
    # The window is disabled so nothing edits the model while the worker writes it; the document
    # notifies only once the plan is taken, on the GUI thread.
    shell = window.window()
    shell.setEnabled(False)

    def work(progress: ProgressFn, token: CancelToken) -> SavePlan:
        plan = doc.plan_save(target, options, token.pause)
        plan.write(progress)  # checks the token too
        return plan

    def finished(plan: SavePlan) -> None:
        shell.setEnabled(True)
        _succeeded(window, doc, plan, then)

    def failed(exc: object, tb: str) -> None:
        shell.setEnabled(True)
        on_failure(exc, tb)

    def cancelled() -> None:
        shell.setEnabled(True)
        window.show_message(f"Saving {target.name} was cancelled; nothing was written.", 10000)

    task = Task(work, f"Saving {target.name}", parent=shell)  # retired once it ends: its slots hold the document
    task.finished.connect(finished)
    task.failed.connect(failed)
    task.cancelled.connect(cancelled)
    window.track_task(task)
    window.show_message(f"Saving {target.name}...")
    task.start()


def _succeeded(window: SaveHost, doc: Document, plan: SavePlan, then: Callable[[], None] | None) -> None:
    saved = doc.saved(plan)
    window.after_save(doc, saved)
    notes = "".join(f" {note}" for note in plan.notes)
    window.show_message(f"Saved {saved.name}.{notes}{problems_note(doc)}", 15000 if notes else 10000)
    if then is not None:
        then()


def problems_note(doc: Document) -> str:
    """Saving a model with problems is allowed; the status bar says so."""
    count = len(doc.problems)
    if not count:
        return ""
    return f" Note: the model has {count} problem{'s' if count != 1 else ''} (see the Problems panel)."


WindowAnswer = tuple[str, Callable[[], None]]


def _window_answers(window: SaveHost, doc: Document, question: SaveQuestion,
                    then: Callable[[], None] | None) -> tuple[list[WindowAnswer], str]:
    """The answers only the window can give, and what they do: Save As... for a model with errors (the valid
    file stays), Reload for data files another program changed (the model as it is on disk now; the edits
    are dropped)."""
    if isinstance(question, InvalidModelError) and doc.path is not None:
        return [("Save As...", lambda: window.save_as(then))], f"Save As... leaves {doc.path.name} as it is."
    if isinstance(question, DataChangedError) and doc.path is not None:
        reload = "Reload shows the weights now on disk and drops your edits."
        keep = "" if question.lost else f"{question.choices[0][0]} keeps the weights shown, in a new file. "
        return [("Reload", lambda: window.reload(ask=False))], keep + reload
    return [], ""


def ask_save_question(window: SaveHost, question: SaveQuestion, answer: Callable[[SaveOptions], None],
                      actions: tuple[list[WindowAnswer], str] = ([], "")) -> QMessageBox:
    """Ask ``question`` with a button per answer the model layer offers, one per window ``actions`` (with the
    sentence that says what they do), and Cancel; does not block. ``answer`` gets the chosen options; Cancel
    saves nothing and says so."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Save", message_text(sentence(question.message)),
                      QMessageBox.StandardButton.Cancel, window.window())
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setInformativeText(" ".join(filter(None, [actions[1], "Nothing has been written yet."])))
    buttons = [(box.addButton(label, QMessageBox.ButtonRole.AcceptRole), options)
               for label, options in question.choices]
    others = [(box.addButton(label, QMessageBox.ButtonRole.ActionRole), act) for label, act in actions[0]]
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def finished(_result: int) -> None:
        clicked = box.clickedButton()
        chosen = next((options for button, options in buttons if button is clicked), None)
        act = next((act for button, act in others if button is clicked), None)
        if chosen is not None:
            answer(chosen)
        elif act is not None:
            act()
        else:
            window.show_message("Not saved; your edits are still here.", 10000)

    box.finished.connect(finished)
    box.open()
    return box


def _cannot_write(window: SaveHost, message: str, details: str, save_as: Callable[[], None]) -> None:
    """The error of a save that could not write (one sentence, the details folded away), with Save As... to
    write elsewhere; does not block."""
    box = window.show_error("Cannot Save Model", message, details)
    if not isinstance(box, QMessageBox):  # a test listens in place of the dialog
        return
    box.setInformativeText("Your edits are still here; you can save them somewhere else.")
    other = box.addButton("Save As...", QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(other)
    box.finished.connect(lambda _result: save_as() if box.clickedButton() is other else None)
