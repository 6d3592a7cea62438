"""Run a model on CPU in a worker process and keep every intermediate value.

* :func:`check_runnable` refuses a structurally broken model with the reason;
* :mod:`.inputs` describes graph inputs and makes or reads arrays for them;
* :func:`run_model` runs in a separate process (:mod:`.worker`) through the
  in-process :func:`~.capture.capture` and returns a :class:`~.store.RunResult`
  whose values live on disk;
* :mod:`.compare` compares two results value by value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import onnx

from onnxviz.model.graph.checks import unknown_versions
from onnxviz.model.graph.index import ModelIndex, index_escaping_text
from onnxviz.model.io.external import check_external_data
from onnxviz.model.problems import Severity
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.protocol import DEFAULT_OPTIONS, ENGINE_ORT, ENGINE_REFERENCE, ENGINES, RunOptions
from onnxviz.model.runner.sizes import GeneratedInputs
from onnxviz.model.runner.store import (
    FLAG_STATES,
    MEASURE_KINDS,
    MEASURES,
    RunResult,
    ValueRecord,
)
from onnxviz.model.runner.worker import WorkerRun, run_in_worker, warm_up

__all__ = ["ENGINES", "ENGINE_ORT", "ENGINE_REFERENCE", "FLAG_STATES", "MEASURES", "MEASURE_KINDS",
           "GeneratedInputs", "RunError", "RunOptions", "RunResult", "ValueRecord", "WorkerRun", "check_runnable",
           "refusal", "run_model", "warm_up"]


def check_runnable(model: onnx.ModelProto, index: ModelIndex | None = None) -> None:
    """Raise RunError naming the first structural error (undefined input, cycle, ...)."""
    reason = refusal(index or ModelIndex(model))
    if reason:
        raise RunError(reason)


def refusal(index: ModelIndex) -> str:
    """Why the indexed model cannot run ('' when it can)."""
    errors = [p for p in index.problems if p.severity == Severity.ERROR]
    if errors:
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        return f"the model cannot run: {errors[0].message}{more}."
    if not index.main.output_names:
        return "the model cannot run: its graph has no outputs."
    return ""


def too_new(model: onnx.ModelProto) -> str:
    """Why running the model would not be what its file means, when it declares versions newer than onnx and
    onnxruntime know ('' otherwise): neither engine knows what its operators do there. A question in the
    window, a flag on the command line."""
    unknown = unknown_versions(model)
    if not unknown:
        return ""
    from importlib.metadata import version  # not onnxruntime itself: the window imports it only where it runs

    return (f"the model declares {' and '.join(unknown)}, newer than onnx {onnx.__version__} (IR {onnx.IR_VERSION}, "
            f"opset {onnx.defs.onnx_opset_version()}) and onnxruntime {version('onnxruntime')} know, so a run may not "
            "compute what the file means.")


def _folder_of(model: onnx.ModelProto | Path | bytes) -> Path | None:
    return model.parent if isinstance(model, Path) else None


def _external_data_refusal(model: onnx.ModelProto, folder: Path | None) -> str:
    """Why external data cannot be read safely ('' if it can): checked before any worker starts."""
    if folder is None:
        return ""
    problems = check_external_data(model, folder)
    return f"the model cannot run: {problems[0].message.rstrip('.')}." if problems else ""


def run_model(model: onnx.ModelProto | Path | bytes, feeds: Mapping[str, np.ndarray],
              options: RunOptions = DEFAULT_OPTIONS, *, index: ModelIndex | None = None,
              base_dir: Path | None = None, out_dir: Path | None = None,
              progress: ProgressFn = no_progress, token: CancelToken | None = None,
              on_start: Callable[[WorkerRun], None] | None = None,
              generated: GeneratedInputs | None = None) -> RunResult:
    """Check, then run ``model`` (a ModelProto, its serialized bytes, or the path of a file)
    in a worker process. ``index``, when given, is the model's index (saves building it).
    ``feeds`` are the inputs given; ``generated`` the inputs the worker makes, choosing their sizes
    (see :mod:`.sizes`: the result's ``dims`` says which ran).

    A capture that would not fit in memory raises :class:`~.budget.CaptureTooBig` before anything
    runs (``options.keep`` captures a part); a RunError of a captured run that failed at a node
    carries in ``partial`` a RunResult of the values computed before it (the caller cleans it up)."""
    if index is None:
        if isinstance(model, Path):
            proto = onnx.load(str(model), load_external_data=False)
        elif isinstance(model, bytes):
            proto = onnx.load_from_string(model)
        else:
            proto = model
        index = index_escaping_text(proto)[0]
    reason = refusal(index) or _external_data_refusal(index.model, base_dir or _folder_of(model))
    if reason:
        raise RunError(reason)
    return run_in_worker(model, feeds, options, base_dir=base_dir, out_dir=out_dir, progress=progress,
                         token=token, on_start=on_start, generated=generated)
