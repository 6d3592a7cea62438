"""``onnxviz.run``: run a model from a script or a notebook and get its values as numpy arrays.

The run happens in the runner's worker process, as in the window and ``onnxviz run``: a crash of the
runtime raises :class:`~onnxviz.model.runner.protocol.RunError` here and ends nothing else, and a script
needs no ``if __name__ == "__main__":`` guard (the worker does not run the script again).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from onnxviz.model.runner.inputs import input_specs
from onnxviz.model.runner.protocol import ENGINES, RunError, RunOptions
from onnxviz.model.text import display_name

CAPTURES = ("outputs", "all")


@dataclass
class RunValues:
    """What :func:`run` gives back, every array in memory (the run's files are removed).

    ``outputs``: the graph outputs by name (a sequence or map as Python lists and dicts); ``values``: every
    captured value (with ``capture="all"``; values inside If/Loop/Scan bodies as ``scope::name``);
    ``inputs``: the arrays the model ran on, generated ones included; ``dims``: the sizes onnxviz chose for
    the generated inputs' dimensions; ``engine`` and ``optimized``: what ran; ``notes``: what the run said."""

    outputs: dict[str, Any]
    values: dict[str, np.ndarray] = field(default_factory=dict)
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    dims: dict[str, int] = field(default_factory=dict)
    engine: str = ""
    optimized: bool = False
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, name: str) -> Any:
        """A graph output, or any captured value, by name."""
        if name in self.outputs:
            return self.outputs[name]
        return self.values[name]


def run(model: str | Path | onnx.ModelProto | bytes, inputs: Mapping[str, Any] | str | Path | None = None, *,
        dims: Mapping[str, int] | None = None, capture: str = "outputs", engine: str = "onnxruntime",
        optimized: bool = False, seed: int = 0) -> RunValues:
    """Run ``model`` (a path, a ModelProto or its bytes) on CPU in a worker process.

    ``inputs``: arrays by input name, or the path of an .npz or of a folder of ``input_N.pb`` files; the
    inputs not given are generated (seeded by ``seed``), their sizes from ``dims`` (by dimension name, or
    ``"INPUT[AXIS]"``), else chosen so the model runs (see :mod:`.sizes`). ``capture``: "outputs" or "all"
    (every intermediate value). ``engine``: "onnxruntime" (the reference evaluator takes over a model it
    cannot load) or "reference". ``optimized``: onnxruntime's graph optimizations on (with ``capture="all"``,
    the values that keep their names in the optimized graph). Raises RunError (an OnnxvizError) with one
    sentence when the model or the inputs cannot run."""
    from onnxviz.model.graph.index import index_escaping_text
    from onnxviz.model.io.loading import read_model_file
    from onnxviz.model.runner import run_model
    from onnxviz.model.runner.input_files import read_inputs
    from onnxviz.model.runner.sizes import inputs_to_run

    if capture not in CAPTURES:
        raise RunError(f"capture must be one of {', '.join(CAPTURES)}, not '{display_name(str(capture), 40)}'.")
    if engine not in ENGINES:
        raise RunError(f"engine must be one of {', '.join(ENGINES)}, not '{display_name(str(engine), 40)}'.")
    path = Path(model).absolute() if isinstance(model, str | Path) else None
    proto = read_model_file(path)[0] if path is not None else \
        onnx.load_from_string(model) if isinstance(model, bytes) else model
    if not isinstance(proto, onnx.ModelProto):
        raise RunError(f"model must be a path, an onnx.ModelProto or its bytes, not {type(model).__name__}.")
    index = index_escaping_text(proto)[0]
    specs = input_specs(proto, index)
    given = read_inputs(inputs, specs) if isinstance(inputs, str | Path) else dict(inputs or {})
    feeds, generated = inputs_to_run(specs, {k: np.asarray(v) for k, v in given.items()}, dict(dims or {}),
                                     "random", seed)
    options = RunOptions(engine=engine, optimized=optimized, capture=capture == "all")
    result = run_model(path or proto, feeds, options, index=index, base_dir=path.parent if path else None,
                       generated=generated)
    try:
        return _in_memory(result, capture == "all")
    finally:
        result.cleanup()


def _in_memory(result: Any, every: bool) -> RunValues:
    outputs: dict[str, Any] = {}
    for name in result.outputs:
        if name in result.values:
            outputs[name] = np.array(result.array(name))
        elif name in result.structured:
            outputs[name] = result.structured_value(name)
    values = {key: np.array(result.array(key)) for key, record in result.values.items() if record.node >= 0} \
        if every else {}
    inputs = {name: np.array(array) for name, array in result.input_arrays().items()}
    return RunValues(outputs, values, inputs, dict(result.dims), result.engine, result.optimized, list(result.notes))
