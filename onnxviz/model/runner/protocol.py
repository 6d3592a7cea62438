"""What a run is asked to do and what it reports back: plain, picklable data."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from onnxviz.model.runner.sizes import GeneratedInputs

ENGINE_ORT = "onnxruntime"
ENGINE_REFERENCE = "reference"
ENGINES = (ENGINE_ORT, ENGINE_REFERENCE)
PLANNING = "Inferring shapes to plan the capture"  # progress text while ONNX shape inference runs
SIZING = "Choosing the sizes of the generated inputs"  # progress text while the graph's suggestions are read


@dataclass(frozen=True)
class RunOptions:
    """``engine``: the engine tried first (onnxruntime falls back to the reference
    evaluator when it cannot run the model). ``optimized``: use onnxruntime's
    graph optimizations (values then may not match the nodes one to one).
    ``profile``: record per-node run times. ``capture``: keep every intermediate
    value, not only the graph outputs."""

    engine: str = ENGINE_ORT
    optimized: bool = False
    profile: bool = False
    capture: bool = True
    threads: int = 0  # onnxruntime intra-op threads; 0 lets it choose
    pack: bool = True  # fetch small values packed (see packing.py); off to retry after planning crashed
    memory_budget: int = 1 << 30  # bytes of values kept in shared memory; beyond it, on disk
    keep: frozenset[str] | None = None  # the node outputs captured (inputs and graph outputs always); None: all
    check_memory: bool = True  # refuse (budget.CaptureTooBig) a capture that would not fit in memory
    memory_limit: int | None = None  # bytes a capture may take; None: the memory available when it starts


@dataclass(frozen=True)
class RunRequest:
    """Everything the worker process needs, as files in ``work_dir``."""

    model_path: Path           # serialized model (the document's current state)
    feeds_path: Path           # .npz of the graph inputs, in the order of feed_names (arr_0, arr_1, ...)
    out_dir: Path              # where values and index.json are written
    base_dir: Path | None      # the model's folder, for external data
    options: RunOptions = field(default_factory=RunOptions)
    pack_values: bool = True   # packed where fastest (shared memory); False: in out_dir, the user's (--dump)
    feed_names: tuple[str, ...] = ()  # not the .npz's keys: a zip entry's name stops at 64 KiB
    generated: GeneratedInputs | None = None  # inputs the worker makes (sizes chosen, and tried, there)


DEFAULT_OPTIONS = RunOptions()
