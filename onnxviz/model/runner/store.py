"""Captured values on disk: one .npy per value plus ``index.json``; read back memory-mapped.

The worker writes values as they are summarized, so the window only ever holds
the statistics; an array is mapped from disk when a view asks for it.
"""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from onnxviz.model.heap import building
from onnxviz.model.index import topological_order
from onnxviz.model.progress import ProgressFn, no_progress
from onnxviz.model.runner.capture import Captured
from onnxviz.model.runner.inputs import savable
from onnxviz.model.runner.protocol import ENGINE_REFERENCE, RunError
from onnxviz.model.runner.stats import summarize
from onnxviz.model.tensors import TensorStats

INDEX_FILE = "index.json"
PACK_FILE = "values.bin"
ALIGN = 64
FORMAT = "onnxviz-run/1"

MEASURES: dict[str, str] = {
    "max_abs": "max |x|",
    "mean": "mean",
    "std": "std",
    "nonfinite": "NaN/Inf present",
    "time_us": "run time (us)",
}
"""Per-node measures the canvas overlay can show: key -> label."""


def _numpy_dtype(name: str) -> np.dtype:
    """numpy's dtype names, plus the ml_dtypes ones (bfloat16, float8_*, int4) numpy does not know."""
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))


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
    summary: dict[str, Any]  # the statistics as stored; :attr:`stats` builds the TensorStats when asked
    offset: int = -1         # position in the packed file; -1 for a .npy of its own
    scope: str = ""          # the graph it belongs to (index.py's scope strings); "" for the main graph

    @property
    def key(self) -> str:
        """Its key in :attr:`RunResult.values` (the name itself in the main graph)."""
        return value_key(self.scope, self.name)

    @cached_property
    def stats(self) -> TensorStats:
        return stats_from_json(self.summary)

    @property
    def abs_max(self) -> float | None:
        low, high = self.summary["minimum"], self.summary["maximum"]
        return None if low is None or high is None else max(abs(low), abs(high))

    @property
    def nonfinite(self) -> bool:
        return self.summary["nan_count"] > 0 or self.summary["inf_count"] > 0


def value_key(scope: str, name: str) -> str:
    """Main-graph values by name; values inside bodies as ``scope::name`` (names repeat across bodies)."""
    return f"{scope}::{name}" if scope else name


_STATS_FIELDS = tuple(f.name for f in fields(TensorStats))


@functools.lru_cache(maxsize=64)
def _dtype_text(dtype: np.dtype) -> str:
    return str(dtype)  # numpy works the name out anew each time: 10 us, per value


def stats_to_json(stats: TensorStats) -> dict[str, Any]:
    """Compact: the histogram's edges are evenly spaced, so only their range is kept."""
    out = {name: getattr(stats, name) for name in _STATS_FIELDS}
    out["shape"] = list(stats.shape)
    out["hist_counts"] = np.asarray(stats.hist_counts).tolist()
    edges = stats.hist_edges
    out["hist_edges"] = [float(edges[0]), float(edges[-1])] if len(edges) else []
    return out


def stats_from_json(data: dict[str, Any]) -> TensorStats:
    known = {f.name for f in fields(TensorStats)}
    data = {k: v for k, v in data.items() if k in known}
    data["shape"] = tuple(data.get("shape", ()))
    counts = np.asarray(data.get("hist_counts", []), np.int64)
    edges = data.get("hist_edges", [])
    data["hist_counts"] = counts
    data["hist_edges"] = np.linspace(edges[0], edges[1], len(counts) + 1) if len(edges) == 2 and len(counts) \
        else np.asarray(edges, np.float64)
    return TensorStats(**data)


def _file_name(k: int, name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60].strip("._") or "value"
    return f"{k:05d}_{safe}.npy"


