"""Values computed inside If/Loop/Scan bodies and model-local functions, by the reference evaluator.

After the main run, each body runs on its own as a standalone model whose inputs are
the body's formal inputs plus the outer-scope values it reads (taken from the main run):
for If the branch the condition chose; for Loop and Scan every iteration in turn, keeping
the intermediate values of the LAST one (at most :data:`MAX_ITERATIONS`). A local function
runs with the inputs and attributes of its FIRST call (one function body is one scope, however
often it is called). Bodies inside bodies and functions follow recursively with the values of
their holder's shown run.
"""

from __future__ import annotations

import time
from collections import ChainMap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import onnx
import onnx.numpy_helper

from onnxviz.model.graph.index import child_scope, function_scope

MAX_ITERATIONS = 1000
TIME_LIMIT_S = 30.0  # per Loop/Scan: the reference evaluator can be slow on a heavy body
TOTAL_TIME_LIMIT_S = 120.0  # for all bodies of a run together


@dataclass
class BodyRun:
    """The shown run of one body: its values by name, producers (positions in the body) and what ran."""

    scope: str
    graph: onnx.GraphProto
    values: dict[str, np.ndarray] = field(default_factory=dict)
    producers: dict[str, int] = field(default_factory=dict)
    description: str = ""


class _Initializers(Mapping[str, np.ndarray]):
    """A graph's initializers as arrays, converted only when a body reads them."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.tensors = {t.name: t for t in graph.initializer}

    def __getitem__(self, name: str) -> np.ndarray:
        return onnx.numpy_helper.to_array(self.tensors[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self.tensors)

    def __len__(self) -> int:
        return len(self.tensors)


class BodyError(Exception):
    """A body could not be run; the message says why in one sentence."""


def run_bodies(model: onnx.ModelProto, scope: str, graph: onnx.GraphProto,
               known: Mapping[str, np.ndarray], notes: list[str], deadline: float | None = None) -> Iterator[BodyRun]:
    """BodyRuns of every If/Loop/Scan body under ``graph`` (whose values so far are ``known``);
    a body that cannot run adds a sentence to ``notes``."""
    known = ChainMap(known, _Initializers(graph))  # type: ignore[arg-type]
    if deadline is None:
        deadline = time.perf_counter() + TOTAL_TIME_LIMIT_S
    for i, node in enumerate(graph.node):
        if node.op_type not in ("If", "Loop", "Scan") or node.domain not in ("", "ai.onnx"):
            continue
        if time.perf_counter() > deadline:
            notes.append(f"values inside the remaining If/Loop/Scan bodies were not captured: all bodies "
                         f"together reached the time limit of {TOTAL_TIME_LIMIT_S:g} s.")
            return
        try:
            body = _run_holder(model, scope, i, node, known)
        except BodyError as exc:
            notes.append(f"values inside {node.op_type} node '{node.name or i}' were not captured: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - any reference operator can raise anything
            notes.append(f"values inside {node.op_type} node '{node.name or i}' were not captured: "
                         f"{' '.join(str(exc).split())[:200]}.")
            continue
        if body is None:
            continue
        yield body
        yield from run_bodies(model, body.scope, body.graph, ChainMap(body.values, known), notes, deadline)


def run_functions(model: onnx.ModelProto, main: Mapping[str, np.ndarray], notes: list[str],
                  deadline: float | None = None) -> Iterator[BodyRun]:
    """BodyRuns of every model-local function called from the main graph (or from a function it
    calls), each with the values of its first call, and of the If/Loop/Scan bodies inside them."""
    functions = {(f.domain, f.name, f.overload): f for f in model.functions}
    if deadline is None:
        deadline = time.perf_counter() + TOTAL_TIME_LIMIT_S
    calls = _calls(model.graph, functions)
    done: set[tuple[str, str, str]] = set()
    outer: Mapping[str, np.ndarray] = ChainMap(main, _Initializers(model.graph))  # type: ignore[arg-type]
    pending = [(call, outer) for call in calls]
    while pending:
        (node, key), known = pending.pop(0)
        if key in done:
            continue
        done.add(key)
        if time.perf_counter() > deadline:
            notes.append("values inside the remaining functions were not captured: the time limit was reached.")
            return
        try:
            body = _run_function(model, functions[key], node, known, sum(1 for _, k in calls if k == key))
        except Exception as exc:  # noqa: BLE001 - any reference operator can raise anything
            text = exc.args[0] if isinstance(exc, BodyError) else f"{' '.join(str(exc).split())[:200]}."
            notes.append(f"values inside function '{key[1]}' were not captured: {text}")
            continue
        yield body
        yield from run_bodies(model, body.scope, body.graph, body.values, notes, deadline)
        pending += [(call, body.values) for call in _calls(body.graph, functions)]


def _calls(graph: onnx.GraphProto, functions: Mapping[tuple[str, str, str], onnx.FunctionProto],
           ) -> list[tuple[onnx.NodeProto, tuple[str, str, str]]]:
    found = ((node, (node.domain, node.op_type, node.overload)) for node in graph.node)
    return [(node, key) for node, key in found if key in functions]


def _run_function(model: onnx.ModelProto, fn: onnx.FunctionProto, call: onnx.NodeProto,
                  known: Mapping[str, np.ndarray], calls: int) -> BodyRun:
    inputs = {formal: known.get(actual) for formal, actual in zip(fn.input, call.input, strict=False) if actual}
    missing = [formal for formal, value in inputs.items() if value is None]
    if missing:
        raise BodyError(f"its input '{missing[0]}' has no captured tensor value.")
    given = {formal: value for formal, value in inputs.items() if value is not None}
    graph = onnx.helper.make_graph(_bind_attributes(fn, call), fn.name,
                                   [onnx.ValueInfoProto(name=n) for n in given],
                                   [onnx.ValueInfoProto(name=n) for n in fn.output if n])
    where = f"the call in node '{call.name or call.op_type}'"
    body = BodyRun(function_scope(fn.domain, fn.name, fn.overload), graph,
                   description=where if calls == 1 else f"{where}, the first of {calls} calls")
    opsets = {o.domain: o for o in [*model.opset_import, *fn.opset_import]}
    runner = _Runner(model, graph, given, opset_import=list(opsets.values()))
    body.values = runner.run(list(given.values()))
    body.producers = runner.producers
    return body


def _bind_attributes(fn: onnx.FunctionProto, call: onnx.NodeProto) -> list[onnx.NodeProto]:
    """The function's nodes with each attribute reference replaced by the call's value (or the
    function's default; an attribute with neither is left out)."""
    given = {a.name: a for a in fn.attribute_proto}
    given.update((a.name, a) for a in call.attribute)
    nodes = []
    for node in fn.node:
        bound = onnx.NodeProto()
        bound.CopyFrom(node)
        _bind_node(bound, given)
        nodes.append(bound)
    return nodes


def _bind_node(node: onnx.NodeProto, given: Mapping[str, onnx.AttributeProto]) -> None:
    kept = []
    for original in node.attribute:
        attr = onnx.AttributeProto()
        if original.ref_attr_name:
            value = given.get(original.ref_attr_name)
            if value is None:
                continue
            attr.CopyFrom(value)
            attr.name = original.name
        else:
            attr.CopyFrom(original)
        for g in [attr.g] if attr.HasField("g") else list(attr.graphs):
            for inner in g.node:
                _bind_node(inner, given)
        kept.append(attr)
    del node.attribute[:]
    node.attribute.extend(kept)


def _run_holder(model: onnx.ModelProto, scope: str, i: int, node: onnx.NodeProto,
                known: Mapping[str, np.ndarray]) -> BodyRun | None:
    inputs = [known.get(name) if name else None for name in node.input]
    missing = [name for name, value in zip(node.input, inputs, strict=True) if name and value is None]
    if missing:
        raise BodyError(f"its input '{missing[0]}' has no captured tensor value.")
    graphs = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
    if node.op_type == "If":
        chosen = "then_branch" if bool(np.asarray(inputs[0]).reshape(-1)[0]) else "else_branch"
        body = BodyRun(child_scope(scope, i, chosen), graphs[chosen],
                       description=f"{chosen.replace('_', ' ')}, chosen by the condition")
        _evaluate(model, body, known, [])
        return body
    body = BodyRun(child_scope(scope, i, "body"), graphs["body"])
    steps = _loop_steps(node, inputs) if node.op_type == "Loop" else _scan_steps(node, inputs)
    return _iterate(model, body, known, steps)


def _iterate(model: onnx.ModelProto, body: BodyRun, known: Mapping[str, np.ndarray],
             steps: _Steps) -> BodyRun | None:
    runner = _Runner(model, body.graph, known)
    count, limit = 0, ""
    deadline = time.perf_counter() + TIME_LIMIT_S
    feeds = steps.first()
    while feeds is not None:
        body.values = runner.run(feeds)
        count += 1
        feeds = steps.next(count, [body.values[o.name] for o in body.graph.output])
        if feeds is not None and count >= MAX_ITERATIONS:
            limit = f"the limit of {MAX_ITERATIONS} iterations"
        elif feeds is not None and time.perf_counter() > deadline:
            limit = f"the time limit of {TIME_LIMIT_S:g} s"
        if limit:
            break
    if count == 0:
        return None  # zero iterations: nothing inside ran
    body.producers = runner.producers
    body.description = f"iteration {count} (stopped there: {limit})" if limit \
        else f"iteration {count} of {count}, the last one"
    return body


def _evaluate(model: onnx.ModelProto, body: BodyRun, known: Mapping[str, np.ndarray], formal: list) -> None:
    runner = _Runner(model, body.graph, known)
    body.values = runner.run(formal)
    body.producers = runner.producers


class _Runner:
    """A body as a standalone model on the reference evaluator; outer values are extra inputs."""

    def __init__(self, model: onnx.ModelProto, graph: onnx.GraphProto, known: Mapping[str, np.ndarray],
                 opset_import: list[onnx.OperatorSetIdProto] | None = None) -> None:
        from onnx.reference import ReferenceEvaluator

        self.formal = [i.name for i in graph.input]
        outer = sorted(_free_names(graph))
        absent = [n for n in outer if n not in known]
        if absent:
            raise BodyError(f"the outer value '{absent[0]}' it reads has no captured tensor value.")
        self.outer = {n: known[n] for n in outer}
        standalone = onnx.GraphProto()
        standalone.CopyFrom(graph)
        del standalone.input[:]
        standalone.input.extend(onnx.ValueInfoProto(name=n) for n in [*self.formal, *outer])
        standalone.name = standalone.name or "body"
        opsets = model.opset_import if opset_import is None else opset_import
        proto = onnx.helper.make_model(standalone, opset_imports=opsets, functions=callees_first(model.functions),
                                       ir_version=model.ir_version)
        self.evaluator = ReferenceEvaluator(proto)
        self.producers = {name: k for k, n in enumerate(graph.node) for name in n.output if name}

    def run(self, formal: list[np.ndarray]) -> dict[str, np.ndarray]:
        feeds = {**self.outer, **dict(zip(self.formal, formal, strict=False))}
        with np.errstate(all="ignore"):  # NaN and Inf are values the body makes, not warnings to print
            produced = cast(dict[str, Any], self.evaluator.run(None, feeds, intermediate=True))
        out: dict[str, np.ndarray] = {}
        for name, value in produced.items():
            if name not in self.producers:
                continue
            if isinstance(value, np.generic):
                value = np.asarray(value)
            if isinstance(value, np.ndarray):
                out[name] = value
        return out


def callees_first(functions: Iterable[onnx.FunctionProto]) -> list[onnx.FunctionProto]:
    """The functions ordered so each comes after those it calls (the reference evaluator loads
    them in order and refuses a call to one it has not seen yet)."""
    by_key = {(f.domain, f.name): f for f in functions}
    ordered: dict[tuple[str, str], onnx.FunctionProto] = {}

    def visit(key: tuple[str, str], path: frozenset[tuple[str, str]]) -> None:
        if key in ordered or key in path:
            return
        for node in by_key[key].node:
            callee = (node.domain, node.op_type)
            if callee in by_key:
                visit(callee, path | {key})
        ordered[key] = by_key[key]

    for key in by_key:
        visit(key, frozenset())
    return list(ordered.values())


def _free_names(graph: onnx.GraphProto) -> set[str]:
    """Names the graph (and bodies inside it) read but do not define."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer} | \
        {t.values.name for t in graph.sparse_initializer}
    used: set[str] = set()
    for node in graph.node:
        used.update(n for n in node.input if n)
        for attr in node.attribute:
            inner = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            for g in inner:
                used |= _free_names(g)
        defined.update(n for n in node.output if n)
    return used - defined


class _Steps:
    """The formal inputs of each iteration: ``first()``, then ``next(done, body outputs)``."""

    def first(self) -> list[np.ndarray] | None:
        raise NotImplementedError

    def next(self, done: int, outputs: list[np.ndarray]) -> list[np.ndarray] | None:
        raise NotImplementedError


class _LoopSteps(_Steps):
    """Loop body inputs: (iteration number, condition, carried values...)."""

    def __init__(self, trip: int | None, cond: bool | None, carried: list[np.ndarray]) -> None:
        self.trip, self.cond, self.carried = trip, cond, carried

    def _feeds(self, k: int, cond: bool | None) -> list[np.ndarray] | None:
        if (self.trip is not None and k >= self.trip) or cond is False:
            return None
        return [np.array(k, np.int64), np.array(True if cond is None else cond), *self.carried]

    def first(self) -> list[np.ndarray] | None:
        return self._feeds(0, self.cond)

    def next(self, done: int, outputs: list[np.ndarray]) -> list[np.ndarray] | None:
        cond = bool(np.asarray(outputs[0]).reshape(-1)[0]) if self.cond is not None else None
        self.carried = list(outputs[1:1 + len(self.carried)])
        return self._feeds(done, cond)


def _loop_steps(node: onnx.NodeProto, inputs: list[np.ndarray | None]) -> _Steps:
    trip = int(np.asarray(inputs[0]).reshape(-1)[0]) if inputs and inputs[0] is not None else None
    cond = bool(np.asarray(inputs[1]).reshape(-1)[0]) if len(inputs) > 1 and inputs[1] is not None else None
    if trip is None and cond is None:
        raise BodyError("it has neither a trip count nor a condition (it would never stop).")
    return _LoopSteps(trip, cond, [np.asarray(v) for v in inputs[2:]])


class _ScanSteps(_Steps):
    """Scan body inputs: (state values..., one slice of each scanned input)."""

    def __init__(self, states: list[np.ndarray], scanned: list[np.ndarray]) -> None:
        self.states, self.scanned = states, scanned
        self.length = scanned[0].shape[0] if scanned else 0

    def _feeds(self, k: int) -> list[np.ndarray] | None:
        return [*self.states, *(s[k] for s in self.scanned)] if k < self.length else None

    def first(self) -> list[np.ndarray] | None:
        return self._feeds(0)

    def next(self, done: int, outputs: list[np.ndarray]) -> list[np.ndarray] | None:
        self.states = list(outputs[:len(self.states)])
        return self._feeds(done)


def _is_scan8(node: onnx.NodeProto, count: int) -> bool:
    """Scan-8 has a first input (sequence_lens, maybe empty) beyond its states and scanned inputs."""
    body = next(a.g for a in node.attribute if a.name == "body")
    return len(node.input) > len(body.input) and len(node.input) - len(body.input) == 1


def _scan_steps(node: onnx.NodeProto, inputs: list[np.ndarray | None]) -> _Steps:
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    count = int(attrs["num_scan_inputs"])
    if "scan_input_axes" not in attrs and _is_scan8(node, count):
        raise BodyError("Scan from opset 8 (with a batch axis) is not supported here.")
    values = [np.asarray(v) for v in inputs if v is not None]
    states, scanned = values[:len(values) - count], values[len(values) - count:]
    axes = list(attrs.get("scan_input_axes", [0] * count))
    directions = list(attrs.get("scan_input_directions", [0] * count))
    moved = []
    for k, array in enumerate(scanned):
        array = np.moveaxis(array, axes[k] % array.ndim if array.ndim else 0, 0)
        moved.append(array[::-1] if directions[k] else array)
    return _ScanSteps(states, moved)
