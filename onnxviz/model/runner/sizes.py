"""The sizes of generated inputs: what the user set, what the graph suggests, and sizes to try when the
first ones do not run.

* :func:`resolve_dims` reads ``--dim`` entries (and the Run dialog's): a dimension's name, a name used in
  another dimension's expression (``past + 1``), or an input and axis (``ids[1]``); one that matches nothing
  is an error;
* :func:`given_dims` are the sizes arrays given from files set (a dimension of the same name has one size);
* :func:`plan_sizes` gives the sizes a run tries first and a few candidates after them (:class:`SizePlan`):
  dimensions of the same name share a size, expressions (``past_sequence_length + 1``, ``s0 + s1``) and
  KV-cache relations (an attention mask as long as the past and the current tokens) are worked out, and the
  graph suggests sizes (:func:`graph_hints`: Reshape targets, Pad amounts, Conv kernels, Slice ends, Resize
  scales, value_info sizes, metadata).

The worker process (:mod:`.worker`) makes the inputs with the first sizes and, when onnxruntime refuses
them, tries the candidates in a plain session within a time budget (:func:`try_sizes`).
"""

from __future__ import annotations

import ast
import functools
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.inputs import (
    DEFAULT_DIM,
    SOURCES,
    InputSpec,
    check_size,
    conform,
    generate,
    unknown_input,
)
from onnxviz.model.text import display_name

LADDER = (2, 4, 8, 16, 32, 64, 128, 256, 512)  # sizes tried for the free dimensions when the first ones fail
MAX_CANDIDATES = 12
SEARCH_BUDGET_S = 20.0  # seconds the worker may spend trying sizes
TRIAL_BYTES = 256 << 20  # generated inputs of a candidate beyond this are not tried
MAX_HINTED = 1 << 16  # a suggested size beyond this is ignored (a buffer's length, not an input's)
_AXIS_NAME = re.compile(r"(.*)\[(\d+)\]")
_BATCH_NAME = re.compile(r"(^|_)(batch|bs|n|b)(_?size)?($|_)", re.IGNORECASE)
_PAST_NAME = re.compile(r"past|cache", re.IGNORECASE)
_MASK_NAME = re.compile(r"mask", re.IGNORECASE)
_FUNCTIONS: dict[str, Callable[..., float]] = {"floor": math.floor, "ceil": math.ceil, "max": max, "min": min,
                                               "floordiv": lambda a, b: a // b, "ceiltoint": math.ceil,
                                               "inttruediv": lambda a, b: a / b}


# -- dimensions and their names ---------------------------------------------------------------------
def expression_names(dim: str) -> list[str] | None:
    """The names an expression dimension (``past_sequence_length + 1``, ``s0 + s1``, ``2*s0``) is made of;
    None when ``dim`` is a plain name (or not an expression onnxviz can work out)."""
    tree = _parse(dim)
    if tree is None or isinstance(tree, ast.Name):
        return None
    return list(dict.fromkeys(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                              and n.id.lower() not in _FUNCTIONS))


def _parse(dim: str) -> ast.expr | None:
    try:
        tree = ast.parse(dim.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        allowed = (ast.BinOp, ast.UnaryOp, ast.Name, ast.Constant, ast.Call, ast.Load, ast.Add, ast.Sub, ast.Mult,
                   ast.FloorDiv, ast.Div, ast.Mod, ast.USub, ast.UAdd)
        if not isinstance(node, allowed) or (isinstance(node, ast.Constant) and type(node.value) is not int):
            return None
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id.lower() in _FUNCTIONS
                                               and not node.keywords):
            return None
    return tree


def evaluate(dim: str, sizes: Mapping[str, int]) -> int | None:
    """An expression dimension's size from the sizes of its names (None when one is missing, or it is not
    a whole number of 0 or more)."""
    tree = _parse(dim)
    if tree is None:
        return None
    try:
        value = _value(tree, sizes)
    except (KeyError, ZeroDivisionError, OverflowError, ValueError, TypeError, RecursionError):
        return None
    if value != int(value) or not 0 <= value < 1 << 31:
        return None
    return int(value)


