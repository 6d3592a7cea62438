"""``onnxviz.run``: a model run on CPU in a worker process, its values handed back as numpy arrays."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from onnxviz.api.models import ModelLike, open_document
from onnxviz.model.document import Document
from onnxviz.model.runner import ENGINES, RunError, RunOptions, RunResult, run_model
from onnxviz.model.runner.budget import CaptureTooBig, upstream_values
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.model.text import display_name

Capture = str | Iterable[str] | None


@dataclass(frozen=True)
class RunOutput:
    """What a run computed: ``outputs``, the graph outputs by name (arrays; a sequence or map as Python lists
    and dicts), and ``values``, every value the capture kept by name (a value inside an If/Loop/Scan body as
    ``SCOPE::NAME``), each a numpy array of its own (nothing stays on disk). ``run["name"]`` looks in both."""

    model: str
    engine: str
    outputs: dict[str, Any]
    values: dict[str, np.ndarray] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        if name in self.outputs:
            return self.outputs[name]
        return self.values[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self.values, **self.outputs})


def _capture_plan(capture: Capture, doc: Document) -> tuple[bool, frozenset[str] | None]:
    """(capture intermediate values, which: None for all) for ``capture``: None or "outputs" (the graph outputs
    only), "all", "upstream-of:NODE" (NODE's outputs and every value above it) or value names."""
    if capture is None or capture == "outputs":
        return False, frozenset()
    if capture == "all":
        return True, None
    if isinstance(capture, str) and capture.startswith("upstream-of:"):
        name = capture.partition(":")[2]
        nodes = doc.model.graph.node
        position = next((i for i, n in enumerate(nodes) if n.name == name or name in n.output), -1)
        if position < 0:
            raise RunError(f"capture: the main graph has no node or value named '{display_name(name, 80)}'.")
        return True, upstream_values(nodes, position)
    if isinstance(capture, str):
        raise RunError(f"capture: '{display_name(capture, 80)}' is not 'outputs', 'all', 'upstream-of:NODE' "
                       "or a list of value names.")
    return True, frozenset(capture)


def run(model: ModelLike, inputs: Mapping[str, Any] | None = None, *, capture: Capture = None,
        dims: Mapping[str, int] | None = None, seed: int = 0, engine: str = "onnxruntime",
        optimized: bool = False) -> RunOutput:
    """Run ``model`` on CPU in a worker process (a crash in the runtime cannot take this interpreter down).

    ``inputs``: arrays by input name, each checked against its input and cast to its type; the others are
    generated with ``seed`` (``dims`` sizes their symbolic dimensions; 1 by default). ``capture``: the graph
    outputs only (None, the default), ``"all"`` (every value: refused, naming what to capture instead, when
    the estimate says it would not fit in memory), ``"upstream-of:NODE"`` or a list of value names.
    ``engine``: "onnxruntime" (falling back to the ONNX reference evaluator when it cannot run the model) or
    "reference". Raises :class:`~onnxviz.OnnxvizError` in one sentence when the model cannot run."""
    if engine not in ENGINES:
        raise RunError(f"engine must be one of {', '.join(map(repr, ENGINES))}, not {engine!r}.")
    doc = open_document(model)
    captured, keep = _capture_plan(capture, doc)
    given = {name: np.asarray(array) for name, array in (inputs or {}).items()}
    feeds = build_feeds(input_specs(doc.model, doc.index), given, dict(dims or {}), "random", seed)
    options = RunOptions(engine=engine, optimized=optimized, capture=captured, keep=keep)
    source = doc.path if doc.path is not None and doc.file_matches() else doc.model  # a file: read by the worker
    try:
        result = run_model(source, feeds, options, index=doc.index, base_dir=doc.base_dir)
    except CaptureTooBig as exc:
        raise RunError(f"{exc.message}; capture a part with capture='outputs', capture='upstream-of:NODE' or "
                       "a list of value names.") from exc
    except RunError as exc:
        if exc.partial is not None:
            exc.partial.cleanup()
        raise
    try:
        return _arrays(doc.name, result, captured)
    finally:
        result.cleanup()


def _arrays(name: str, result: RunResult, captured: bool) -> RunOutput:
    """The result's values copied into memory (its files go with its cleanup)."""
    outputs: dict[str, Any] = {}
    for out in result.outputs:
        if out in result.values:
            outputs[out] = np.array(result.array(out))
        elif out in result.structured:
            outputs[out] = result.structured_value(out)
    values = {key: np.array(result.array(key)) for key in result.values} if captured else {}
    return RunOutput(name, result.engine, outputs, values, list(result.notes), dict(result.timings))
