"""What a run reports when it fails: the errors the worker raises and the caller catches (below the protocol, the
inputs and the sizes, which all raise them)."""

from __future__ import annotations

from typing import Any

from onnxviz.model.errors import OnnxvizError


class RunError(OnnxvizError):
    """The model could not be run (refused, unsupported, or the runtime failed). ``node``: the
    position of the main-graph node that failed, when the engine named it (-1 otherwise)."""

    def __init__(self, message: str, details: str = "", node: int = -1, partial: Any = None) -> None:
        super().__init__(message, details)
        self.node = node
        self.partial = partial  # what was computed before the failing node: capture.Captured in the worker,
        # store.RunResult in the parent (its values stay on disk until its cleanup())


class NodeFailed(RunError):
    """onnxruntime created its session but a node failed while it ran (not a model it cannot load)."""


class InputsRefused(RunError):
    """onnxruntime could not run the model on generated inputs (a node failed): the inputs, not the model, may
    be what is wrong, so the run is not handed to the reference evaluator (see sizes.py)."""
