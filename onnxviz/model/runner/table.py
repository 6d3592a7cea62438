"""The captured values' facts as a table: one row per value, a column per fact.

The worker writes it, the window reads it. A 123k-value run was a 123k-line JSON index
(written in ~2 s, read in ~3 s, a parse per line); as columns it is a few numpy arrays
(``columns.npz``) and, for the texts, the distinct strings of each column in JSON lines
of a few thousand (``run.json``, after the run's own facts on the first line), with the
rows' codes among the arrays. A reader parses one line at a time, so no single call
holds the GIL for long while the window waits for it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from onnxviz.model.graph.tensors import TensorStats
from onnxviz.model.io.disk import Batch, write_npz

RUN_FILE = "run.json"
COLUMNS_FILE = "columns.npz"
TEXT_COLUMNS = ("name", "scope", "file", "numpy_dtype", "node_name", "op_type", "engine", "dtype", "storage")
_ROW_INTS = ("node", "order", "offset")                    # from the Row
_STATS_INTS = ("numel", "nbytes", "nan_count", "inf_count")  # from its TensorStats
_FLOAT_STATS = ("minimum", "maximum", "mean", "std", "zero_fraction")  # NaN where the statistic is None
_LINE_ITEMS = 4096  # strings per JSON line of run.json


@dataclass
class Row:
    """What the worker knows of one value when it writes the table."""

    texts: dict[str, str]  # every TEXT_COLUMNS entry
    node: int
    order: int
    offset: int
    stats: TensorStats


@dataclass
class ValueTable:
    """Rows of values: ``strings[column][codes[column][row]]`` is a text, ``numbers[column][row]`` a figure."""

    strings: dict[str, list[str]]
    codes: dict[str, np.ndarray]
    numbers: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.numbers["node"])

    def text(self, column: str, row: int) -> str:
        return self.strings[column][int(self.codes[column][row])]

    def texts(self, column: str) -> list[str]:
        """The whole column, row by row."""
        strings = self.strings[column]
        return [strings[code] for code in self.codes[column].tolist()]

    def nonfinite(self) -> np.ndarray:
        """Per row: whether the value holds a NaN or an Inf."""
        return self.numbers["nan_count"] + self.numbers["inf_count"] > 0

    def shape(self, row: int) -> tuple[int, ...]:
        start = int(self.numbers["dims_start"][row])
        return tuple(self.numbers["dims"][start:start + int(self.numbers["rank"][row])].tolist())

    def stats(self, row: int) -> TensorStats:
        n = self.numbers
        floats = {name: None if np.isnan(n[name][row]) else float(n[name][row]) for name in _FLOAT_STATS}
        bins = int(n["hist_bins"][row])
        counts = n["hist_counts"][row, :bins].copy() if bins else np.zeros(0, np.int64)
        edges = np.linspace(n["hist_range"][row, 0], n["hist_range"][row, 1], bins + 1) if bins else np.zeros(0)
        return TensorStats(self.text("name", row), self.text("dtype", row), self.shape(row), int(n["numel"][row]),
                           int(n["nbytes"][row]), self.text("storage", row), bool(n["numeric"][row]),
                           nan_count=int(n["nan_count"][row]), inf_count=int(n["inf_count"][row]),
                           hist_counts=counts, hist_edges=edges, **floats)


def build_table(rows: Sequence[Row]) -> ValueTable:
    strings: dict[str, list[str]] = {}
    codes: dict[str, np.ndarray] = {}
    for column in TEXT_COLUMNS:
        strings[column], codes[column] = _encoded(row.texts[column] for row in rows)
    numbers = {name: np.array([getattr(r, name) for r in rows], np.int64) for name in _ROW_INTS}
    for name in _STATS_INTS:
        numbers[name] = np.array([getattr(r.stats, name) for r in rows], np.int64)
    for name in _FLOAT_STATS:
        numbers[name] = np.array([np.nan if (v := getattr(r.stats, name)) is None else v for r in rows], np.float64)
    numbers["numeric"] = np.array([r.stats.numeric for r in rows], np.bool_)
    ranks = np.array([len(r.stats.shape) for r in rows], np.int64)
    numbers["rank"] = ranks
    numbers["dims_start"] = np.cumsum(ranks) - ranks
    numbers["dims"] = np.array([d for r in rows for d in r.stats.shape], np.int64)
    numbers.update(_histograms(rows))
    return ValueTable(strings, codes, numbers)


def _encoded(items: Iterable[str]) -> tuple[list[str], np.ndarray]:
    distinct: dict[str, int] = {}
    codes = np.array([distinct.setdefault(s, len(distinct)) for s in items], np.int32)
    return list(distinct), codes


def _histograms(rows: Sequence[Row]) -> dict[str, np.ndarray]:
    bins = np.array([len(r.stats.hist_counts) for r in rows], np.int64)
    width = int(bins.max()) if len(bins) else 0
    counts = np.zeros((len(rows), width), np.int64)
    ranges = np.zeros((len(rows), 2), np.float64)
    for k, r in enumerate(rows):
        if bins[k]:
            counts[k, :bins[k]] = r.stats.hist_counts
            ranges[k] = r.stats.hist_edges[0], r.stats.hist_edges[-1]
    return {"hist_bins": bins, "hist_counts": counts, "hist_range": ranges}


def write_table(folder: Path, head: dict[str, Any], table: ValueTable, batch: Batch) -> None:
    """The table's files in ``folder``, part of ``batch`` (written with the values, or not at all)."""
    arrays: dict[str, Any] = {**{f"code_{c}": a for c, a in table.codes.items()}, **table.numbers}
    batch.write_with(folder / COLUMNS_FILE, lambda f: write_npz(f, arrays))
    lines = [json.dumps(head, separators=(",", ":"))]
    for column, strings in table.strings.items():
        lines += [json.dumps([column, strings[k:k + _LINE_ITEMS]], separators=(",", ":"))
                  for k in range(0, len(strings), _LINE_ITEMS)]
    batch.write(folder / RUN_FILE, "\n".join(lines).encode("utf-8"))


def read_table(folder: Path) -> tuple[dict[str, Any], ValueTable]:
    """The run's facts and its table; raises OSError, ValueError, KeyError or TypeError when damaged."""
    strings: dict[str, list[str]] = {c: [] for c in TEXT_COLUMNS}
    with open(folder / RUN_FILE, encoding="utf-8") as f:
        head = json.loads(f.readline())
        for line in f:
            column, items = json.loads(line)
            strings[column].extend(items)
            time.sleep(0)  # let a waiting GUI thread in between lines
    with np.load(folder / COLUMNS_FILE, allow_pickle=False) as saved:
        arrays = {k: saved[k] for k in saved.files}
    codes = {c: arrays.pop(f"code_{c}") for c in TEXT_COLUMNS}
    table = ValueTable(strings, codes, arrays)
    rows = len(table)
    if any(len(a) != rows for a in (*codes.values(), *(arrays[c] for c in _ROW_INTS + _STATS_INTS))) or \
            any(len(a) and int(a.max()) >= len(strings[c]) for c, a in codes.items()):
        raise ValueError(f"{COLUMNS_FILE} does not match {RUN_FILE}")
    return head, table
