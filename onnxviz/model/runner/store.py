"""Captured values on disk, read back memory-mapped.

The worker writes the values (packed into one file: in shared memory, or in the folder of a ``--dump``) as
they are summarized, and their facts and statistics as a table (:mod:`onnxviz.model.runner.table`); the
window only ever holds the statistics and maps an array from disk when a view asks for it. A dump folder
also gets ``index.json``, the same facts for people and scripts: each value's place in ``values.bin``
(offset, numpy dtype, shape). Strings, and values numpy cannot pack, are a .npy file each.
"""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
import time
import weakref
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.index import topological_order
from onnxviz.model.graph.tensors import TensorStats
from onnxviz.model.io.disk import Batch, CheckedFile, DiskError, write_npy
from onnxviz.model.process_tuning import building
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner.capture import Captured
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.inputs import savable
from onnxviz.model.runner.protocol import ENGINE_REFERENCE
from onnxviz.model.runner.stats import summarize
from onnxviz.model.runner.structured import describe
from onnxviz.model.runner.table import (
    COLUMNS_FILE,
    RUN_FILE,
    TEXT_COLUMNS,
    Row,
    ValueTable,
    build_table,
    read_table,
    write_table,
)

INDEX_FILE = "index.json"
PACK_FILE = "values.bin"
ALIGN = 64
FORMAT = "onnxviz-run/2"

MEASURES: dict[str, str] = {
    "max_abs": "max |x|",
    "mean": "mean",
    "std": "std",
    "nonfinite": "NaN/Inf present",
    "time_us": "run time",
}
"""Per-node measures the canvas overlay can show: key -> label."""

MEASURE_KINDS: dict[str, str] = {"mean": "signed", "nonfinite": "flag", "time_us": "duration"}
"""How a measure is read, when not as a plain level: "signed" (its zero matters), "flag" (1 yes, 0 no)
or "duration" (microseconds, which add up)."""

FLAG_STATES: dict[str, tuple[str, str]] = {"nonfinite": ("no NaN/Inf", "has NaN/Inf")}
"""A flag measure's two states as the legend names them: (0, 1)."""


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
    stats: TensorStats
    offset: int = -1         # position in the packed file; -1 for a .npy of its own
    scope: str = ""          # the graph it belongs to (index.py's scope strings); "" for the main graph

    @property
    def key(self) -> str:
        """Its key in :attr:`RunResult.values` (the name itself in the main graph)."""
        return value_key(self.scope, self.name)

    @property
    def nonfinite(self) -> bool:
        return self.stats.nan_count > 0 or self.stats.inf_count > 0


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


def _file_name(k: int, name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60].strip("._") or "value"
    return f"{k:05d}_{safe}.npy"


class _Writer:
    """Values into one packed file (far faster than 100k small files) in ``pack_dir``, or one .npy
    each in ``out_dir`` (``--dump``, or strings); every file part of ``batch``."""

    FLUSH_BYTES = 8 << 20  # small values are gathered and written in big pieces

    def __init__(self, out_dir: Path, pack_dir: Path | None, batch: Batch) -> None:
        self.out_dir = out_dir
        self.batch = batch
        self.pack_path = pack_dir / PACK_FILE if pack_dir is not None else None
        self.pack = batch.open(self.pack_path) if self.pack_path else None
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
        value = savable(array)
        self.batch.write_with(self.out_dir / file, lambda f: write_npy(f, value))
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
        placed = [self.write(k, name, array) for k, (name, array) in enumerate(values.items())]
        self._flush()
        return placed


