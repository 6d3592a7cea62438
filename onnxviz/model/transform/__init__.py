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

import onnx

from onnxviz.model.editing.ops import Command, ReplaceMessage
from onnxviz.model.transform.catalog import EXTRA, TOOLS, Settings, Tool, TransformError
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


def replacement(model: onnx.ModelProto, label: str) -> Command:
    """The command that replaces a document's whole model by ``model`` (its undo gives back the exact bytes)."""
    return Command(label, [ReplaceMessage((), model)])


__all__ = ["EXTRA", "TOOLS", "Figures", "Outcome", "OutputCheck", "OutputsChanged", "Settings", "Summary", "Timing",
           "Tool", "TransformError", "Transformer", "Variant", "Variants", "Verification", "default_limits",
           "replacement", "run_transform"]
