"""``onnxviz.compare`` and ``onnxviz.diff``: the commands' results as plain, typed dataclasses.

Each function runs its command's own code (:mod:`.commands`) and reads the typed fields from the object the
command's ``--json`` prints: ``to_dict()`` is that object, so a field a newer onnxviz adds to the JSON is in
``to_dict()`` (and in each record's ``extra``) before a typed field names it. A measure that is not a finite
number (the infinite SQNR of identical values, a NaN) is None, as in the JSON.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np

from onnxviz.api.commands import run_command
from onnxviz.api.models import ModelLike, as_path, open_document
from onnxviz.model.errors import OnnxvizError

if TYPE_CHECKING:
    import pandas

    from onnxviz.model.document import Document

R = TypeVar("R", bound="_Record")


@dataclass(frozen=True)
class _Record:
    """A JSON object's typed fields; the keys no field names are kept in ``extra``."""

    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        names = {f.name for f in fields(cls)} - {"extra"}
        return cls(**{k: v for k, v in data.items() if k in names},
                   extra={k: v for k, v in data.items() if k not in names})


@dataclass(frozen=True)
class PairMeasure(_Record):
    """Value ``a`` of model A against value ``b`` of model B (``how`` they were paired: by name, through a
    DequantizeLinear, past a fused node...): max |B - A|, max |B - A| / max |A|, cosine similarity, SQNR in dB,
    the elements outside the elementwise tolerance, and ``beyond``: why the pair is beyond tolerance (empty
    when it is within)."""

    a: str = ""
    b: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    cosine: float | None = None
    sqnr_db: float | None = None
    outside: int = 0
    how: str = ""
    beyond: list[str] = field(default_factory=list)
    note: str = ""
    added: dict[str, float | None] | None = None  # the error B's layer adds on its own (max_abs, ..., sqnr_db)
    added_note: str = ""                           # why there is none


@dataclass(frozen=True)
class Unmatched(_Record):
    """A value of one model left without a partner in the other, and why."""

    name: str = ""
    reason: str = ""


@dataclass(frozen=True)
class WeightMeasure(_Record):
    """A float weight against its quantized partner, through the partner's DequantizeLinear."""

    a: str = ""
    b: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    cosine: float | None = None
    sqnr_db: float | None = None
    quantized_a: bool = False
    quantized_b: bool = False
    scope_a: str = ""
    scope_b: str = ""
    note: str = ""


@dataclass(frozen=True)
class DiffEntry:
    """One structural difference: its ``kind`` (``node_changed``, ``weight_added``, ...; see docs/python-api.md), what
    it is called in A and in B (None on the side that lacks it), the graphs and node positions, and ``details``
    (what changed: attributes, dtype, the weights' errors...)."""

    kind: str
    a: str | None = None
    b: str | None = None
    scope_a: str = ""
    scope_b: str = ""
    node_a: int | None = None
    node_b: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DiffEntry:
        named = ("kind", "a", "b", "scope_a", "scope_b", "node_a", "node_b")
        return cls(**{k: data[k] for k in named if k in data},
                   details={k: v for k, v in data.items() if k not in named})


@dataclass(frozen=True)
class Alignment(_Record):
    """How many nodes the matcher paired, of how many in A and in B."""

    pairs: int = 0
    nodes_a: int = 0
    nodes_b: int = 0
    fraction: float = 0.0


