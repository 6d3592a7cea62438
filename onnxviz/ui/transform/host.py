"""What the transforms' parts (cost, floats, variant_actions) need of the controller that composes them: the
:class:`~onnxviz.ui.transform.controller.TransformController` is one, and they name this protocol instead of it
(naming it back would make an import cycle)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import onnx
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.model.document import Document
    from onnxviz.model.graph.index import ModelIndex
    from onnxviz.model.transform import Outcome, Transformer, Variant, Variants
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.ports import DiffApi, Files, ShownDocument, Status, Tasks
    from onnxviz.ui.tasks import Task
    from onnxviz.ui.transform.dialog import Request
    from onnxviz.ui.transform.dock import TransformDock


class TransformHost(Protocol):
    window: QMainWindow  # the parent of the dialogs
    document: ShownDocument
    canvas: GraphCanvas
    status: Status
    tasks: Tasks
    files: Files
    dock: TransformDock
    # the session: its variants, the last transform (its variants before and after), the last quantization and
    # the model it started from, the nodes kept in float, the task running, the windows opened
    variants: Variants
    outcome: Outcome | None
    before_key: int | None
    after_key: int | None
    base_key: int | None
    quantization: Request | None
    excluded: tuple[str, ...]
    task: Task | None
    windows: list[QMainWindow]

    @property
    def cost_shown(self) -> SignalInstance: ...

    @property
    def transformer(self) -> Transformer: ...

    @property
    def shown_key(self) -> int | None:
        """The variant the window's model is (None: none, or edited since)."""

    def diff(self) -> DiffApi: ...

    def say(self, text: str) -> None:
        """A message in the status bar."""

    def update_actions(self) -> None: ...

    def start(self, request: Request, source: int | None = None) -> Task | None: ...

    def see_cost(self, runs: int = 20, variant: int | None = None) -> Task | None: ...

    def show_dock(self) -> None: ...

    def show_variants(self) -> None: ...

    def replace(self, doc: Document, model: onnx.ModelProto, index: ModelIndex, label: str, before: int | None,
                after: int) -> None:
        """The window's model replaced as one undoable command; the variants it was and is remembered."""

    def open_window(self, part: Document, source: Document, variant: Variant) -> QMainWindow: ...
