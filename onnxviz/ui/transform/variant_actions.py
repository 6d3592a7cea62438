"""The Transform dock's variants of the session: used here (one undo step), opened in a window, saved, measured,
compared, removed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.io.slices import parse_in_slices
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.transform import TransformError, Variant
from onnxviz.ui.tasks import Task, waiting_pool
from onnxviz.ui.transform.models import MODEL_FILTER, parsed, prepared_part

if TYPE_CHECKING:
    from onnxviz.model.graph.index import ModelIndex
    from onnxviz.ui.transform.host import TransformHost


class VariantActions(QObject):
    """What the dock's variants list asks of a variant."""

    def __init__(self, host: TransformHost, parent: QObject) -> None:
        super().__init__(parent)
        self.host = host

    def variant_action(self, action: str, key: int) -> None:
        variant = self.host.variants.get(key)
        doc = self.host.document.doc
        if variant is None or doc is None:
            return
        try:
            if action == "use":
                self._use(doc, variant)
            elif action == "window":
                self._in_window(doc, variant)
            elif action == "save":
                self._save(variant, doc)
            elif action == "measure":
                self.host.see_cost(self.host.dock.runs.value(), key)
            elif action == "compare":
                self.host.diff().compare_with(variant.path)
            elif action == "remove":
                self.host.variants.remove(key)
                self.host.show_variants()
        except (OnnxvizError, OSError) as exc:
            message = sentence(exc.message) if isinstance(exc, OnnxvizError) else f"The variant could not be read: {exc}."
            self.host.status.show_error("Variant", message)

    def _use(self, doc: Document, variant: Variant) -> None:
        """The variant replaces the model shown (one undo step), read and indexed in the background."""
        if self.host.shown_key == variant.key:
            self.host.say(f"The model shown is {variant.name} already.")
            return
        generation, path = doc.generation, variant.path

        def work(progress: ProgressFn, token: CancelToken) -> tuple[onnx.ModelProto, ModelIndex]:
            progress(0.0, f"Reading {variant.name}")
            return parsed(path.read_bytes(), token.pause)

        def finished(read: tuple[onnx.ModelProto, ModelIndex]) -> None:
            if doc is not self.host.document.doc or doc.generation != generation:
                self.host.say("The model changed meanwhile; the variant was not used (use it again).")
                return
            self.host.replace(doc, read[0], read[1], f"Use {variant.name}", None, variant.key)
            self.host.show_variants()
            self.host.say(f"The model is now {variant.name} (Edit > Undo gives the previous one back).")

        task = Task(work, f"Reading {variant.name}", parent=self)
        task.finished.connect(finished)
        task.failed.connect(lambda exc, tb: self.host.status.show_error("Variant", f"{variant.name} could not be read: {exc}.",
                                                                   tb))
        self.host.tasks.track_task(task)
        task.start(waiting_pool())

    def _in_window(self, doc: Document, variant: Variant) -> None:
        """The variant in a window of its own, read and prepared in the background."""
        path = variant.path

        def work(progress: ProgressFn, token: CancelToken) -> Document:
            progress(0.0, f"Reading {variant.name}")
            return prepared_part(parse_in_slices(path.read_bytes(), token.pause), doc, path.name)

        task = Task(work, f"Reading {variant.name}", parent=self)
        task.finished.connect(lambda part: self.host.windows.append(self.host.open_window(part, doc, variant)))
        task.failed.connect(lambda exc, tb: self.host.status.show_error("Variant", f"{variant.name} could not be read: {exc}.",
                                                                   tb))
        self.host.tasks.track_task(task)
        task.start(waiting_pool())

    def _save(self, variant: Variant, doc: Document) -> None:
        folder = doc.path.parent if doc.path is not None else Path.cwd()
        chosen, _ = QFileDialog.getSaveFileName(self.host.window, "Save Variant As", str(folder / variant.path.name),
                                                MODEL_FILTER)
        if not chosen:
            return
        target = Path(chosen).absolute()
        if doc.path is not None and target == doc.path:
            raise TransformError("that is the file of the model shown; use the variant here (Use Here) and save, "
                                 "or save it under another name.")
        self.host.files.save_copy(Document(onnx.load_from_string(self.host.variants.data(variant.key))), target)
