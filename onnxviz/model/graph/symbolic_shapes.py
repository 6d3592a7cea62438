"""Named and computed dimensions from onnxruntime's symbolic shape inference (``symbolic_shape_infer``).

onnx's shape inference drops a dimension it cannot compute to an unnamed one (``?``): a Reshape whose target is
built from ``Shape`` and ``Concat`` nodes, a dimension after a strided Conv, every output of an onnxruntime
contrib operator. onnxruntime's own inference (sympy) computes those as numbers or expressions of the inputs'
named dimensions (``batch``, ``floor(height/2 - 1/2) + 1``) and knows the contrib operators onnxruntime runs
(MatMulNBits, GatherBlockQuantized, SkipLayerNormalization, Attention...). :func:`refine` runs it after onnx's
pass and keeps, per value, whatever of the two knows more; a dimension named only by a symbol the engine made up
(a NonZero count, an input's unnamed dimension) stays unknown: no library can know its size.

The engine is pure Python and can be slow or fail on odd models: it gets a budget (:data:`BUDGET_S`, and
nothing above :data:`MAX_NODES` nodes), its exceptions are contained and what it found before it stopped is
kept. It stops at an operator it does not know; there it is handed the type onnx (or a rule of
:mod:`.contrib_shapes`) found, with fresh symbols for the sizes nobody knows, and goes on.
"""

from __future__ import annotations

import ast
import contextlib
import logging
import math
import operator
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

import onnx
from onnx import GraphProto, ModelProto, TypeProto

from onnxviz.model.graph.contrib import ONNX_DOMAINS
from onnxviz.model.graph.contrib_shapes import contrib_output_types
from onnxviz.model.graph.index import child_scope, subgraphs_of

