"""Transforms: optimize (onnxslim, onnxscript's optimizer, onnxruntime's graph optimizations, onnx-simplifier),
convert the opset, and quantize (onnxruntime's dynamic and static int8, 4-bit MatMulNBits), each run in a worker
process with its result checked (onnx's checker, onnxruntime, the outputs on the same inputs) and counted.

* :mod:`.catalog`: the transforms, the packages they need (how to install a missing one) and :class:`Settings`;
* :class:`Transformer` / :func:`run_transform` (:mod:`.pipeline`): run one, get an :class:`Outcome`;
* :func:`replacement`: the outcome as ONE undoable command replacing the document's model;
* :class:`Variants` (:mod:`.variants`): the session's tried variants.

This package sits above editing (its command) and matching (the limits of a comparison), below the document.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import onnx

from onnxviz.model.editing.commands import Command
from onnxviz.model.editing.ops import Op
from onnxviz.model.editing.target import REBUILD, EditTarget, IndexEffect
from onnxviz.model.transform.catalog import EXTRA, TOOLS, Settings, Tool, TransformError

if TYPE_CHECKING:
    from onnxviz.model.transform.pipeline import (
        Outcome,
        OutputsChanged,
        Transformer,
        default_limits,
        run_transform,
    )
    from onnxviz.model.transform.summary import Figures, Summary
    from onnxviz.model.transform.timing import Timing
    from onnxviz.model.transform.variants import Variant, Variants
    from onnxviz.model.transform.verify import OutputCheck, Verification

# imported on first use: the window's Transform menu reads only the catalog at start
_LATER = {"Outcome": "pipeline", "OutputsChanged": "pipeline", "Transformer": "pipeline",
          "default_limits": "pipeline", "run_transform": "pipeline", "Figures": "summary", "Summary": "summary",
          "Timing": "timing", "Variant": "variants", "Variants": "variants", "OutputCheck": "verify",
          "Verification": "verify"}


def __getattr__(name: str) -> object:
    module = _LATER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


class SwapModel(Op):
    """The document's model object replaced by ``model`` itself, not copied into it: its undo puts the old object
    back, untouched, so it gives back the exact bytes; no copy of either is made (a 300 MB model was copied twice
    on the GUI thread), and an index built for ``model`` beforehand stays valid for it (see ``Document.execute``).
    The main graph's nodes get new ids unless their count is unchanged (as :class:`ReplaceMessage`'s do)."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        self._old: onnx.ModelProto | None = None
        self._node_ids: list[str] = []

    def do(self, target: EditTarget) -> None:
        self._old, self._node_ids = target.model, list(target.node_ids)
        target.model = self.model
        if len(self.model.graph.node) != len(self._node_ids):
            target.node_ids[:] = [target.new_node_id() for _ in self.model.graph.node]

    def undo(self, target: EditTarget) -> None:
        assert self._old is not None
        target.model = self._old
        target.node_ids[:] = self._node_ids

    def index_effect(self) -> IndexEffect:
        return REBUILD


def replacement(model: onnx.ModelProto, label: str) -> Command:
    """The command that replaces a document's whole model by ``model`` (its undo gives back the exact bytes)."""
    return Command(label, [SwapModel(model)])


__all__ = ["EXTRA", "TOOLS", "Figures", "Outcome", "OutputCheck", "OutputsChanged", "Settings", "Summary", "Timing",
           "Tool", "TransformError", "Transformer", "Variant", "Variants", "Verification", "default_limits",
           "SwapModel", "replacement", "run_transform"]
