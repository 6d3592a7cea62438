"""A model as onnxruntime deploys it: the graph its session runs once graph optimizations are on (fused
and folded nodes, contrib kernels such as FusedConv, SkipLayerNormalization, DynamicQuantizeMatMul),
written out by onnxruntime itself (``SessionOptions.optimized_model_filepath``).

Captured without further optimization, that graph computes what the optimized session computes, and its
values are the intermediates that still exist once it is optimized. onnxruntime builds the session in a
child process (a crash of the runtime loses nothing):

    python -m onnxviz.model.runner.deployed MODEL OUT [LEVEL]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from onnxviz.model.runner.errors import RunError

LEVELS = ("basic", "extended", "all")
TIMEOUT_S = 600
DATA_SUFFIX = ".data"  # the optimized model's weights, beside it


def optimized_copy(model: Path, out: Path, level: str = "all", base_dir: Path | None = None) -> Path:
    """Write the graph onnxruntime's session runs for ``model`` (graph optimizations ``level``) to ``out``,
    its weights in ``out`` + ".data"; raises RunError in one sentence when onnxruntime cannot."""
    if level not in LEVELS:
        raise RunError(f"unknown optimization level '{level}'; use {', '.join(LEVELS)}.")
    command = [sys.executable, "-m", "onnxviz.model.runner.deployed", str(model.resolve()), str(out.resolve()), level]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                              cwd=str(base_dir or model.parent), env=dict(os.environ))
    except subprocess.TimeoutExpired:
        raise RunError(f"onnxruntime took over {TIMEOUT_S} s to optimize {model.name}.") from None
    if done.returncode != 0 or not out.is_file():
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise RunError(f"onnxruntime could not optimize {model.name}: {said}", done.stderr[-4000:])
    return out


def _write(model: Path, out: Path, level: str) -> None:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = {"basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                                        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    options.optimized_model_filepath = str(out)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                     out.name + DATA_SUFFIX)
    ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


if __name__ == "__main__":
    try:
        _write(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "all")
    except Exception as exc:  # one line for the parent
        print(f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}",
              file=sys.stderr)
        sys.exit(1)
