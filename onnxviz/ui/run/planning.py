"""The inputs of each model's runs: the plan remembered per model (the Run with Inputs... dialog's choices, the
sizes of symbolic dimensions, those a run found) and the dialog itself."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from onnxviz.model.runner.inputs import input_specs, unknown_input
from onnxviz.ui.run.input_sources import (
    InputChoice,
    InputPlan,
    PendingFeeds,
    default_choice,
    remember_dims,
    remembered_dims,
    sizes_in_file,
)

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QWidget

    from onnxviz.model.document import Document
    from onnxviz.model.runner import RunResult
    from onnxviz.ui.ports import ShownDocument
    from onnxviz.ui.run.inputs_dialog import InputsDialog


class InputPlans:
    """Each model's :class:`InputPlan` (by path, or by document while it has none), the sizes remembered in the
    settings, and the Run with Inputs... dialog."""

    def __init__(self, parent: QWidget, document: ShownDocument, settings: QSettings | None) -> None:
        self.parent, self.document, self.settings = parent, document, settings
        self.plans: dict[str, InputPlan] = {}
        self.inputs_dialog: InputsDialog | None = None

    def plan(self, doc: Document) -> InputPlan:
        key = str(doc.path or id(doc))
        if key not in self.plans:
            specs = input_specs(doc.model, doc.index)
            self.plans[key] = InputPlan({s.name: default_choice(s) for s in specs},
                                        remembered_dims(self.settings) if self.settings is not None else {})
        return self.plans[key]

    def ask(self, doc: Document, then: Callable[[PendingFeeds], object], plan: InputPlan | None = None) -> None:
        """The Run with Inputs... dialog for ``doc`` (with the choices its last run remembered); ``then``
        gets the inputs it is accepted with, and the choices are remembered. Raises RunError when the
        model's inputs cannot be read."""
        from onnxviz.ui.run.inputs_dialog import InputsDialog

        dialog = InputsDialog(input_specs(doc.model, doc.index), plan or self.plan(doc), doc.name, self.parent)
        self.inputs_dialog = dialog

        def accepted() -> None:
            new_plan = dialog.plan()
            self.plans[str(doc.path or id(doc))] = new_plan
            if self.settings is not None:
                remember_dims(self.settings, new_plan.dims)
            if self.document.doc is doc and dialog.feeds is not None:
                then(dialog.feeds)

        dialog.accepted.connect(accepted)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def use_files(self, doc: Document, files: Mapping[str, str]) -> str:
        """These inputs of ``doc`` read from array files from now on, the sizes of their symbolic dimensions
        taken from the files; returns why not ('' when they are) when one is no input of the model."""
        specs = {s.name: s for s in input_specs(doc.model, doc.index)}
        unknown = next((name for name in files if name not in specs), None)
        if unknown is not None:
            return unknown_input(unknown, list(specs.values())).message
        plan = self.plan(doc)
        for name, path in files.items():
            plan.choices[name] = replace(plan.choices.get(name, InputChoice()), source="file", path=path)
            plan.dims.update(sizes_in_file(specs[name], path))
        return ""

    def remember_sizes(self, doc: Document, result: RunResult) -> None:
        """The sizes the run chose for the generated inputs' auto dimensions: tried first next time, and shown
        beside their "auto" in the Run with Inputs dialog."""
        plan = self.plan(doc)
        plan.found.update((d, size) for d, size in result.dims.items() if d not in plan.dims)
