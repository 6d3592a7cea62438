"""The public editing API of a Document: every method is one undoable command.

Methods validate their arguments against the current model first and raise
:class:`~onnxviz.model.errors.EditError` with a one-sentence message, leaving
the model untouched. Node references are described in :mod:`onnxviz.model.editing.base`.
"""

from __future__ import annotations

from onnxviz.model.editing.branch_edits import Branch, BranchEditsMixin
from onnxviz.model.editing.graph_edits import KEEP, GraphEditsMixin
from onnxviz.model.editing.model_edits import ModelEditsMixin
from onnxviz.model.editing.node_edits import NodeEditsMixin

__all__ = ["Branch", "EditingMixin", "KEEP"]


class EditingMixin(NodeEditsMixin, BranchEditsMixin, GraphEditsMixin, ModelEditsMixin):
    """Mixed into :class:`~onnxviz.model.document.Document`."""