BUDGET_S = 3.0  # of the engine's time per model state; what it found by then is kept
MAX_NODES = 50_000  # nodes (bodies included) above which it could not finish within the budget: not started
PLACEHOLDER = re.compile(r"unk__\d+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_FUNCTIONS = frozenset({"floor", "ceiling", "Max", "Min", "Mod", "Abs", "sqrt", "Piecewise", "And", "Or"})
Types = dict[str, dict[str, TypeProto]]


class OverBudget(Exception):
    """The engine ran out of its time."""


def refine(model: ModelProto, found: Mapping[str, Mapping[str, TypeProto]], budget_s: float = BUDGET_S) -> Types:
    """The types of ``found`` (onnx's, per scope) with what onnxruntime's symbolic inference of ``model`` adds:
    for each value it typed, the dimensions onnx left unknown (and the rank, the element type), each scope's
    changed types only. Empty when it cannot run (sympy missing, too many nodes, opset below 7) or found
    nothing more. Never raises."""
    if _node_count(model.graph) > MAX_NODES or not any(o.version >= 7 for o in model.opset_import
                                                       if o.domain in ("", "ai.onnx")):
        return {}
    try:
        symbolic = symbolic_types(model, found.get("", {}), budget_s)
    except Exception:  # noqa: BLE001 - onnx's types stand
        return {}
    declared = declared_symbols(model)
    out: Types = {}
    for scope, types in symbolic.items():
        known = found.get(scope, {})
        changed = {}
        for name, t in types.items():
            better = merged(known.get(name), t, declared)
            if better is not None and better is not known.get(name):
                changed[name] = better
        if changed:
            out[scope] = changed
    return out


def symbolic_types(model: ModelProto, fallback: Mapping[str, TypeProto], budget_s: float = BUDGET_S) -> Types:
    """Per scope (the main graph, its If/Loop/Scan bodies), the types onnxruntime's symbolic shape inference
    gives the values, as far as it got within ``budget_s`` (raises ImportError without sympy). At an operator
    it does not know it takes the type ``fallback`` has (the main graph's types found otherwise)."""
    import sympy  # noqa: F401 - the engine's own dependency, which onnxruntime does not declare: onnxviz does
    from onnxruntime.tools import symbolic_shape_infer as engine_module

    engine = _engine_class(engine_module)(2**31 - 1, True, False, 0)
    engine.prepare(model, fallback, {n.op_type for n in _all_nodes(model.graph) if n.domain not in ONNX_DOMAINS})
    engine._preprocess(model)
    _quiet(engine_module.__name__)
    try:
        with _deadline(budget_s) as expired:
            engine.expired = expired
            while engine.run_:
                engine._infer_impl()
    except Exception:  # noqa: BLE001 - stopped (budget, an assertion of the engine, a sympy error): keep what it found
        engine.drop_current()
    return _collect(engine)


def _engine_class(module: Any) -> type[Any]:
    """The engine with a deadline checked before each node, and a handler for operators it does not know."""
    base = module.SymbolicShapeInference

    class Engine(base):  # type: ignore[misc, valid-type]
        """A value whose type neither the engine nor ``fallback`` knows is *lost*: it gets a type the engine
        passes over (a map), and the nodes that read it are passed over too (their outputs lost), where the
        engine would stop. So one untyped output (a GroupQueryAttention's present key without a past one) no
        longer costs the shapes of every node after it."""

        fallback: Mapping[str, TypeProto] = {}
        expired: Callable[[], bool] = staticmethod(lambda: False)  # type: ignore[assignment]
        current: Any = None

        def prepare(self, model: ModelProto, fallback: Mapping[str, TypeProto], foreign: set[str]) -> None:
            """``fallback``: the main graph's types found otherwise; ``foreign``: the op types of other domains."""
            self.model, self.fallback = model, fallback
            self.lost: set[str] = set()
            handlers: dict[str, Callable[[Any], None]] = getattr(self, "dispatcher_")  # noqa: B009 - typed here
            handlers.update(dict.fromkeys(foreign - set(handlers), self._fill))
            self.dispatcher_ = {op: self._guarded(handler) for op, handler in handlers.items()}

        def _guarded(self, handler: Callable[[Any], None]) -> Callable[[Any], None]:
            def run(node: Any) -> None:
                if not self._reads_lost(node):
                    handler(node)
                    self._fill(node)
            return run

        def _reads_lost(self, node: Any) -> bool:
            return bool(self.lost) and any(name in self.lost for name in node.input)

        def _onnx_infer_single_node(self, node: Any) -> None:
            if self.expired():
                raise OverBudget()
            self.current = node
            if self._reads_lost(node):
                for name in filter(None, node.output):
                    self._lose(name)
                return
            super()._onnx_infer_single_node(node)
            if node.op_type not in self.dispatcher_:
                self._fill(node)

        def _fill(self, node: Any) -> None:
            """Each output the engine left without a type (or a rank): the type onnx found (or a rule of
            :mod:`.contrib_shapes`), a fresh symbol for each dimension neither knows; else lost."""
            ruled: list[TypeProto | None] | None = None
            for k, name in enumerate(node.output):
                vi = self.known_vi_.get(name) if name else None
                if vi is None or name in self.lost or _has_shape(vi.type) or \
                        vi.type.WhichOneof("value") not in (None, "tensor_type"):
                    continue
                t = self.fallback.get(name)
                if (t is None or not _has_shape(t)) and node.domain not in ONNX_DOMAINS:
                    ruled = self._ruled(node) if ruled is None else ruled
                    t = ruled[k] if k < len(ruled) else None
                if t is None or not _has_shape(t):
                    self._lose(name)
                    continue
                dims = [d.dim_value if d.HasField("dim_value") else
                        d.dim_param if d.dim_param and not PLACEHOLDER.fullmatch(d.dim_param) else
                        str(self._new_symbolic_dim_from_output(node, k, i))
                        for i, d in enumerate(t.tensor_type.shape.dim)]
                vi.CopyFrom(onnx.helper.make_tensor_value_info(name, t.tensor_type.elem_type, dims))

        def _ruled(self, node: Any) -> list[TypeProto | None]:
            """The types a rule of :mod:`.contrib_shapes` gives the outputs of ``node``, from its inputs' types now."""
            ins = [self.known_vi_[x].type if x in self.known_vi_ and x not in self.lost else None for x in node.input]
            return contrib_output_types(self.model, node, ins)

        def _lose(self, name: str) -> None:
            self.lost.add(name)
            vi = self.known_vi_.get(name)
            if vi is None:
                vi = self.known_vi_[name] = self.out_mp_.graph.value_info.add(name=name)
            vi.type.Clear()
            vi.type.map_type.key_type = onnx.TensorProto.STRING

        def drop_current(self) -> None:
            """Forget the outputs of the node the engine was stopped in: they may be half made."""
            node, self.current = self.current, None
            for name in node.output if node is not None else ():
                self.known_vi_.pop(name, None)

    return Engine


def _collect(engine: Any) -> Types:
    """What the engine found: the main graph's values from its table of known ones, each body's from the value
    infos it wrote into the body (only of a body it finished: a stopped one keeps the file's)."""
    graph = engine.out_mp_.graph
    skip = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    skip |= engine.lost
    out: Types = {"": {name: vi.type for name, vi in engine.known_vi_.items() if name not in skip and name}}
    for i, node in enumerate(graph.node):
        for attr, k, body in subgraphs_of(node) if node.attribute else ():
            _collect_body(child_scope("", i, attr, k), body, out)
    return out


def _collect_body(scope: str, body: GraphProto, out: Types) -> None:
    types = {v.name: v.type for v in (*body.value_info, *body.output) if v.HasField("type")}
    if types:
        out[scope] = types
    for i, node in enumerate(body.node):
        for attr, k, inner in subgraphs_of(node) if node.attribute else ():
            _collect_body(child_scope(scope, i, attr, k), inner, out)


def merged(known: TypeProto | None, symbolic: TypeProto, declared: frozenset[str]) -> TypeProto | None:
    """The better of onnx's type ``known`` and the engine's ``symbolic``: ``known`` itself unless the engine knows
    more (a rank, a dimension's size or its expression in ``declared`` symbols, the element type); ``known`` where
    the two disagree on a rank or a size. None when neither is a tensor type worth having."""
    if symbolic.WhichOneof("value") != "tensor_type":
        return known
    s = symbolic.tensor_type
    if known is not None and known.WhichOneof("value") not in (None, "tensor_type"):
        return known
    k = known.tensor_type if known is not None else None
    elem = k.elem_type if k is not None and k.elem_type else s.elem_type
    if not elem:
        return known
    if not s.HasField("shape"):
        return known if k is not None and k.elem_type else _tensor(elem, None)
    theirs = [_dim_text(d, declared) for d in s.shape.dim]
    if k is None or not k.HasField("shape"):
        return _tensor(elem, theirs)
    if len(k.shape.dim) != len(theirs):
        return known
    dims: list[int | str | None] = []
    gained = elem != k.elem_type
    for mine, other in zip(k.shape.dim, theirs, strict=True):
        if mine.HasField("dim_value"):
            if isinstance(other, int) and other != mine.dim_value:
                return known  # they disagree on a size: onnx's type stands
            dims.append(mine.dim_value)
        elif other is not None and (isinstance(other, int) or not mine.dim_param or _placeholder(mine.dim_param)):
            dims.append(other)
            gained = True
        else:
            dims.append(mine.dim_param or None)
    return _tensor(elem, dims) if gained else known


def _dim_text(d: onnx.TensorShapeProto.Dimension, declared: frozenset[str]) -> int | str | None:
    """A dimension the engine gave: its size, its expression when every symbol in it is ``declared``, else None."""
    if d.HasField("dim_value"):
        return int(d.dim_value)
    text = d.dim_param
    if not text:
        return None
    if text.lstrip("-").isdigit():
        return int(text)
    names = set(_IDENTIFIER.findall(text)) - _FUNCTIONS
    return text if names and names <= declared else None


def _placeholder(name: str) -> bool:
    return bool(PLACEHOLDER.fullmatch(name))


def _tensor(elem: int, dims: list[int | str | None] | None) -> TypeProto:
    t = TypeProto()
    t.tensor_type.elem_type = elem
    if dims is not None:
        shape = t.tensor_type.shape
        shape.SetInParent()
        for d in dims:
            new = shape.dim.add()
            if isinstance(d, int):
                new.dim_value = d
            elif d:
                new.dim_param = d
    return t


def declared_symbols(model: ModelProto) -> frozenset[str]:
    """The dimension names the file itself writes (graph inputs, outputs, value infos; bodies' too)."""
    names: set[str] = set()

    def walk(graph: GraphProto) -> None:
        for v in (*graph.input, *graph.output, *graph.value_info):
            for d in v.type.tensor_type.shape.dim if v.type.HasField("tensor_type") else ():
                if d.dim_param and not _placeholder(d.dim_param):
                    names.add(d.dim_param)
        for node in graph.node:
            for _, _, body in subgraphs_of(node) if node.attribute else ():
                walk(body)

    walk(model.graph)
    return frozenset(names)


def _has_shape(t: TypeProto) -> bool:
    return t.WhichOneof("value") == "tensor_type" and bool(t.tensor_type.elem_type) and t.tensor_type.HasField("shape")


def _all_nodes(graph: GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for _, _, body in subgraphs_of(node) if node.attribute else ():
            yield from _all_nodes(body)


def _node_count(graph: GraphProto) -> int:
    return sum(1 for _ in _all_nodes(graph))


def _quiet(logger: str) -> None:
    """The engine logs its doubts as warnings (unsafe merges, unknown ranks): not for the user's terminal."""
    logging.getLogger(logger).setLevel(logging.ERROR)


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[Callable[[], bool]]:
    """A test of whether ``seconds`` have passed (the engine asks before each node); on the main thread, where
    no one else set one, also an alarm that stops a single node that takes the whole budget (a sympy
    simplification gone long): the engine's Python code is interrupted where it is."""
    end = time.monotonic() + seconds
    alarm = (threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
             and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None))
    if alarm:
        def stop(_signum: int, _frame: object) -> None:
            raise OverBudget()

        signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, seconds + 0.5)  # the per-node test comes first when it can
    try:
        yield lambda: time.monotonic() > end
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)