def write_result(captured: Captured, model: onnx.ModelProto, out_dir: Path, pack_dir: Path | None = None,
                 progress: ProgressFn = no_progress, index: bool = False) -> None:
    """Save every value (packed into ``pack_dir`` when given, else one .npy each) and its facts and statistics
    as a table; with ``index`` (a --dump folder), also ``index.json`` describing them. A pack in ``out_dir``
    itself is named relative to it (the folder can be moved). All of them are written or, when one cannot be
    (a full disk), none (one sentence; ``out_dir`` is named when it is a --dump folder)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        with Batch(f"the values to {out_dir}" if index or pack_dir is None else "the run's values") as batch:
            _write_result(captured, model, out_dir, pack_dir, progress, batch, index)
    except DiskError as exc:
        raise OnnxvizError(f"{exc.message[:-1]}; none of them were kept.", exc.details) from exc


def _write_result(captured: Captured, model: onnx.ModelProto, out_dir: Path, pack_dir: Path | None,
                  progress: ProgressFn, batch: Batch, index: bool) -> None:
    entries = [_Entry(name, "", array, captured.producers.get(name, -1), captured.engines.get(name, captured.engine))
               for name, array in captured.values.items()]
    graphs = {"": model.graph}
    for body in captured.bodies:
        graphs[body.scope] = body.graph
        entries += [_Entry(name, body.scope, array, body.producers.get(name, -1), ENGINE_REFERENCE)
                    for name, array in body.values.items()]
    arrays = {value_key(e.scope, e.name): e.array for e in entries}
    progress(0.6, f"Saving {len(arrays)} values and their statistics")
    writer = _Writer(out_dir, pack_dir, batch)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:  # disk writes and numpy both release the GIL: overlap them
        placed = pool.submit(writer.write_all, arrays)
        stats = summarize(arrays)
        t1 = time.perf_counter()
        locations = placed.result()
    ranks = {scope: _ranks(graph) for scope, graph in graphs.items()}
    rows = [_row(e, graphs[e.scope].node, ranks[e.scope], location, stats[key])
            for (key, array), location, e in zip(arrays.items(), locations, entries, strict=True)]
    structured = _write_structured(captured, model.graph.node, out_dir, len(arrays), batch)
    timings = {**captured.timings, "stats_s": t1 - t0, "save_s": 0.0}
    head: dict[str, Any] = {
        "format": FORMAT, "engine": captured.engine, "notes": captured.notes,
        "scopes": {body.scope: body.description for body in captured.bodies},
        "outputs": captured.outputs, "inputs": [n for n, e in captured.engines.items() if e == "input"],
        "timings": timings,
        "node_times_us": {str(k): v for k, v in captured.node_times_us.items()},
        "pack": _pack_name(writer.pack_path, out_dir),
        "structured": structured,
        "optimized": captured.optimized, "dims": captured.dims, "generated": captured.generated,
    }
    if index or writer.pack_path is None:  # a --dump folder: described for people and scripts
        batch.write(out_dir / INDEX_FILE,
                    _index_text({**head, "values": {**_described(rows), **structured}}).encode("utf-8"))
    timings["save_s"] = time.perf_counter() - t0
    write_table(out_dir, head, build_table(rows), batch)


COPY_BYTES = 8 << 20  # a run's files are copied in pieces this big (a cancel is looked at between them)


def export_run(result: RunResult, folder: Path, progress: ProgressFn = no_progress,
               token: CancelToken | None = None) -> int:
    """Every value of the finished run ``result`` into ``folder`` as ``run --dump`` writes them (``values.bin``,
    ``index.json``, strings a .npy each, the run's table), copied from where the run keeps them; the number of
    values. All of the files are written, or none (a full disk: one sentence; a cancel: nothing left)."""
    head, table = read_table(result.directory)
    rows = [Row({c: table.text(c, r) for c in TEXT_COLUMNS}, int(table.numbers["node"][r]),
                int(table.numbers["order"][r]), int(table.numbers["offset"][r]), table.stats(r))
            for r in range(len(table))]
    head = {**head, "pack": PACK_FILE if result.pack_path is not None else None}
    sources = {PACK_FILE: result.pack_path} if result.pack_path is not None else {}
    sources.update((r.texts["file"], result.directory / r.texts["file"]) for r in rows if r.offset < 0)
    sources.update((e["file"], result.directory / e["file"]) for e in result.structured.values() if "file" in e)
    mine = {*sources, INDEX_FILE, RUN_FILE, COLUMNS_FILE}
    there = sorted(name for name in mine if (folder / name).exists())
    if there:  # never over files the user did not name
        raise OnnxvizError(f"{folder} already holds {', '.join(there[:3])}; choose an empty folder.")
    total = max(1, sum(path.stat().st_size for path in sources.values()))
    copied = [0]

    def copy(source: Path, out: CheckedFile) -> None:
        with open(source, "rb") as f:
            while piece := f.read(COPY_BYTES):
                if token is not None:
                    token.check()
                out.write(piece)
                copied[0] += len(piece)
                progress(0.95 * copied[0] / total, f"Writing {len(rows)} values to {folder.name}")

    folder.mkdir(parents=True, exist_ok=True)
    try:
        with Batch(f"the values to {folder}") as batch:
            for name, source in sources.items():
                batch.write_with(folder / name, functools.partial(copy, source), source.stat().st_size)
            batch.write(folder / INDEX_FILE,
                        _index_text({**head, "values": {**_described(rows), **result.structured}}).encode("utf-8"))
            write_table(folder, head, table, batch)
    except DiskError as exc:
        raise OnnxvizError(f"{exc.message[:-1]}; none of them were kept.", exc.details) from exc
    progress(1.0, f"Wrote {len(rows)} values to {folder.name}")
    return len(rows) + len(result.structured)


def _pack_name(pack: Path | None, out_dir: Path) -> str | None:
    if pack is None:
        return None
    return pack.name if pack.parent == out_dir else str(pack)


def _write_structured(captured: Captured, nodes: Any, out_dir: Path, first: int,
                      batch: Batch) -> dict[str, dict[str, Any]]:
    """Each sequence or map as a .json file; its index entry by key (numbered after the ``first`` arrays)."""
    entries = {}
    for k, (name, value) in enumerate(captured.structured.items(), start=first):
        file = _file_name(k, name)[: -len(".npy")] + ".json"
        batch.write(out_dir / file, json.dumps(value, ensure_ascii=False).encode("utf-8"))
        node = captured.producers.get(name, -1)
        entries[value_key("", name)] = {
            "name": name, "scope": "", "file": file, "kind": describe(value), "node": node,
            "node_name": nodes[node].name if node >= 0 else "", "op_type": nodes[node].op_type if node >= 0 else "",
            "engine": captured.engines.get(name, captured.engine)}
    return entries


def _row(e: _Entry, nodes: Any, ranks: dict[int, int], location: dict[str, Any], stats: TensorStats) -> Row:
    texts = {"name": e.name, "scope": e.scope, "file": location["file"], "numpy_dtype": _dtype_text(e.array.dtype),
             "node_name": nodes[e.node].name if e.node >= 0 else "", "op_type": nodes[e.node].op_type if e.node >= 0
             else "", "engine": e.engine, "dtype": stats.dtype, "storage": stats.storage}
    return Row(texts, e.node, ranks.get(e.node, -1), location.get("offset", -1), stats)


def _described(rows: list[Row]) -> dict[str, Any]:
    """index.json's entry of every value."""
    keep = ("name", "scope", "file", "numpy_dtype", "node_name", "op_type", "engine")
    return {value_key(r.texts["scope"], r.texts["name"]): {
        **{k: r.texts[k] for k in keep}, "shape": list(r.stats.shape), "node": r.node, "order": r.order,
        **({"offset": r.offset} if r.offset >= 0 else {}), "stats": stats_to_json(r.stats)} for r in rows}


def _index_text(index: dict[str, Any]) -> str:
    """index.json as ordinary JSON laid out one value per line (easy to read, grep and diff)."""
    head = {k: v for k, v in index.items() if k != "values"}
    values = index["values"]
    lines = [json.dumps(head, separators=(",", ":"))[:-1] + ',"values":{']
    last = len(values) - 1
    lines += [f"{json.dumps(key)}:{json.dumps(value, separators=(',', ':'))}{',' if k < last else ''}"
              for k, (key, value) in enumerate(values.items())]
    lines.append("}}")
    return "\n".join(lines)


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


class RunValues(Mapping[str, ValueRecord]):
    """A run's values by key (see :func:`value_key`) in the order they were produced; a record
    is made when asked for, so a 123k-value run does not build 123k of them to show one."""

    def __init__(self, table: ValueTable) -> None:
        self.table = table
        scopes, names = table.texts("scope"), table.texts("name")
        self.rows = {value_key(s, n): k for k, (s, n) in enumerate(zip(scopes, names, strict=True))}
        self._made: dict[int, ValueRecord] = {}

    def __getitem__(self, key: str) -> ValueRecord:
        return self.record(self.rows[key])

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def record(self, row: int) -> ValueRecord:
        made = self._made.get(row)
        if made is None:
            t, n = self.table, self.table.numbers
            made = self._made[row] = ValueRecord(
                t.text("name", row), t.text("file", row), t.text("numpy_dtype", row), t.shape(row), int(n["node"][row]),
                int(n["order"][row]), t.text("node_name", row), t.text("op_type", row), t.text("engine", row),
                t.stats(row), int(n["offset"][row]), t.text("scope", row))
        return made

    def in_main_graph(self) -> np.ndarray:
        """Per row: whether the value is in the main graph (not inside a body)."""
        scopes = self.table.strings["scope"]
        main = scopes.index("") if "" in scopes else -1
        return self.table.codes["scope"] == main


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
    values: RunValues
    owns_directory: bool = False
    pack_path: Path | None = None
    scopes: dict[str, str] = field(default_factory=dict)  # body scope -> which run of it is shown
    structured: dict[str, dict[str, Any]] = field(default_factory=dict)  # sequences and maps: key -> entry
    optimized: bool = False  # the values are an optimized onnxruntime session's
    dims: dict[str, int] = field(default_factory=dict)  # sizes onnxviz chose for the generated inputs' dimensions
    generated: list[str] = field(default_factory=list)  # the inputs onnxviz made (the others were given)

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
                head, table = read_table(d)
                values = RunValues(table)
            pack = head.get("pack")
            return cls(d, head["engine"], head["notes"], head["outputs"], head["inputs"], head["timings"],
                       {int(k): float(v) for k, v in head["node_times_us"].items()}, values, owns_directory,
                       d / pack if pack else None, dict(head.get("scopes", {})), dict(head.get("structured", {})),
                       bool(head.get("optimized", False)), {str(k): int(v) for k, v in head.get("dims", {}).items()},
                       [str(n) for n in head.get("generated", [])])
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise RunError(f"{d} does not hold a readable run ({RUN_FILE} or {COLUMNS_FILE} is missing or damaged).",
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

    def structured_value(self, key: str) -> Any:
        """A sequence or map (see :attr:`structured`) as JSON-ready Python, read from its file."""
        try:
            text = (self.directory / self.structured[key]["file"]).read_text(encoding="utf-8")
            return json.loads(text)
        except (OSError, ValueError, KeyError) as exc:
            raise RunError(f"the stored value '{key}' could not be read: {exc}.", str(exc)) from exc

    def outputs_of(self, node: int) -> list[ValueRecord]:
        if node < 0:
            return []
        rows = np.flatnonzero((self.values.table.numbers["node"] == node) & self.values.in_main_graph())
        return [self.values.record(int(row)) for row in rows]

    def record(self, scope: str, name: str) -> ValueRecord | None:
        return self.values.get(value_key(scope, name))

    def input_arrays(self) -> dict[str, np.ndarray]:
        """The tensors the run was fed, by input name (memory-mapped)."""
        return {name: self.array(name) for name in self.inputs if name in self.values}

    def inputs_text(self) -> str:
        """The inputs as run: ``input_ids int64 [1, 8] (generated), image float32 [1, 3, 32, 32]``."""
        made = set(self.generated)
        parts = []
        for name in self.inputs:
            record = self.values.get(name)
            what = f"{record.stats.dtype} [{', '.join(str(d) for d in record.shape)}]" if record is not None else \
                self.structured.get(name, {}).get("kind", "?")
            parts.append(f"{name} {what}" + (" (generated)" if name in made else ""))
        return ", ".join(parts)

    def what_ran(self) -> str:
        """``onnxruntime, graph optimizations off``: the engine and whether the values are an optimized
        session's."""
        if self.engine == ENGINE_REFERENCE:
            return "the reference evaluator (graph optimizations do not apply)"
        return f"{self.engine}, graph optimizations {'on' if self.optimized else 'off'}"

    def first_nonfinite(self) -> ValueRecord | None:
        """The value with NaN or Inf produced first in topological order."""
        return self._first_nonfinite

    @cached_property
    def _first_nonfinite(self) -> ValueRecord | None:
        t = self.values.table
        rows = np.flatnonzero(t.nonfinite() & (t.numbers["node"] >= 0) & self.values.in_main_graph())
        return self.values.record(int(rows[np.argmin(t.numbers["order"][rows])])) if len(rows) else None

    def nonfinite_after(self, order: int = -1, nan_only: bool = False) -> ValueRecord | None:
        """The first main-graph value with NaN (or Inf, unless ``nan_only``) whose node comes after
        topological position ``order`` (-1: the first of all)."""
        t = self.values.table
        bad = t.numbers["nan_count"] > 0 if nan_only else t.nonfinite()
        orders = t.numbers["order"]
        rows = np.flatnonzero(bad & (t.numbers["node"] >= 0) & self.values.in_main_graph() & (orders > order))
        return self.values.record(int(rows[np.argmin(orders[rows])])) if len(rows) else None

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
        t = self.values.table
        n = t.numbers
        figures = {
            "max_abs": lambda: np.maximum(np.abs(n["minimum"]), np.abs(n["maximum"])),
            "mean": lambda: n["mean"],
            "std": lambda: n["std"],
            "nonfinite": lambda: t.nonfinite().astype(np.float64),
        }[key]()
        rows = np.flatnonzero((n["node"] >= 0) & ~np.isnan(figures))
        scopes = t.strings["scope"]
        out: dict[tuple[str, int], float] = {}
        keep_max = key in ("max_abs", "nonfinite")
        for code, node, v in zip(t.codes["scope"][rows].tolist(), n["node"][rows].tolist(), figures[rows].tolist(),
                                 strict=True):
            at = (scopes[code], node)
            if at in out and keep_max:
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