def _value(node: ast.expr, sizes: Mapping[str, int]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)  # type: ignore[arg-type] # _parse lets only ints through
    if isinstance(node, ast.Name):
        return float(sizes[node.id])
    if isinstance(node, ast.UnaryOp):
        x = _value(node.operand, sizes)
        return -x if isinstance(node.op, ast.USub) else x
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return float(_FUNCTIONS[node.func.id.lower()](*(_value(a, sizes) for a in node.args)))
    assert isinstance(node, ast.BinOp)
    a, b = _value(node.left, sizes), _value(node.right, sizes)
    ops: dict[type, Callable[[float, float], float]] = {
        ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
        ast.FloorDiv: lambda x, y: x // y, ast.Div: lambda x, y: x / y, ast.Mod: lambda x, y: x % y}
    return ops[type(node.op)](a, b)


def symbols(specs: Iterable[InputSpec]) -> list[str]:
    """Every dimension name of the inputs (expressions included), in first-seen order."""
    return list(dict.fromkeys(d for s in specs for d in s.symbols))


def settable(specs: Iterable[InputSpec]) -> list[str]:
    """The names a size can be given for: plain dimension names and the names expressions are made of."""
    out: dict[str, None] = {}
    for d in symbols(specs):
        names = expression_names(d)
        for name in [d] if names is None else names:
            out.setdefault(name)
    return list(out)


def resolve_dims(specs: list[InputSpec], items: Mapping[str, int]) -> dict[str, int]:
    """``items`` (``--dim`` entries: a dimension's name, or ``INPUT[AXIS]``) as sizes by dimension name;
    RunError for an entry that matches no dimension of the model's inputs."""
    names = settable(specs)
    known = set(names)
    by_name = {s.name: s for s in specs}
    out: dict[str, int] = {}
    for key, size in items.items():
        if key in known:
            out[key] = size
            continue
        m = _AXIS_NAME.fullmatch(key)
        if m is None:
            listed = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
            have = f"its dimensions are: {listed}" if names else "its inputs have no dimension without a fixed size"
            raise RunError(f"--dim {display_name(key, 60)}: no input of the model has a dimension named "
                           f"'{display_name(key, 60)}'; {have} (or give INPUT[AXIS]=SIZE).")
        out.update(_axis_dim(by_name, m.group(1), int(m.group(2)), size, key))
    return out


def _axis_dim(by_name: Mapping[str, InputSpec], name: str, axis: int, size: int, key: str) -> dict[str, int]:
    spec = by_name.get(name)
    if spec is None:
        known = ", ".join(sorted(by_name)) or "none"
        raise RunError(f"--dim {display_name(key, 60)}: the model has no input named '{display_name(name, 60)}'; "
                       f"its inputs are: {known}.")
    if spec.shape is None or axis >= len(spec.shape):
        rank = "of unknown rank" if spec.shape is None else f"has {len(spec.shape)} dimensions"
        raise RunError(f"--dim {display_name(key, 60)}: input '{display_name(name, 60)}' {rank}, so it has no "
                       f"axis {axis}.")
    declared = spec.shape[axis]
    if isinstance(declared, int):
        raise RunError(f"--dim {display_name(key, 60)}: axis {axis} of input '{display_name(name, 60)}' is "
                       f"declared {declared}, a fixed size.")
    if declared is None:
        return {}
    parts = expression_names(declared)
    if parts is not None:
        raise RunError(f"--dim {display_name(key, 60)}: axis {axis} of input '{display_name(name, 60)}' is "
                       f"'{display_name(declared, 60)}'; set {', '.join(parts)} instead.")
    return {declared: size}


def given_dims(specs: list[InputSpec], given: Mapping[str, Any]) -> dict[str, int]:
    """The sizes arrays given for inputs set on their named dimensions (the first array that names one)."""
    out: dict[str, int] = {}
    for spec in specs:
        array = given.get(spec.name)
        shape = getattr(array, "shape", None)
        if shape is None or spec.shape is None or len(shape) != len(spec.shape):
            continue
        for d, size in zip(spec.shape, shape, strict=True):
            if isinstance(d, str) and expression_names(d) is None:
                out.setdefault(d, int(size))
    return out


def conflicts(set_dims: Mapping[str, int], given: Mapping[str, int]) -> str:
    """'' or the sentence saying a size set by ``--dim`` differs from the one a given array has."""
    for name, size in set_dims.items():
        if name in given and given[name] != size:
            return (f"--dim {display_name(name, 60)}={size}, but an input given from a file has "
                    f"{display_name(name, 60)}={given[name]}.")
    return ""


# -- what the graph suggests ----------------------------------------------------------------------
@dataclass(frozen=True)
class Hint:
    """A size the graph suggests for dimension ``dim``: exactly ``size`` or, ``at_least``, no less."""

    dim: str
    size: int
    why: str
    at_least: bool = False

    def text(self) -> str:
        return f"{self.dim}{'>=' if self.at_least else '='}{self.size} ({self.why})"


@dataclass
class SizePlan:
    """The sizes generated inputs get first (every dimension name of theirs), why, and the candidates tried
    (in this order) when onnxruntime refuses the first ones."""

    first: dict[str, int]
    fixed: dict[str, int] = field(default_factory=dict)   # set by the user or by given arrays: never changed
    hints: list[Hint] = field(default_factory=list)
    candidates: list[dict[str, int]] = field(default_factory=list)
    related: dict[str, str] = field(default_factory=dict)  # dimension -> how it follows from others

    def free(self) -> list[str]:
        """The dimensions onnxviz chose (not fixed, not following from others)."""
        return [d for d in self.first if d not in self.fixed and d not in self.related]

    def chosen_text(self, sizes: Mapping[str, int]) -> str:
        """``sequence=50, past=1`` for the dimensions onnxviz chose (fixed ones left out)."""
        return ", ".join(f"{d}={sizes[d]}" for d in sizes if d not in self.fixed)


def plan_sizes(model: onnx.ModelProto, specs: list[InputSpec], fixed: Mapping[str, int],
               hints: bool = True, preferred: Mapping[str, int] | None = None) -> SizePlan:
    """The sizes to try for the generated inputs ``specs`` (``fixed``: sizes the user or given arrays set;
    ``preferred``: sizes to try first for the others, such as those that ran last time)."""
    names = settable(specs)
    fixed = {k: v for k, v in fixed.items() if k in names or k in symbols(specs)}
    related = _relations(specs)
    found = graph_hints(model, specs, fixed) if hints else []
    batch = _batch_like(specs)
    first = dict(fixed)
    for name in names:
        if name in first or name in related:
            continue
        exact = [h.size for h in found if h.dim == name and not h.at_least]
        least = [h.size for h in found if h.dim == name and h.at_least]
        first[name] = (preferred or {}).get(name, exact[0] if exact else max(least, default=DEFAULT_DIM))
    plan = SizePlan(_with_related(first, related, specs), dict(fixed), found, [], {k: v[1] for k, v in related.items()})
    plan.candidates = _candidates(plan, names, related, batch, specs)
    return plan


def _relations(specs: list[InputSpec]) -> dict[str, tuple[Callable[[Mapping[str, int]], int | None], str]]:
    """Dimensions that follow from others: expressions, and a KV cache's total length (past + current)."""
    out: dict[str, tuple[Callable[[Mapping[str, int]], int | None], str]] = {}
    for d in symbols(specs):
        if expression_names(d) is not None:
            out[d] = (functools.partial(evaluate, d), "its expression")
    total = _kv_total(specs)
    if total is not None and total[0] not in out:
        out[total[0]] = (functools.partial(_sum_of, total[1]),
                         " + ".join(total[1]) + " (a KV cache's past and current lengths)")
    return out


def _sum_of(parts: tuple[str, ...], sizes: Mapping[str, int]) -> int | None:
    return sum(sizes[p] for p in parts) if all(p in sizes for p in parts) else None


def _kv_total(specs: list[InputSpec]) -> tuple[str, tuple[str, ...]] | None:
    """(the mask's length, (past length, current length)) of a model fed a KV cache: past key/value inputs
    (a name with 'past' or 'cache', 3 or 4 dimensions) and an attention mask whose last dimension is neither."""
    past_specs = [s for s in specs if _PAST_NAME.search(s.name) and s.shape is not None and len(s.shape) in (3, 4)]
    others = [(s, s.shape) for s in specs if s not in past_specs and s.shape]
    past = _past_length(past_specs, [s for s, _ in others])
    masks = [shape[-1] for s, shape in others if _MASK_NAME.search(s.name) and isinstance(shape[-1], str)]
    current = next((shape[1] for s, shape in others if not _MASK_NAME.search(s.name) and len(shape) >= 2
                    and isinstance(shape[1], str) and s.dtype.kind in "iu"), None)
    if not isinstance(current, str) or not masks:
        return None
    total = masks[0]
    if not isinstance(total, str) or total in (current, past) or expression_names(total) is not None:
        return None
    return total, (past, current) if past is not None else (current,)


def _past_length(past_specs: list[InputSpec], others: list[InputSpec]) -> str | None:
    """The dimension of the past inputs that is their length: named, not their batch, not in other inputs."""
    elsewhere = {d for s in others for d in s.symbols}
    for spec in past_specs:
        assert spec.shape is not None
        for axis in (-2, 1, 2):
            d = spec.shape[axis]
            if isinstance(d, str) and d not in elsewhere and axis != 0:
                return d
    return None


def _batch_like(specs: list[InputSpec]) -> set[str]:
    """Dimensions that are every input's first (a batch): kept at 1 while other sizes are tried."""
    first: dict[str, bool] = {}
    for s in specs:
        for axis, d in enumerate(s.shape or ()):
            if isinstance(d, str):
                rank_ok = axis == 0 and (len(s.shape or ()) >= 2 or bool(_BATCH_NAME.search(d)))
                first[d] = first.get(d, True) and rank_ok
    return {d for d, yes in first.items() if yes}


def _with_related(sizes: Mapping[str, int], related: Mapping[str, tuple[Callable[[Mapping[str, int]], int | None], str]],
                  specs: list[InputSpec]) -> dict[str, int]:
    out = dict(sizes)
    for name, (rule, _) in related.items():
        if name in out:
            continue
        value = rule(out)
        out[name] = DEFAULT_DIM if value is None else value
    order = symbols(specs)
    return {k: out[k] for k in sorted(out, key=lambda k: order.index(k) if k in order else len(order))}


def _candidates(plan: SizePlan, names: list[str], related: Mapping[str, Any], batch: set[str],
                specs: list[InputSpec]) -> list[dict[str, int]]:
    """Sizes to try after the first: every chosen dimension but a batch at each size of the ladder (and of the
    graph's suggestions) at least its suggested minimum; then each exact suggestion dropped."""
    chosen = [n for n in names if n not in plan.fixed and n not in related]
    free = [n for n in chosen if n not in batch] or chosen  # a batch is tried only when nothing else can be
    if not free:
        return []
    least = {n: max((h.size for h in plan.hints if h.dim == n and h.at_least), default=0) for n in free}
    exact = {h.dim: h.size for h in plan.hints if not h.at_least}
    suggested = {h.size for h in plan.hints}
    steps = sorted(set(LADDER) | {s for s in suggested if 1 < s <= MAX_HINTED})
    out: list[dict[str, int]] = []
    seen = [plan.first]
    for step in steps:
        sizes = dict(plan.first)
        for n in free:
            sizes[n] = exact.get(n) or max(step, least[n])
        _add(out, seen, _with_related({k: v for k, v in sizes.items() if k not in related}, related, specs))
    for step in steps:  # a suggestion may be wrong: the ladder alone
        sizes = dict(plan.first)
        for n in free:
            sizes[n] = max(step, least[n])
        _add(out, seen, _with_related({k: v for k, v in sizes.items() if k not in related}, related, specs))
    return out[:MAX_CANDIDATES]


def _add(out: list[dict[str, int]], seen: list[dict[str, int]], sizes: dict[str, int]) -> None:
    if sizes not in seen:
        seen.append(sizes)
        out.append(sizes)


def graph_hints(model: onnx.ModelProto, specs: list[InputSpec], fixed: Mapping[str, int]) -> list[Hint]:
    """Sizes the graph suggests for the free dimensions of ``specs``: see :class:`_Hinter`."""
    if not any(d not in fixed for d in settable(specs)):
        return []
    try:
        return _Hinter(model, specs, fixed).hints()
    except Exception:  # noqa: BLE001 - shape inference and odd graphs raise anything; then no suggestion
        return []


class _Hinter:
    """Reads the main graph (and the Conv kernels inside bodies) for sizes that constrain the inputs'
    free dimensions, through ONNX shape inference of the main graph with those dimensions named."""

    def __init__(self, model: onnx.ModelProto, specs: list[InputSpec], fixed: Mapping[str, int]) -> None:
        self.model = model
        self.specs = specs
        names = [d for d in settable(specs) if d not in fixed]
        self.free = {d for d in names if expression_names(d) is None}
        self.batch = _batch_like(specs)
        self.shapes = _symbolic_shapes(model, specs, fixed)
        self.constants = _constants(model.graph)
        self.weight_dims = {t.name: list(t.dims) for t in model.graph.initializer}
        self.found: list[Hint] = []

    def hints(self) -> list[Hint]:
        if not self.free:
            return []
        graph = self.model.graph
        for node in graph.node:
            {"Reshape": self._reshape, "Pad": self._pad, "Slice": self._slice}.get(node.op_type, _none)(node)
        for node in _all_nodes(graph):
            if node.op_type in ("Conv", "MaxPool", "AveragePool", "LpPool"):
                self._kernel(node)
        self._resize(graph)
        self._value_infos(graph)
        self._metadata()
        return self.found

    def _hint(self, dim: Any, size: int, why: str, at_least: bool = False) -> None:
        if isinstance(dim, str) and dim in self.free and 0 < size <= MAX_HINTED:
            self.found.append(Hint(dim, int(size), why, at_least))

    def _reshape(self, node: onnx.NodeProto) -> None:
        target = self.constants.get(node.input[1]) if len(node.input) > 1 else None
        data = self.shapes.get(node.input[0])
        if target is None or data is None or any(t < 0 for t in target):
            return
        allowzero = any(a.name == "allowzero" and a.i for a in node.attribute)
        sizes = [data[k] if t == 0 and not allowzero and k < len(data) else t for k, t in enumerate(target)]
        if any(not isinstance(s, int) for s in sizes):
            return
        total = math.prod(s for s in sizes if isinstance(s, int))
        unknown = [d for d in data if not isinstance(d, int)]
        known = math.prod(d for d in data if isinstance(d, int))
        rest = [d for d in unknown if d in self.batch]  # a batch stays 1
        solve = [d for d in unknown if d not in self.batch]
        if len(solve) == 1 and all(isinstance(d, str) for d in rest) and known and total % known == 0:
            self._hint(solve[0], total // known, f"Reshape {_node_text(node)} to [{', '.join(map(str, target))}]")

    def _pad(self, node: onnx.NodeProto) -> None:
        mode = next((a.s.decode() for a in node.attribute if a.name == "mode"), "constant")
        if mode not in ("reflect", "edge", "wrap"):
            return
        pads = self.constants.get(node.input[1]) if len(node.input) > 1 and node.input[1] else \
            next((list(a.ints) for a in node.attribute if a.name == "pads"), None)
        data = self.shapes.get(node.input[0])
        if pads is None or data is None or len(pads) % 2:
            return
        half = len(pads) // 2
        axes = self.constants.get(node.input[3]) if len(node.input) > 3 and node.input[3] else list(range(half))
        for k, axis in enumerate((axes or [])[:half]):
            need = max(pads[k], pads[k + half])
            if need > 0 and -len(data) <= axis < len(data):
                self._hint(data[axis], need + (mode == "reflect"), f"{mode} Pad {_node_text(node)} of {need}",
                           at_least=True)

    def _slice(self, node: onnx.NodeProto) -> None:
        if len(node.input) < 3:
            return
        starts, ends = self.constants.get(node.input[1]), self.constants.get(node.input[2])
        data = self.shapes.get(node.input[0])
        if starts is None or ends is None or data is None:
            return
        axes = self.constants.get(node.input[3]) if len(node.input) > 3 and node.input[3] else \
            list(range(len(starts)))
        for start, end, axis in zip(starts, ends, axes or [], strict=False):
            if start == 0 and 0 < end < MAX_HINTED and -len(data) <= axis < len(data):
                self._hint(data[axis], end, f"Slice {_node_text(node)} up to {end}", at_least=True)

    def _kernel(self, node: onnx.NodeProto) -> None:
        data = self.shapes.get(node.input[0]) if node.input else None
        kernel = next((list(a.ints) for a in node.attribute if a.name == "kernel_shape"), None)
        if kernel is None and node.op_type == "Conv" and len(node.input) > 1:
            weight = self.weight_dims.get(node.input[1])
            kernel = weight[2:] if weight else None
        if data is None or not kernel or len(data) != len(kernel) + 2:
            return
        dilations = next((list(a.ints) for a in node.attribute if a.name == "dilations"), [1] * len(kernel))
        pads = next((list(a.ints) for a in node.attribute if a.name == "pads"), [0] * 2 * len(kernel))
        for k, size in enumerate(kernel):
            span = (size - 1) * (dilations[k] if k < len(dilations) else 1) + 1
            pad = pads[k] + pads[k + len(kernel)] if len(pads) == 2 * len(kernel) else 0
            self._hint(data[k + 2], span - pad, f"{node.op_type} {_node_text(node)} of kernel {size}", at_least=True)

    def _resize(self, graph: onnx.GraphProto) -> None:
        """A model that resizes (upsamples) and strides: its spatial sizes are multiples of its largest
        downsampling factor (a feature map upsampled joins one of the next finer stride)."""
        if not any(n.op_type in ("Resize", "Upsample") for n in graph.node):
            return
        factor = _downsampling(graph)
        if factor <= 1:
            return
        for spec in self.specs:
            if spec.shape is not None and len(spec.shape) == 4:
                for axis in (2, 3) if spec.shape[1] in (1, 3) else (1, 2):
                    self._hint(spec.shape[axis], factor, f"a multiple of the model's downsampling by {factor}, "
                               "as it resizes", at_least=True)

    def _value_infos(self, graph: onnx.GraphProto) -> None:
        for info in (*graph.value_info, *graph.output):
            declared = _declared(info)
            inferred = self.shapes.get(info.name)
            if declared is None or inferred is None or len(declared) != len(inferred):
                continue
            for want, have in zip(declared, inferred, strict=True):
                if isinstance(want, int) and want > 0:
                    self._hint(have, want, f"value_info of '{display_name(info.name, 60)}'")

    def _metadata(self) -> None:
        for prop in self.model.metadata_props:
            if prop.value.strip().isdigit():
                for name in self.free:
                    if prop.key.lower() in (name.lower(), f"{name.lower()}_size", f"max_{name.lower()}"):
                        self._hint(name, int(prop.value), f"metadata {display_name(prop.key, 40)}")


def _none(node: onnx.NodeProto) -> None:
    return None


def _node_text(node: onnx.NodeProto) -> str:
    return f"'{display_name(node.name, 60)}'" if node.name else "node"


def _all_nodes(graph: onnx.GraphProto) -> Iterable[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _all_nodes(g)


def _declared(info: onnx.ValueInfoProto) -> list[int | str | None] | None:
    t = info.type.tensor_type
    if not info.type.HasField("tensor_type") or not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in t.shape.dim]


def _symbolic_shapes(model: onnx.ModelProto, specs: list[InputSpec],
                     fixed: Mapping[str, int]) -> dict[str, list[int | str | None]]:
    """Every main-graph value's shape by ONNX shape inference (value_info left out: it is checked against
    this), the generated inputs' free dimensions named, the fixed ones sized."""
    from onnxviz.model.runner.packing import _without_weights

    copy = _without_weights(model)
    by_name = {s.name: s for s in specs}
    for value in copy.graph.input:
        spec = by_name.get(value.name)
        if spec is None or spec.shape is None or not value.type.HasField("tensor_type"):
            continue
        dims = value.type.tensor_type.shape.dim
        del dims[:]
        for d in spec.shape:
            dim = dims.add()
            if isinstance(d, int):
                dim.dim_value = d
            elif isinstance(d, str) and d in fixed:
                dim.dim_value = fixed[d]
            elif isinstance(d, str):
                dim.dim_param = d
    inferred = onnx.shape_inference.infer_shapes(copy, data_prop=True)
    out: dict[str, list[int | str | None]] = {}
    for info in (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output):
        shape = _declared(info)
        if shape is not None:
            out[info.name] = shape
    return out


def _constants(graph: onnx.GraphProto) -> dict[str, list[int]]:
    """Small integer constants of the main graph (initializers and Constant nodes) as lists."""
    from onnx import numpy_helper

    out: dict[str, list[int]] = {}
    tensors = [(t.name, t) for t in graph.initializer if math.prod(t.dims) <= 64]
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR and math.prod(attr.t.dims) <= 64:
                    tensors.append((node.output[0], attr.t))
                elif attr.name == "value_ints":
                    out[node.output[0]] = list(attr.ints)
                elif attr.name == "value_int":
                    out[node.output[0]] = [attr.i]
    for name, tensor in tensors:
        if tensor.data_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32) and tensor.data_location != 1:
            try:
                out[name] = [int(x) for x in numpy_helper.to_array(tensor).reshape(-1)]
            except Exception:  # noqa: BLE001 - a damaged tensor: no suggestion from it
                continue
    return out


_STRIDED = {"Conv": "strides", "MaxPool": "strides", "AveragePool": "strides", "LpPool": "strides"}


def _downsampling(graph: onnx.GraphProto) -> int:
    """The largest spatial downsampling along any path of the main graph (strides multiply, a Resize's
    integer scale divides), capped at 64."""
    factor: dict[str, float] = {}
    producer_order = graph.node  # exporters write nodes in order; an unsorted graph only weakens the figure
    best = 1.0
    for node in producer_order:
        here = max((factor.get(x, 1.0) for x in node.input if x), default=1.0)
        attr = _STRIDED.get(node.op_type)
        if attr:
            strides = next((list(a.ints) for a in node.attribute if a.name == attr), [])
            here *= max(strides, default=1)
        elif node.op_type in ("Resize", "Upsample"):
            here = max(1.0, here / 2)
        for y in node.output:
            factor[y] = here
        best = max(best, here)
    return int(min(best, 64))


# -- making and trying them ---------------------------------------------------------------------
@dataclass(frozen=True)
class GeneratedInputs:
    """The inputs the worker makes: each input with its source ("random", "uniform", "zeros", "ones"), the
    sizes set by the user or by the given arrays (never changed), the seed, and whether to look for sizes
    that run when the first ones do not."""

    inputs: tuple[tuple[InputSpec, str], ...]
    fixed: dict[str, int] = field(default_factory=dict)
    seed: int = 0
    search: bool = True
    budget_s: float = SEARCH_BUDGET_S
    hints: bool = True  # read the graph for sizes (off when that crashed the worker)
    preferred: dict[str, int] = field(default_factory=dict)  # sizes tried first (those that ran last time)

    @property
    def specs(self) -> list[InputSpec]:
        return [spec for spec, _ in self.inputs]

    def make(self, sizes: Mapping[str, int]) -> dict[str, np.ndarray]:
        return {spec.name: generate(spec, source, sizes, self.seed) for spec, source in self.inputs}

    def nbytes(self, sizes: Mapping[str, int]) -> int:
        return sum(math.prod(s.concrete_shape(sizes)) * s.dtype.itemsize for s in self.specs)


def fits(generated: GeneratedInputs, sizes: Mapping[str, int]) -> bool:
    """Whether each input of these sizes fits in memory (see :func:`~.inputs.check_size`)."""
    try:
        for spec in generated.specs:
            check_size(spec, sizes)
    except RunError:
        return False
    return True


@dataclass
class Tried:
    """Sizes tried by :func:`try_sizes` and what onnxruntime said."""

    sizes: dict[str, int]
    error: str = ""  # "" when they ran


def try_sizes(run: Callable[[dict[str, np.ndarray]], None], generated: GeneratedInputs,
              given: Mapping[str, np.ndarray], candidates: list[dict[str, int]],
              budget_s: float) -> tuple[dict[str, int] | None, list[Tried]]:
    """The first candidate whose inputs ``run`` runs without raising (within ``budget_s`` seconds), and
    every candidate tried."""
    from onnxviz.model.graph.ort_messages import engine_message

    start = time.perf_counter()
    tried: list[Tried] = []
    for sizes in candidates:
        if time.perf_counter() - start > budget_s:
            break
        if generated.nbytes(sizes) > TRIAL_BYTES or not fits(generated, sizes):
            continue
        feeds = {**given, **generated.make(sizes)}
        try:
            run(feeds)
        except Exception as exc:  # noqa: BLE001 - any engine error means: not these sizes
            tried.append(Tried(sizes, engine_message(exc)))
            continue
        tried.append(Tried(sizes))
        return sizes, tried
    return None, tried


def inputs_to_run(specs: list[InputSpec], given: Mapping[str, np.ndarray], dims: Mapping[str, int],
                  source: str = "random", seed: int = 0, search: bool = True
                  ) -> tuple[dict[str, np.ndarray], GeneratedInputs | None]:
    """The given arrays (checked and cast to their inputs' types) and the inputs the worker is to make, with
    the sizes fixed by ``dims`` (``--dim`` entries: see :func:`resolve_dims`) and by the given arrays; RunError
    for an array of no input, a ``--dim`` that matches nothing or contradicts a given array."""
    names = {s.name for s in specs}
    extra = sorted(set(given) - names)
    if extra:
        raise unknown_input(extra[0], specs)
    if source not in SOURCES:
        raise RunError(f"unknown input source '{source}'; use one of {', '.join(SOURCES)}.")
    conformed = {s.name: conform(s, given[s.name]) for s in specs if s.name in given}
    chosen = resolve_dims(specs, dims)
    from_files = given_dims(specs, conformed)
    clash = conflicts(chosen, from_files)
    if clash:
        raise RunError(clash)
    made = tuple((s, source) for s in specs if s.name not in given)
    if not made:
        return conformed, None
    return conformed, GeneratedInputs(made, {**from_files, **chosen}, seed, search)