class _Writer:
    """Values into one packed file (far faster than 100k small files) in ``pack_dir``, or one .npy
    each in ``out_dir`` (``--dump``, or strings)."""

    FLUSH_BYTES = 8 << 20  # small values are gathered and written in big pieces

    def __init__(self, out_dir: Path, pack_dir: Path | None) -> None:
        self.out_dir = out_dir
        self.pack_path = pack_dir / PACK_FILE if pack_dir is not None else None
        self.pack = open(self.pack_path, "wb") if self.pack_path else None  # noqa: SIM115 - closed in close()
        self._end = 0  # bytes placed in the pack so far, written or waiting in _pending
        self._pending: list[bytes | memoryview] = []
        self._pending_bytes = 0

    def write(self, k: int, name: str, array: np.ndarray) -> dict[str, Any]:
        packable = array.dtype.kind in "biufc" or (array.dtype.kind == "V" and array.dtype.names is None)
        if self.pack is not None and packable:
            offset = -(-self._end // ALIGN) * ALIGN
            data = np.ascontiguousarray(array).reshape(-1).view(np.uint8).data
            self._append(bytes(offset - self._end))
            self._append(data)
            self._end = offset + data.nbytes
            return {"file": PACK_FILE, "offset": offset}
        file = _file_name(k, name)
        np.save(self.out_dir / file, np.asarray(array.astype(str)) if array.dtype == object else savable(array),
                allow_pickle=False)
        return {"file": file}

    def _append(self, data: bytes | memoryview) -> None:
        if not len(data):
            return
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= self.FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self.pack is not None and self._pending:
            self.pack.writelines(self._pending)
        self._pending, self._pending_bytes = [], 0

    def write_all(self, values: dict[str, np.ndarray]) -> list[dict[str, Any]]:
        try:
            placed = [self.write(k, name, array) for k, (name, array) in enumerate(values.items())]
            self._flush()
            return placed
        finally:
            if self.pack is not None:
                self.pack.close()


def write_result(captured: Captured, model: onnx.ModelProto, out_dir: Path, pack_dir: Path | None = None,
                 progress: ProgressFn = no_progress) -> dict[str, Any]:
    """Save every value (packed into ``pack_dir`` when given, else one .npy each) with its
    statistics and ``index.json``; returns the index."""
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = [_Entry(name, "", array, captured.producers.get(name, -1), captured.engines.get(name, captured.engine))
               for name, array in captured.values.items()]
    graphs = {"": model.graph}
    for body in captured.bodies:
        graphs[body.scope] = body.graph
        entries += [_Entry(name, body.scope, array, body.producers.get(name, -1), ENGINE_REFERENCE)
                    for name, array in body.values.items()]
    arrays = {value_key(e.scope, e.name): e.array for e in entries}
    progress(0.6, f"Saving {len(arrays)} values and their statistics")
    writer = _Writer(out_dir, pack_dir)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:  # disk writes and numpy both release the GIL: overlap them
        placed = pool.submit(writer.write_all, arrays)
        stats = summarize(arrays)
        t1 = time.perf_counter()
        locations = placed.result()
    ranks = {scope: _ranks(graph) for scope, graph in graphs.items()}
    values: dict[str, Any] = {}
    for (key, array), location, e in zip(arrays.items(), locations, entries, strict=True):
        nodes = graphs[e.scope].node
        values[key] = {
            **location, "name": e.name, "scope": e.scope, "numpy_dtype": _dtype_text(array.dtype),
            "shape": list(array.shape), "node": e.node, "order": ranks[e.scope].get(e.node, -1),
            "node_name": nodes[e.node].name if e.node >= 0 else "",
            "op_type": nodes[e.node].op_type if e.node >= 0 else "",
            "engine": e.engine, "stats": stats_to_json(stats[key]),
        }
    index = {
        "format": FORMAT, "engine": captured.engine, "notes": captured.notes,
        "scopes": {body.scope: body.description for body in captured.bodies},
        "outputs": captured.outputs, "inputs": [n for n, e in captured.engines.items() if e == "input"],
        "timings": {**captured.timings, "stats_s": t1 - t0, "save_s": time.perf_counter() - t0},
        "node_times_us": {str(k): v for k, v in captured.node_times_us.items()},
        "pack": str(writer.pack_path) if writer.pack_path is not None else None,
        "values": values,
    }
    (out_dir / INDEX_FILE).write_text(_index_text(index), encoding="utf-8")
    return index


_VALUES_OPEN = ',"values":{'


def _index_text(index: dict[str, Any]) -> str:
    """index.json as ordinary JSON laid out one value per line, so :func:`_read_index` can parse it
    piece by piece: one json.loads of a 100k-value index holds the GIL (and the window) for a second."""
    head = {k: v for k, v in index.items() if k != "values"}
    values = index["values"]
    lines = [json.dumps(head, separators=(",", ":"))[:-1] + _VALUES_OPEN]
    last = len(values) - 1
    lines += [f"{json.dumps(key)}:{json.dumps(value, separators=(',', ':'))}{',' if k < last else ''}"
              for k, (key, value) in enumerate(values.items())]
    lines.append("}}")
    return "\n".join(lines)


def _read_index(path: Path) -> dict[str, Any]:
    """The index, a line at a time when laid out by :func:`_index_text` (else in one piece): no
    single call that holds the GIL for long, not even reading or splitting the whole file."""
    with open(path, encoding="utf-8") as f:
        first = f.readline().rstrip("\n")
        if not first.endswith(_VALUES_OPEN):
            return json.loads(first + f.read())
        index = json.loads(first[: -len(_VALUES_OPEN)] + "}")
        values = {}
        for n, line in enumerate(f):
            line = line.rstrip("\n")
            if line == "}}":
                break
            if n % 256 == 255:
                time.sleep(0)  # let a waiting GUI thread in: the interpreter's own switching was seen to starve it
            key, value = json.loads("{" + line.rstrip(",") + "}").popitem()
            values[key] = value
        else:
            raise ValueError(f"{path.name} ends early")
    index["values"] = values
    return index


@dataclass
class _Entry:
    name: str
    scope: str
    array: np.ndarray
    node: int
    engine: str


def _ranks(graph: onnx.GraphProto) -> dict[int, int]:
    """Node position -> position in topological order."""
    producer = {name: i for i, n in enumerate(graph.node) for name in n.output if name}
    order, _ = topological_order(graph.node, producer)
    return {node: k for k, node in enumerate(order)}


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
    pack_path: Path | None = None
    scopes: dict[str, str] = field(default_factory=dict)  # body scope -> which run of it is shown

    def __post_init__(self) -> None:
        self._measures: dict[str, dict[tuple[str, int], float]] = {}
        folders = [self.directory]
        if self.pack_path is not None and self.pack_path.parent != self.directory:
            folders.append(self.pack_path.parent)
        # an owned folder goes when the result does (or at exit), even if nobody calls cleanup()
        self._finalizer = weakref.finalize(self, _remove_folders, folders) if self.owns_directory else None

    @classmethod
    def load(cls, directory: str | Path, owns_directory: bool = False) -> RunResult:
        d = Path(directory)
        try:
            with building():
                index = _read_index(d / INDEX_FILE)
                values = {key: ValueRecord(name=v.get("name", key), file=v["file"], numpy_dtype=v["numpy_dtype"],
                                           shape=tuple(v["shape"]), node=v["node"], order=v["order"],
                                           node_name=v["node_name"], op_type=v["op_type"], engine=v["engine"],
                                           summary=v["stats"], offset=v.get("offset", -1),
                                           scope=v.get("scope", ""))
                          for key, v in index["values"].items()}
            pack = index.get("pack")
            return cls(d, index["engine"], index["notes"], index["outputs"], index["inputs"], index["timings"],
                       {int(k): float(v) for k, v in index["node_times_us"].items()}, values, owns_directory,
                       Path(pack) if pack else None, dict(index.get("scopes", {})))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RunError(f"{d} does not hold a readable run ({INDEX_FILE} is missing or damaged).",
                           str(exc)) from exc

    def array(self, name: str) -> np.ndarray:
        """The value (``name`` is its key: see :func:`value_key`), memory-mapped from disk (read-only)."""
        record = self.values[name]
        path = self.pack_path if record.offset >= 0 and self.pack_path else self.directory / record.file
        try:
            if record.offset >= 0:
                dtype = _numpy_dtype(record.numpy_dtype)
                if math.prod(record.shape) == 0:
                    return np.zeros(record.shape, dtype)
                return np.memmap(path, dtype, mode="r", offset=record.offset, shape=record.shape)
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, TypeError) as exc:
            raise RunError(f"the stored value '{name}' could not be read: {exc}.", str(exc)) from exc
        if array.dtype.kind == "V" and record.numpy_dtype != str(array.dtype):
            array = array.view(_numpy_dtype(record.numpy_dtype))
        return array

    def outputs_of(self, node: int) -> list[ValueRecord]:
        return [r for r in self.values.values() if r.node == node and node >= 0 and not r.scope]

    def record(self, scope: str, name: str) -> ValueRecord | None:
        return self.values.get(value_key(scope, name))

    def first_nonfinite(self) -> ValueRecord | None:
        """The value with NaN or Inf produced first in topological order."""
        return self._first_nonfinite

    @cached_property
    def _first_nonfinite(self) -> ValueRecord | None:
        bad = [r for r in self.values.values() if r.nonfinite and r.node >= 0 and not r.scope]
        return min(bad, key=lambda r: r.order) if bad else None

    def measure(self, key: str) -> dict[tuple[str, int], float]:
        """Per-node figure for the overlay (see :data:`MEASURES`), keyed (scope, node position);
        worked out once per key (a result does not change), so a background thread can prepare it."""
        cached = self._measures.get(key)
        if cached is None:
            cached = self._measures[key] = self._measure(key)
        return cached

    def _measure(self, key: str) -> dict[tuple[str, int], float]:
        if key == "time_us":
            return {("", node): t for node, t in self.node_times_us.items()}
        pick: Callable[[ValueRecord], float | None] = {
            "max_abs": lambda r: r.abs_max,
            "mean": lambda r: r.summary["mean"],
            "std": lambda r: r.summary["std"],
            "nonfinite": lambda r: 1.0 if r.nonfinite else 0.0,
        }[key]
        out: dict[tuple[str, int], float] = {}
        for r in self.values.values():
            v = pick(r)
            if r.node < 0 or v is None:
                continue
            at = (r.scope, r.node)
            if at in out and key in ("max_abs", "nonfinite"):
                out[at] = max(out[at], v)
            else:
                out.setdefault(at, v)  # mean and std describe a node's first output
        return out

    def cleanup(self) -> None:
        """Delete the folder (and the shared-memory values) if this result created them."""
        if self._finalizer is not None:
            self._finalizer()


def _remove_folders(folders: list[Path]) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