# -- sizes of expression dimensions ------------------------------------------------------------------------
MAX_EXPRESSION = 400  # characters of a dimension read as an expression (a file's dim_param may be anything)
_CALLS: dict[str, Callable[..., Fraction]] = {
    "floor": lambda x: Fraction(math.floor(x)), "ceiling": lambda x: Fraction(math.ceil(x)),
    "Max": lambda *xs: max(xs), "Min": lambda *xs: min(xs), "Mod": lambda a, b: a % b, "Abs": abs,
}
_OPERATORS: dict[type, Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: lambda a, b: Fraction(a // b), ast.Mod: operator.mod,
}


def dim_size(text: str, sizes: Mapping[str, int] | None = None, default: int = 1) -> int | None:
    """The size a dimension's name or expression stands for, each symbol ``sizes`` gives at its size and any other
    at ``default`` (``floor(height/2 - 1/2) + 1`` at height 224: 112); None when it is not an expression of
    numbers, names, + - * / // % and floor, ceiling, Max, Min, Mod, Abs, or its value is not a whole number."""
    sizes = sizes or {}
    if text in sizes:
        return sizes[text]
    if _IDENTIFIER.fullmatch(text):
        return default
    if len(text) > MAX_EXPRESSION:
        return None
    try:
        value = _evaluate(ast.parse(text, mode="eval").body, sizes, default)
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, RecursionError, OverflowError):
        return None
    return int(value) if value.denominator == 1 else None


def _evaluate(node: ast.AST, sizes: Mapping[str, int], default: int) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return Fraction(node.value)
    if isinstance(node, ast.Name):
        return Fraction(sizes.get(node.id, default))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand, sizes, default)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left, sizes, default), _evaluate(node.right, sizes, default))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, power = _evaluate(node.left, sizes, default), _evaluate(node.right, sizes, default)
        if power.denominator != 1 or abs(power) > 64:
            raise ValueError("an odd power")
        return Fraction(base) ** int(power)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS and not node.keywords:
        return _CALLS[node.func.id](*(_evaluate(a, sizes, default) for a in node.args))
    raise ValueError("not a dimension expression")