class _Result:
    """``to_dict()`` and ``to_pandas()`` over the command's JSON object."""

    _json: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The object ``onnxviz COMMAND ... --json`` prints for the same models (a copy)."""
        return copy.deepcopy(self._json)

    def _frame(self, key: str) -> pandas.DataFrame:
        try:
            import pandas
        except ImportError:
            raise OnnxvizError("to_pandas() needs pandas (pip install pandas).") from None
        return pandas.DataFrame(self.to_dict()[key])


@dataclass(frozen=True)
class CompareResult(_Result):
    """``onnxviz.compare``'s result: every value pair's measures (worst first, as the command lists them),
    the values left unmatched on each side, and quantized weights against their float partners."""

    a: str
    b: str
    engine_a: str
    engine_b: str
    aligned_fraction: float  # of A's values, paired
    pairs: list[PairMeasure]
    beyond_tolerance: int
    unmatched_a: list[Unmatched]
    unmatched_b: list[Unmatched]
    weights: list[WeightMeasure]
    notes: list[str] = field(default_factory=list)
    _json: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def within_tolerance(self) -> bool:
        """Every pair within tolerance (the command's exit code 0)."""
        return self.beyond_tolerance == 0

    def to_pandas(self, table: Literal["pairs", "weights"] = "pairs") -> pandas.DataFrame:
        """The pairs (or the quantized weights) as a DataFrame, a row per pair and a column per JSON key."""
        return self._frame(table)

    @classmethod
    def from_json(cls, data: dict[str, Any], notes: list[str]) -> CompareResult:
        return cls(data.get("a", ""), data.get("b", ""), data.get("engine_a", ""), data.get("engine_b", ""),
                   data.get("aligned_fraction", 0.0), [PairMeasure.from_json(p) for p in data.get("pairs", [])],
                   data.get("beyond_tolerance", 0), [Unmatched.from_json(u) for u in data.get("unmatched_a", [])],
                   [Unmatched.from_json(u) for u in data.get("unmatched_b", [])],
                   [WeightMeasure.from_json(w) for w in data.get("weights", [])], notes, data)


@dataclass(frozen=True)
class DiffResult(_Result):
    """``onnxviz.diff``'s result: every structural difference, how many of each kind, how the nodes aligned,
    and quantized weights against their float partners."""

    a: str
    b: str
    identical: bool
    counts: dict[str, int]
    alignment: Alignment
    differences: list[DiffEntry]
    weights: list[WeightMeasure]
    _json: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_pandas(self, table: Literal["differences", "weights"] = "differences") -> pandas.DataFrame:
        """The differences (or the quantized weights) as a DataFrame, a row each and a column per JSON key."""
        return self._frame(table)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DiffResult:
        return cls(data.get("a", ""), data.get("b", ""), bool(data.get("identical")), dict(data.get("counts", {})),
                   Alignment.from_json(data.get("alignment", {})),
                   [DiffEntry.from_json(d) for d in data.get("differences", [])],
                   [WeightMeasure.from_json(w) for w in data.get("weights", [])], data)


Inputs = Mapping[str, Any] | str | os.PathLike[str] | None


def _model_argument(x: ModelLike) -> str | Document:
    path = as_path(x)
    return str(path) if path is not None else open_document(x)


def compare(a: ModelLike, b: ModelLike, inputs: Inputs = None, *, tolerance: Mapping[str, float] | None = None,
            dims: Mapping[str, int] | None = None, seed: int = 0, sort: str = "sqnr",
            optimized: bool = False) -> CompareResult:
    """Run ``a`` and ``b`` on the same inputs (each in a worker process) and measure every value pair the
    matcher finds, as ``onnxviz compare A B --json`` does.

    ``inputs``: arrays by A's input name (B reads each through the input aligned with it), or an .npz's path;
    inputs not given are generated with ``seed`` (``dims`` sizes their symbolic dimensions). ``tolerance``:
    limits such as ``{"sqnr_db": 20, "cosine": 0.99}`` or ``{"rtol": 1e-2, "atol": 1e-4}`` (default: an element
    outside rtol 1e-3, atol 1e-5). ``sort``: the pairs' order, worst first (``sqnr``, ``cosine``, ``max_abs``,
    ``max_rel``); ``optimized``: compare the graphs onnxruntime's optimized sessions run (models as files).
    Raises :class:`~onnxviz.OnnxvizError` in one sentence when a model cannot be read or run, or nothing pairs."""
    options = [f"--seed={int(seed)}", f"--sort={sort}"] + (["--optimized"] if optimized else [])
    options += [f"--tolerance={k}={float(v)!r}" for k, v in (tolerance or {}).items()]
    options += [f"--dim={k}={int(v)}" for k, v in (dims or {}).items()]
    objects: dict[str, Any] = {"a": _model_argument(a), "b": _model_argument(b)}
    path = as_path(inputs)
    if path is not None:
        options.append(f"--inputs={path}")
    elif inputs is not None:
        objects["inputs"] = {name: np.asarray(array) for name, array in inputs.items()}  # type: ignore[union-attr]
    out = run_command("compare", 2, options, objects)
    return CompareResult.from_json(out.value, out.notes)


def diff(a: ModelLike, b: ModelLike) -> DiffResult:
    """Every structural difference between ``a`` and ``b`` (nodes aligned by what they compute), as
    ``onnxviz diff A B --json`` lists them. Raises :class:`~onnxviz.OnnxvizError` when a model cannot be read."""
    out = run_command("diff", 2, [], {"a": _model_argument(a), "b": _model_argument(b)})
    return DiffResult.from_json(out.value)
