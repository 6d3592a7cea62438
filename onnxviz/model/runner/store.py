"""Captured values on disk: one .npy per value plus ``index.json``; read back memory-mapped.

The worker writes values as they are summarized, so the window only ever holds
the statistics; an array is mapped from disk when a view asks for it.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from onnxviz.model.index import topological_order
from onnxviz.model.progress import ProgressFn, no_progress
from onnxviz.model.runner.capture import Captured
from onnxviz.model.runner.protocol import RunError
from onnxviz.model.tensors import TensorStats, stats_of_array

INDEX_FILE = "index.json"
FORMAT = "onnxviz-run/1"

MEASURES: dict[str, str] = {
    "max_abs": "max |x|",
    "mean": "mean",
    "std": "std",
    "nonfinite": "NaN/Inf present",
    "time_us": "run time (us)",
}
"""Per-node measures the canvas overlay can show: key -> label."""


@dataclass(frozen=True)
class ValueRecord:
    """One captured value: where it is, what produced it, and its statistics."""

    name: str
    file: str
    numpy_dtype: str
    shape: tuple[int, ...]
    node: int            # producing node position in the main graph; -1 for graph inputs
    order: int           # position of that node in topological order (-1 for inputs)
    node_name: str
    op_type: str
    engine: str
    stats: TensorStats

    @property
    def abs_max(self) -> float | None:
        s = self.stats
        return None if s.minimum is None or s.maximum is None else max(abs(s.minimum), abs(s.maximum))

    @property
    def nonfinite(self) -> bool:
        return self.stats.nan_count > 0 or self.stats.inf_count > 0


def stats_to_json(stats: TensorStats) -> dict[str, Any]:
    out = {f.name: getattr(stats, f.name) for f in fields(stats)}
    out["shape"] = list(stats.shape)
    out["hist_counts"] = [int(x) for x in stats.hist_counts]
    out["hist_edges"] = [float(x) for x in stats.hist_edges]
    return out


def stats_from_json(data: dict[str, Any]) -> TensorStats:
    known = {f.name for f in fields(TensorStats)}
    data = {k: v for k, v in data.items() if k in known}
    data["shape"] = tuple(data.get("shape", ()))
    data["hist_counts"] = np.asarray(data.get("hist_counts", []), np.int64)
    data["hist_edges"] = np.asarray(data.get("hist_edges", []), np.float64)
    return TensorStats(**data)


def _file_name(k: int, name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60].strip("._") or "value"
    return f"{k:05d}_{safe}.npy"


def _savable(array: np.ndarray) -> np.ndarray:
    """np.save cannot write object arrays without pickle; strings become fixed-width unicode."""
    if array.dtype == object:
        return np.asarray(array.astype(str))
    return array


def write_result(captured: Captured, model: onnx.ModelProto, out_dir: Path,
                 progress: ProgressFn = no_progress) -> dict[str, Any]:
    """Save every value and ``index.json``; returns the index."""
    out_dir.mkdir(parents=True, exist_ok=True)
    nodes = model.graph.node
    producer = {name: i for i, n in enumerate(nodes) for name in n.output if name}
    order, _ = topological_order(nodes, producer)
    rank = {node: k for k, node in enumerate(order)}
    values: dict[str, Any] = {}
    total = max(1, len(captured.values))
    for k, (name, array) in enumerate(captured.values.items()):
        file = _file_name(k, name)
        np.save(out_dir / file, _savable(array), allow_pickle=False)
        node = captured.producers.get(name, -1)
        values[name] = {
            "file": file, "numpy_dtype": str(array.dtype), "shape": list(array.shape),
            "node": node, "order": rank.get(node, -1),
            "node_name": nodes[node].name if node >= 0 else "",
            "op_type": nodes[node].op_type if node >= 0 else "",
            "engine": captured.engines.get(name, captured.engine),
            "stats": stats_to_json(stats_of_array(array, name)),
        }
        if k % 64 == 0:
            progress(0.6 + 0.4 * k / total, f"Saving values {k}/{total}")
    index = {
        "format": FORMAT, "engine": captured.engine, "notes": captured.notes,
        "outputs": captured.outputs, "inputs": [n for n, e in captured.engines.items() if e == "input"],
        "timings": captured.timings,
        "node_times_us": {str(k): v for k, v in captured.node_times_us.items()},
        "values": values,
    }
    (out_dir / INDEX_FILE).write_text(json.dumps(index, indent=1, allow_nan=True), encoding="utf-8")
    return index


@dataclass
class RunResult:
    """A finished run, read from its folder. Arrays are memory-mapped on request."""

    directory: Path
    engine: str
    notes: list[str]
    outputs: list[str]
    inputs: list[str]
    timings: dict[str, float]
    node_times_us: dict[int, float]
    values: dict[str, ValueRecord]
    owns_directory: bool = False
    label: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: str | Path, owns_directory: bool = False) -> RunResult:
        d = Path(directory)
        try:
            index = json.loads((d / INDEX_FILE).read_text(encoding="utf-8"))
            values = {name: ValueRecord(name=name, file=v["file"], numpy_dtype=v["numpy_dtype"],
                                        shape=tuple(v["shape"]), node=v["node"], order=v["order"],
                                        node_name=v["node_name"], op_type=v["op_type"], engine=v["engine"],
                                        stats=stats_from_json(v["stats"]))
                      for name, v in index["values"].items()}
            return cls(d, index["engine"], index["notes"], index["outputs"], index["inputs"], index["timings"],
                       {int(k): float(v) for k, v in index["node_times_us"].items()}, values, owns_directory)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RunError(f"{d} does not hold a readable run ({INDEX_FILE} is missing or damaged).",
                           str(exc)) from exc

    def array(self, name: str) -> np.ndarray:
        """The value, memory-mapped from its .npy (read-only)."""
        record = self.values[name]
        try:
            array = np.load(self.directory / record.file, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise RunError(f"the stored value '{name}' could not be read: {exc}.", str(exc)) from exc
        if array.dtype.kind == "V" and record.numpy_dtype != str(array.dtype):
            import ml_dtypes

            array = array.view(np.dtype(getattr(ml_dtypes, record.numpy_dtype)))
        return array

    def outputs_of(self, node: int) -> list[ValueRecord]:
        return [r for r in self.values.values() if r.node == node and node >= 0]

    def first_nonfinite(self) -> ValueRecord | None:
        """The value with NaN or Inf produced first in topological order."""
        bad = [r for r in self.values.values() if r.nonfinite and r.node >= 0]
        return min(bad, key=lambda r: r.order) if bad else None

    def measure(self, key: str) -> dict[int, float]:
        """Per-node figure for the overlay (see :data:`MEASURES`)."""
        if key == "time_us":
            return dict(self.node_times_us)
        pick: Callable[[ValueRecord], float | None] = {
            "max_abs": lambda r: r.abs_max,
            "mean": lambda r: r.stats.mean,
            "std": lambda r: r.stats.std,
            "nonfinite": lambda r: 1.0 if r.nonfinite else 0.0,
        }[key]
        out: dict[int, float] = {}
        for r in self.values.values():
            v = pick(r)
            if r.node < 0 or v is None:
                continue
            if r.node in out and key in ("max_abs", "nonfinite"):
                out[r.node] = max(out[r.node], v)
            else:
                out.setdefault(r.node, v)  # mean and std describe a node's first output
        return out

    def cleanup(self) -> None:
        """Delete the folder if this result created it."""
        if self.owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)
