"""Run a model in this process and keep the value of every node output.

onnxruntime runs a copy of the model in which every intermediate value is also
a graph output; when it cannot (unsupported operator, a failing node), the
whole model runs on ``onnx.reference.ReferenceEvaluator`` instead. Every value
records the engine that produced it. The worker process calls :func:`capture`;
so do tests that need many quick runs.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import onnx

from onnxviz.model.graph.ort_messages import KERNEL_FAILURE, engine_message, ort_node_name
from onnxviz.model.progress import ProgressFn, no_progress
from onnxviz.model.runner.errors import InputsRefused, NodeFailed, RunError
from onnxviz.model.runner.ortvalues import can_feed_as_ortvalue, onnx_type_of, ortvalue_array, to_ortvalue
from onnxviz.model.runner.packing import (
    PACK_PREFIX,
    Pack,
    PackMismatch,
    add_packs,
    plan_packs,
    static_shapes,
    unpack,
)
from onnxviz.model.runner.protocol import (
    DEFAULT_OPTIONS,
    ENGINE_ORT,
    ENGINE_REFERENCE,
    ENGINES,
    PLANNING,
    RunOptions,
)
from onnxviz.model.runner.structured import is_structured, jsonable
from onnxviz.model.runner.subgraphs import BodyRun, run_bodies, run_functions
from onnxviz.model.text import display_name

ENGINE_INPUT = "input"


@dataclass
class Captured:
    """Values by name in the order they were produced (graph inputs first)."""

    values: dict[str, np.ndarray] = field(default_factory=dict)
    engines: dict[str, str] = field(default_factory=dict)
    producers: dict[str, int] = field(default_factory=dict)  # value -> node position; -1 for inputs
    outputs: list[str] = field(default_factory=list)
    engine: str = ""
    notes: list[str] = field(default_factory=list)
    node_times_us: dict[int, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    bodies: list[BodyRun] = field(default_factory=list)  # values inside If/Loop/Scan bodies
    structured: dict[str, Any] = field(default_factory=dict)  # sequences and maps, as JSON (see structured.py)
    optimized: bool = False  # the values are an optimized onnxruntime session's
    dims: dict[str, int] = field(default_factory=dict)  # sizes onnxviz chose for the generated inputs' dimensions
    generated: list[str] = field(default_factory=list)  # the inputs onnxviz made (the others were given)


def capture(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], options: RunOptions = DEFAULT_OPTIONS,
            progress: ProgressFn = no_progress, scratch_dir: Path | None = None,
            data_dir: Path | None = None, shapes: Mapping[str, tuple[int, tuple[int, ...]]] | None = None,
            strict_inputs: bool = False) -> Captured:
    """Run ``model`` on ``feeds``; raises RunError when no engine can run it. ``data_dir``: the
    model's folder when its tensors stored externally are still on disk (not loaded): onnxruntime
    maps them from there, the reference evaluator reads them when it has to run. ``shapes``: the
    values' shapes when the caller inferred them already (see packing.static_shapes). ``strict_inputs``
    (some inputs were generated): a node that fails in onnxruntime raises InputsRefused instead of handing
    the run to the reference evaluator, whose values on inputs onnxruntime refused would not be trusted."""
    if options.engine not in ENGINES:
        raise RunError(f"unknown engine '{options.engine}'; use {' or '.join(ENGINES)}.")
    result = Captured(outputs=[o.name for o in model.graph.output])
    for name, value in feeds.items():
        _keep_input(result, name, value)
    failure, failed_node = "", -1
    if options.engine == ENGINE_ORT:
        try:
            try:
                _run_ort_packed(model, feeds, options, progress, result, scratch_dir, data_dir, shapes)
            except _MappingFailed as exc:  # an onnxruntime without the folder setting: the weights in memory
                result.notes.append(f"onnxruntime could not map the external weights ({exc.message}); they "
                                    "were read into memory.")
                model, data_dir = with_external_data(model, data_dir), None
                _run_ort_packed(model, feeds, options, progress, result, scratch_dir, None, shapes)
            float16_outputs(model, feeds, options, result, data_dir)
            if not options.optimized and is_quantized(model):
                progress(0.45, "Running the quantized model fused, to compare its outputs")
                result.notes.append(unfused_note(model, feeds, result, data_dir))
            return _finish(model, result, options, progress, data_dir)
        except RunError as exc:
            if strict_inputs and isinstance(exc, NodeFailed):
                raise InputsRefused(exc.message, exc.details, exc.node) from exc
            cause = known_cause(model, f"{exc.message} {exc.details}")
            failure, failed_node = cause or f"ONNX Runtime could not run the model ({exc.message})", exc.node
            result.notes.append(f"{failure}; the reference evaluator produced every value.")
    model = with_external_data(model, data_dir)
    try:
        _run_reference(model, feeds, options, progress, result)
    except RunError as exc:
        reason = f"the reference evaluator failed ({exc.message})"
        node = failed_node if failed_node >= 0 else exc.node
        custom = failure and _CUSTOM_OP in failure
        error = RunError(f"{failure}." if custom else f"{failure}, and {reason}." if failure else f"{reason}.",
                         exc.details, node)
        if options.capture and node >= 0:
            error.partial = values_before(model, feeds, options, node, progress)
        raise error from exc
    return _finish(model, result, options, progress)


_CUSTOM_OP = "custom operator"
_UNREGISTERED = re.compile(r"(\S+?):(\S+?)\(-?\d+\) is not a registered function/op|Could not find an implementation "
                           r"for (\S+?)\(\d+\) node with name '(.*?)'")
_LOCALE = re.compile(r"locale with name:\s*([^:\s]+)")
KNOWN_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training",
                           "com.microsoft", "com.microsoft.nchwc", "com.microsoft.mlfeaturizers"})


def known_cause(model: onnx.ModelProto, text: str) -> str:
    """One sentence for the onnxruntime failures a machine, not the model, causes ('' for others): a custom
    operator whose library is not loaded, a locale the system lacks."""
    found = _LOCALE.search(text)
    if found:
        locale = found.group(1)
        users = [(i, n) for i, n in enumerate(model.graph.node) if n.op_type == "StringNormalizer"]
        who = node_text(users[0][1].name, "StringNormalizer", users[0][0]) if users else "a StringNormalizer node"
        return (f"onnxruntime needs the system locale '{display_name(locale, 40)}' for {who}, and this system does "
                "not have it (install it, e.g. with locale-gen)")
    found = _UNREGISTERED.search(text)
    if not found:
        return ""
    domain, op = (found.group(1), found.group(2)) if found.group(1) else ("", found.group(3))
    node = next((n for n in model.graph.node if n.op_type == op and (not domain or n.domain == domain)), None)
    if node is None or node.domain in KNOWN_DOMAINS or any(f.name == op and f.domain == node.domain
                                                          for f in model.functions):
        return ""
    where = node_text(node.name, node.op_type, list(model.graph.node).index(node))
    return (f"{where} is the {_CUSTOM_OP} '{display_name(node.domain, 40)}:{display_name(op, 40)}', whose library is "
            "not registered with onnxruntime here and which the reference evaluator does not know; run the model "
            "where that library is loaded")


def _keep_input(result: Captured, name: str, value: Any) -> None:
    """A fed value: a tensor, or a sequence, map or optional (None: an empty one) kept as JSON."""
    if value is None or is_structured(value):
        _keep_structured(result, name, value, ENGINE_INPUT, -1)
        return
    result.values[name] = np.asarray(value)
    result.engines[name] = ENGINE_INPUT
    result.producers[name] = -1


def values_before(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], options: RunOptions, failed: int,
                  progress: ProgressFn = no_progress) -> Captured:
    """The values a run computes before node ``failed`` fails: a run of the nodes that do not depend on
    it (node positions as in ``model``); only the inputs when that run fails too."""
    part, kept = _without_dependents(model, failed)
    done = Captured(outputs=[o.name for o in model.graph.output])
    if part.graph.output:
        try:
            done = capture(part, feeds, replace(options, profile=False), progress)
        except RunError:
            pass
    for name, value in feeds.items():
        if name not in done.values and name not in done.structured:
            _keep_input(done, name, value)
    done.producers = {name: kept[i] if i >= 0 else -1 for name, i in done.producers.items()}
    done.producers.update((name, -1) for name in feeds)
    done.outputs = [o.name for o in model.graph.output]
    done.bodies = []
    return done


def _without_dependents(model: onnx.ModelProto, failed: int) -> tuple[onnx.ModelProto, list[int]]:
    """A copy without node ``failed`` and every node that reads what it makes (directly or not), whose
    outputs are the original outputs still made; and the kept nodes' positions in ``model``."""
    nodes = model.graph.node
    readers: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        for name in node.input:
            if name:
                readers.setdefault(name, []).append(i)
    dropped, todo = {failed}, [failed]
    while todo:  # in any node order (a graph need not be sorted)
        for name in nodes[todo.pop()].output:
            for i in readers.get(name, ()) if name else ():
                if i not in dropped:
                    dropped.add(i)
                    todo.append(i)
    lost = {name for i in dropped for name in nodes[i].output}
    kept = [i for i in range(len(nodes)) if i not in dropped]
    part = onnx.ModelProto()
    part.CopyFrom(model)
    del part.graph.node[:]
    part.graph.node.extend(nodes[i] for i in kept)
    outputs = [o for o in model.graph.output if o.name not in lost]
    del part.graph.output[:]
    part.graph.output.extend(outputs)
    return part, kept


# Operators of quantized models: an optimized session fuses DequantizeLinear -> op -> QuantizeLinear into
# integer kernels (QLinearConv, ...) whose rounding differs from the float ops capture runs one by one
QUANTIZED_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger",
                           "ConvInteger", "MatMulNBits", "QGemm", "QAttention", "DynamicQuantizeMatMul",
                           "GatherBlockQuantized"})


def is_quantized(model: onnx.ModelProto) -> bool:
    return any(n.op_type in QUANTIZED_OPS or n.op_type.startswith("QLinear") for n in model.graph.node)


# A second, optimized session compares a quantized model's outputs only when it is cheap to make: its fused
# kernels hold repacked copies of the weights, and its creation takes about as long as the capture's
FUSED_CHECK_NODES = 20_000
FUSED_CHECK_BYTES = 256 << 20


def _weight_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the main graph's initializers, from their types and dims (nothing read)."""
    total = 0
    for t in model.graph.initializer:
        try:
            itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
        except (KeyError, TypeError, ValueError):
            itemsize = 1
        total += math.prod(t.dims) * itemsize
    return total


def unfused_note(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], result: Captured,
                 data_dir: Path | None) -> str:
    """What the run's notes say of a quantized model run unfused: how far an optimized session's outputs are."""
    head = ("this quantized model ran without graph optimizations (every node on its own, as capture needs); "
            "an optimized onnxruntime session fuses its quantized operators (DequantizeLinear, op, QuantizeLinear) "
            "into integer kernels")
    if _too_big_to_run_again(model):
        return head + ", so its outputs may differ from these (Run > Optimized Session shows the fused values)."
    try:
        fused = plain_outputs(model, feeds, DEFAULT_OPTIONS, data_dir, optimized=True)
    except Exception:  # noqa: BLE001 - the note then says what may differ, not by how much
        return head + ", so its outputs may differ from these."
    worst, where = _worst_difference(result.values, fused)
    if worst == 0.0:
        return head + "; here its outputs are the same as these."
    return (head + f"; here its outputs differ from these by up to {worst:.4g} (max abs, '{display_name(where, 80)}'). "
            "Run > Optimized Session shows the fused values (which then do not match the nodes one to one).")


def _too_big_to_run_again(model: onnx.ModelProto) -> bool:
    return len(model.graph.node) > FUSED_CHECK_NODES or _weight_bytes(model) > FUSED_CHECK_BYTES


def plain_outputs(model: onnx.ModelProto, feeds: Mapping[str, Any], options: RunOptions, data_dir: Path | None,
                  optimized: bool) -> dict[str, Any]:
    """The graph outputs of an onnxruntime session that keeps no other value, by name."""
    import onnxruntime as ort

    so = _session_options(replace(options, capture=False, profile=False, optimized=optimized), None, False, data_dir)
    session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    outputs = session.get_outputs()
    fetched = _fetch(session, [o.name for o in outputs], {k: v for k, v in feeds.items() if k in wanted},
                     tensors_only=all(o.type.startswith("tensor(") for o in outputs))
    return {out.name: _as_array(value) for out, value in zip(outputs, fetched, strict=True)}


def plain_runner(model: onnx.ModelProto, data_dir: Path | None) -> Callable[[Mapping[str, Any]], None]:
    """A function that runs ``model`` in one onnxruntime session (no capture, no optimization) on feeds it is
    given, raising what onnxruntime raises: for trying inputs of other sizes (see sizes.py)."""
    import onnxruntime as ort

    so = _session_options(RunOptions(capture=False), None, False, data_dir)
    session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    names = [o.name for o in session.get_outputs()]

    def run(feeds: Mapping[str, Any]) -> None:
        with np.errstate(all="ignore"):
            session.run(names, {k: _run_feed(v) for k, v in feeds.items() if k in wanted})

    return run


def _worst_difference(mine: Mapping[str, np.ndarray], other: Mapping[str, Any]) -> tuple[float, str]:
    """The largest absolute difference between the numeric arrays of ``other`` and ``mine`` (a NaN
    against a number: infinite), and the name of the value where it is."""
    worst, where = 0.0, ""
    for name, value in other.items():
        ours = mine.get(name)
        if ours is None or not isinstance(value, np.ndarray) or ours.shape != value.shape or value.dtype.kind not in "fiu":
            continue
        a, b = ours.astype(np.float64), value.astype(np.float64)
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        with np.errstate(invalid="ignore"):  # inf - inf: a NaN, counted as infinite below
            gap = np.abs(a - b)
        diff = float(np.max(np.where(same, 0.0, np.nan_to_num(gap, nan=np.inf)), initial=0.0))
        if diff > worst or not where:
            worst, where = diff, name
    return worst, where


def float16_outputs(model: onnx.ModelProto, feeds: Mapping[str, Any], options: RunOptions, result: Captured,
                    data_dir: Path | None) -> None:
    """Make a captured float16 model's graph outputs those of a plain run, with a note saying by how much.

    onnxruntime computes a float16 operator that has no float16 kernel on CPU in float32, between Casts
    it inserts; a plain run drops the Cast pair between two such operators, so the value passed on is
    not rounded to float16. A captured value is a graph output, kept in float16: what reads it gets the
    rounded value, as the model declares. The values before the outputs stay the rounded ones."""
    if options.optimized or not options.capture or not any(v.dtype == np.float16 for v in result.values.values()):
        return
    head = ("onnxruntime computes float16 operators that have no float16 kernel in float32 and, in a plain run, "
            "does not round the values passed between them to float16; capture keeps each value rounded to float16 "
            "(as the model declares)")
    if _too_big_to_run_again(model):
        result.notes.append(head + ", so a plain run's outputs may differ from these.")
        return
    try:
        plain = plain_outputs(model, feeds, options, data_dir, optimized=False)
    except Exception:  # noqa: BLE001 - the captured outputs are kept, the note says they may differ
        result.notes.append(head + ", so a plain run's outputs may differ from these.")
        return
    worst, where = _worst_difference(result.values, plain)
    if worst == 0.0:
        return
    result.values.update((name, value) for name, value in plain.items()
                         if name in result.values and isinstance(value, np.ndarray))
    result.notes.append(f"the graph outputs shown are those of a plain onnxruntime run: {head}, and the outputs "
                        f"computed from those values differ from them by up to {worst:.4g} (max abs, "
                        f"'{display_name(where, 80)}').")


def with_external_data(model: onnx.ModelProto, data_dir: Path | None) -> onnx.ModelProto:
    """``model`` with the data of its externally stored tensors read in from ``data_dir`` (itself when
    there is none): the reference evaluator and the If/Loop/Scan bodies need the values in memory."""
    from onnxviz.model.io.external import is_external, iter_all_tensors

    if data_dir is None or not any(is_external(t) for t in iter_all_tensors(model)):
        return model
    onnx.load_external_data_for_model(model, str(data_dir))
    return model


def node_label(graph: onnx.GraphProto, position: int) -> str:
    """How an error names a main-graph node: 'node 'name' (Op)', or 'the Op node at position 3'."""
    node = graph.node[position]
    return node_text(node.name, node.op_type, position)


def node_text(name: str, op_type: str, position: int) -> str:
    if name:
        return f"node '{display_name(name, 80)}' ({display_name(op_type, 40)})"
    return f"the {display_name(op_type, 40)} node at position {position}"


def _failure(prepared: Prepared, session: bool, exc: BaseException) -> RunError:
    """onnxruntime's error as a RunError naming the failing node (by its own name, not the copy's)."""
    name = ort_node_name(str(exc))
    position = prepared.node_positions.get(name, -1) if name is not None else -1
    kind = RunError if session else NodeFailed
    if position < 0:  # no name, or a node inside an If/Loop/Scan body: named, not selectable
        what = "session creation failed" if session else "a node failed"
        if name:
            what = f"session creation failed at node '{display_name(name, 80)}'" if session \
                else f"node '{display_name(name, 80)}' failed"
        return kind(f"{what}: {engine_message(exc)}", str(exc))
    node = prepared.model.graph.node[position]
    label = node_text(prepared.original_names.get(position, node.name), node.op_type, position)
    what = f"session creation failed at {label}" if session else f"{label} failed"
    inner = KERNEL_FAILURE.findall(str(exc))[1:]  # an If/Loop/Scan's message wraps its body's failing node
    if inner:
        what += f" (at node '{display_name(inner[-1], 80)}' inside it)"
    return kind(f"{what}: {engine_message(exc)}", str(exc), position)


@dataclass
class Prepared:
    """The copy onnxruntime runs: every node output reachable, nodes uniquely named."""

    model: onnx.ModelProto
    node_positions: dict[str, int]  # node name -> position, for the profiler's events
    packs: list[Pack] = field(default_factory=list)
    producers: dict[str, int] = field(default_factory=dict)  # value -> position of the node that makes it
    original_names: dict[int, str] = field(default_factory=dict)  # position -> name, of nodes renamed here


def prepare_model(model: onnx.ModelProto, capture_all: bool,
                  shapes: Mapping[str, tuple[int, tuple[int, ...]]] | None = None,
                  keep: frozenset[str] | None = None) -> Prepared:
    """A copy whose graph outputs include every node output (those of ``keep`` when given) and
    whose nodes have unique names.

    With ``shapes`` (see :func:`~onnxviz.model.runner.packing.static_shapes`), small values of a
    known shape are fetched packed (see :mod:`onnxviz.model.runner.packing`) instead of one by one.
    """
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    graph = copy.graph
    # One walk over the nodes: reading protobuf fields from Python costs about a microsecond
    # each, and every further walk over a 12k-node graph cost 5-15 ms.
    positions: dict[str, int] = {}
    producers: dict[str, int] = {}  # value -> node position
    renamed: dict[int, str] = {}
    for i, node in enumerate(graph.node):
        name = node.name
        if not name or name in positions:
            renamed[i] = name
            name = node.name = f"{name or node.op_type}__onnxviz{i}"
        positions[name] = i
        for value in node.output:
            if value:
                producers[value] = i
    if not capture_all:
        return Prepared(copy, positions, producers=producers, original_names=renamed)
    declared = {v.name: v for v in graph.value_info}
    present = {o.name for o in graph.output} | {i.name for i in graph.input}
    wanted = [name for name in producers if name not in present and (keep is None or name in keep)]
    packs: list[Pack] = []
    if shapes and _has_onnx_opset(copy):
        taken = {*producers, *positions, *(v.name for v in graph.input), *(t.name for t in graph.initializer)}
        packs = plan_packs(wanted, shapes, taken)
    packed = {name for pack in packs for name in pack.members}
    graph.output.extend(declared.get(name) or onnx.ValueInfoProto(name=name) for name in wanted if name not in packed)
    add_packs(graph, packs)
    return Prepared(copy, positions, packs, producers, renamed)


def _has_onnx_opset(model: onnx.ModelProto) -> bool:
    return any(o.domain in ("", "ai.onnx") and o.version >= 4 for o in model.opset_import)


# onnxruntime reads tensors stored externally from this folder when the model comes as bytes: it maps
# the files instead of holding a copy (a 2 GB weights file: 30 MB of the worker's own memory, not 9 GB)
EXTERNAL_FOLDER_KEY = "session.model_external_initializers_file_folder_path"


def _session_options(options: RunOptions, scratch_dir: Path | None, packed: bool,  # noqa: ANN202 - ort type
                     data_dir: Path | None = None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    if data_dir is not None:
        so.add_session_config_entry(EXTERNAL_FOLDER_KEY, str(data_dir))
    # Packed members live until their Concat at the end: onnxruntime's memory pattern, planned on
    # the first run over every live block, then costs far more than the one run saves (1 s at 12k).
    so.enable_mem_pattern = not packed
    # A captured run keeps every value: its arena grows region by region and gives nothing back to
    # reuse; plain allocations are faster for that one run (shufflenet: first run 20 -> 5 ms).
    so.enable_cpu_mem_arena = not options.capture
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if options.optimized
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.log_severity_level = 4
    if options.threads:
        so.intra_op_num_threads = options.threads
    if options.profile:
        so.enable_profiling = True
        so.profile_file_prefix = str((scratch_dir or Path(".")) / "onnxviz_profile")
    return so


class _MappingFailed(RunError):
    """Session creation failed for a model whose external weights onnxruntime was to map from their folder."""


class _PackFailed(Exception):
    """A packed run failed in a node it added or gave a pack of the wrong size."""


# Packing pays once onnxruntime would hand back this many values one by one: below it, the shape
# inference that plans the packs costs more than it saves (capture of densenet121, 1.7k values:
# 113 ms packed vs 98 ms not; synth 300 layers, 12k: even; 123k: 15 s vs 42 s, session included).
PACK_MIN_VALUES = 10_000


def packing_shapes(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], options: RunOptions,
                   progress: ProgressFn = no_progress,
                   known: Mapping[str, tuple[int, tuple[int, ...]]] | None = None
                   ) -> Mapping[str, tuple[int, tuple[int, ...]]]:
    """Shapes to plan packs with (see :mod:`onnxviz.model.runner.packing`): ``known`` when the
    caller inferred them; empty when packing is off or does not pay for a graph this small."""
    values = sum(len(node.output) for node in model.graph.node) if options.keep is None else len(options.keep)
    if not (options.capture and options.pack) or values < PACK_MIN_VALUES:
        return {}
    if known is not None:
        return known
    progress(0.05, PLANNING)
    return static_shapes(model, feeds)


def _run_ort_packed(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], options: RunOptions,
                    progress: ProgressFn, result: Captured, scratch_dir: Path | None,
                    data_dir: Path | None = None,
                    known: Mapping[str, tuple[int, tuple[int, ...]]] | None = None) -> None:
    """Run with small values packed; if packing is what failed, run again without it. An optimized capture
    runs onnxruntime's optimized graph (see :func:`_run_ort_optimized`)."""
    if options.optimized and options.capture:
        _run_ort_optimized(model, feeds, options, progress, result, scratch_dir, data_dir)
        return
    t0 = time.perf_counter()
    shapes = packing_shapes(model, feeds, options, progress, known)
    result.timings["shapes_s"] = time.perf_counter() - t0
    keep = options.keep
    try:
        _run_ort(prepare_model(model, options.capture, shapes, keep), feeds, options, progress, result,
                 scratch_dir, data_dir)
    except _PackFailed as exc:
        result.notes.append(f"small values could not be fetched packed ({exc}); each was fetched on its own.")
        _run_ort(prepare_model(model, options.capture, keep=keep), feeds, options, progress, result, scratch_dir,
                 data_dir)


# onnxruntime's optimized graph is saved to a file and read back: beyond this many bytes of weights, which
# one protobuf file holds with room to spare, an optimized capture is refused
OPTIMIZED_CAPTURE_BYTES = 1 << 30


def _run_ort_optimized(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], options: RunOptions,
                       progress: ProgressFn, result: Captured, scratch_dir: Path | None,
                       data_dir: Path | None) -> None:
    """The values of an optimized session: onnxruntime optimizes the model (every level on) and saves the
    graph it made; each value of the model that still has its name there becomes an output of that graph,
    which then runs as saved (nothing optimized again). Values fused into other nodes or removed by the
    optimizer have no name left and are not captured; the notes say how many."""
    import onnxruntime as ort

    if _weight_bytes(model) > OPTIMIZED_CAPTURE_BYTES:
        raise RunError("an optimized session's values can be captured for models of up to 1 GiB of weights; run "
                       "it optimized without capturing (its outputs only), or capture it without graph optimizations.")
    progress(0.1, "Optimizing the model with onnxruntime")
    with tempfile.TemporaryDirectory(prefix="onnxviz-optimized-", dir=scratch_dir) as folder:
        path = Path(folder) / "optimized.onnx"
        so = _session_options(replace(options, capture=False, profile=False), None, False, data_dir)
        so.optimized_model_filepath = str(path)
        try:
            ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own pybind types
            raise _failure(prepare_model(model, False), True, exc) from exc
        try:
            optimized = onnx.load(str(path))
        except Exception as exc:  # noqa: BLE001 - a file onnxruntime wrote that onnx cannot read
            raise RunError("the optimized graph onnxruntime made could not be read back to capture its values; "
                           "run it optimized without capturing, or capture it without graph optimizations.",
                           str(exc)) from exc
    original = _producers(model)
    made = {name for node in optimized.graph.node for name in node.output if name}
    wanted = {name for name in original if name in made and (options.keep is None or name in options.keep)}
    prepared = prepare_model(optimized, True, keep=frozenset(wanted))
    _run_ort(prepared, feeds, replace(options, optimized=False), progress, result, scratch_dir)
    positions = {node.name: i for i, node in enumerate(model.graph.node) if node.name}
    names = {i: name for name, i in prepared.node_positions.items()}
    result.node_times_us = {positions[names[i]]: us for i, us in result.node_times_us.items()
                            if names.get(i) in positions}
    result.producers.update((name, original.get(name, -1)) for name, engine in result.engines.items()
                            if engine == ENGINE_ORT)
    result.optimized = True
    kept = sum(1 for name in original if name in result.values or name in result.structured)
    result.notes.append(f"graph optimizations on: onnxruntime's optimized graph has {len(optimized.graph.node)} nodes "
                        f"for the model's {len(model.graph.node)}; the {kept} values that still exist there under "
                        f"their names were captured from it, the other {len(original) - kept} were fused into other "
                        "nodes or removed.")


def _run_ort(prepared: Prepared, feeds: Mapping[str, np.ndarray], options: RunOptions, progress: ProgressFn,
             result: Captured, scratch_dir: Path | None, data_dir: Path | None = None) -> None:
    import onnxruntime as ort

    progress(0.1, "Creating the onnxruntime session")
    t0 = time.perf_counter()
    try:
        so = _session_options(options, scratch_dir, packed=bool(prepared.packs), data_dir=data_dir)
        session = ort.InferenceSession(prepared.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own pybind types
        if prepared.packs and PACK_PREFIX in str(exc):
            raise _PackFailed("the packing node was refused") from exc
        if data_dir is not None and "external" in str(exc).lower():
            raise _MappingFailed(engine_message(exc), str(exc)) from exc
        raise _failure(prepared, True, exc) from exc
    t1 = time.perf_counter()
    progress(0.3, "Running on onnxruntime")
    wanted = {i.name for i in session.get_inputs()}
    outputs = session.get_outputs()
    feeds = {k: v for k, v in feeds.items() if k in wanted}
    try:
        fetched = _fetch(session, [o.name for o in outputs], feeds,
                         tensors_only=all(o.type.startswith("tensor(") for o in outputs))
    except Exception as exc:  # noqa: BLE001
        if prepared.packs and PACK_PREFIX in str(exc):
            raise _PackFailed("a packing node failed") from exc
        raise _failure(prepared, False, exc) from exc
    t2 = time.perf_counter()
    arrays = {out.name: _as_array(value) for out, value in zip(outputs, fetched, strict=True)}
    try:
        packed = unpack(prepared.packs, arrays)
    except PackMismatch as exc:
        raise _PackFailed(f"a pack had an unexpected size: {exc}") from exc
    _keep_fetched(prepared, outputs, arrays, packed, result)
    result.timings.update(session_s=t1 - t0, run_s=t2 - t1, fetch_s=time.perf_counter() - t2)
    result.engine = ENGINE_ORT
    result.optimized = options.optimized
    if options.profile:
        result.node_times_us = _node_times(session.end_profiling(), prepared.node_positions)


def _as_array(value: Any) -> Any:
    """A fetched value as numpy: tensors as they are, sparse ones (a Constant's sparse_value) made
    dense; sequences and maps as onnxruntime gave them."""
    import onnxruntime as ort

    if isinstance(value, ort.OrtValue):
        if value.is_sparse_tensor():
            return dense_of_sparse(value.as_sparse_tensor())
        return ortvalue_array(value) if value.is_tensor() else value
    if type(value).__name__ == "SparseTensor" and not isinstance(value, ort.SparseTensor):  # run()'s own type
        return dense_of_sparse(ort.SparseTensor(value))
    return value


def dense_of_sparse(sparse: Any) -> Any:
    """An onnxruntime SparseTensor (COO or CSR) as a dense array; itself in another format (not captured)."""
    import onnxruntime as ort

    shape = tuple(int(d) for d in sparse.dense_shape())
    values = np.asarray(sparse.values())
    fmt = sparse.format()
    if fmt == ort.OrtSparseFormat.ORT_SPARSE_COO:
        indices = np.asarray(sparse.as_coo_view().indices(), np.int64)
        flat = indices if indices.ndim == 1 else np.ravel_multi_index(tuple(indices.reshape(-1, len(shape)).T), shape)
    elif fmt == ort.OrtSparseFormat.ORT_SPARSE_CSRC and len(shape) == 2:
        view = sparse.as_csrc_view()
        outer = np.asarray(view.outer(), np.int64)
        rows = np.repeat(np.arange(len(outer) - 1), np.diff(outer))
        flat = rows * shape[1] + np.asarray(view.inner(), np.int64)
    else:
        return sparse
    dense = np.zeros(math.prod(shape), values.dtype)
    dense[flat] = values
    return dense.reshape(shape)


def _keep_fetched(prepared: Prepared, outputs: list[Any], arrays: dict[str, Any], packed: dict[str, np.ndarray],
                  result: Captured) -> None:
    pack_outputs = {pack.output for pack in prepared.packs}
    producers = prepared.producers
    special = _special_dtypes()
    skipped = 0
    for out in outputs:
        if out.name in pack_outputs:
            continue
        array = arrays[out.name]
        if array is None or is_structured(array):  # sequences, maps and empty optionals from run()
            _keep_structured(result, out.name, array, ENGINE_ORT, producers.get(out.name, -1))
            continue
        if not isinstance(array, np.ndarray):  # a block-sparse value
            skipped += 1
            continue
        target = special.get(out.type)
        result.values[out.name] = array if target is None else _as_onnx_dtype(array, target)
        result.engines[out.name] = ENGINE_ORT
        result.producers[out.name] = producers.get(out.name, -1)
    result.values.update(packed)
    result.engines.update(dict.fromkeys(packed, ENGINE_ORT))
    result.producers.update((name, producers.get(name, -1)) for name in packed)
    if skipped:
        result.notes.append(f"{skipped} block-sparse values were not captured.")


def _keep_structured(result: Captured, name: str, value: Any, engine: str, node: int) -> None:
    result.structured[name] = jsonable(value)
    result.engines[name] = engine
    result.producers[name] = node


def _fetch(session: Any, names: list[str], feeds: Mapping[str, Any], tensors_only: bool) -> list[Any]:
    """OrtValues, so the run itself does not copy every value into numpy (that happens once, after);
    ``run`` when a feed cannot be an OrtValue (strings, sequences, maps) or some output is not a tensor.
    ml_dtypes feeds (bfloat16, float8) go in as OrtValues of their ONNX type either way."""
    if tensors_only and all(can_feed_as_ortvalue(v) for v in feeds.values()):
        try:
            ort_feeds = {k: to_ortvalue(v) for k, v in feeds.items()}
        except ValueError:  # a 4-bit input: run() below refuses it in one message
            pass
        else:
            return list(session.run_with_ort_values(names, ort_feeds))
    return session.run(names, {k: _run_feed(v) for k, v in feeds.items()})


def _run_feed(value: Any) -> Any:
    if isinstance(value, np.ndarray) and onnx_type_of(value) is not None:
        try:
            return to_ortvalue(value)
        except ValueError:
            return value
    return value


@functools.cache
def _special_dtypes() -> dict[str, type]:
    """onnxruntime types it hands back as raw bytes -> the ml_dtypes type to view them as."""
    import ml_dtypes

    return {"tensor(float8e4m3fn)": ml_dtypes.float8_e4m3fn, "tensor(float8e4m3fnuz)": ml_dtypes.float8_e4m3fnuz,
            "tensor(float8e5m2)": ml_dtypes.float8_e5m2, "tensor(float8e5m2fnuz)": ml_dtypes.float8_e5m2fnuz,
            "tensor(bfloat16)": ml_dtypes.bfloat16}


def _as_onnx_dtype(array: np.ndarray, target: type) -> np.ndarray:
    if array.dtype.itemsize == np.dtype(target).itemsize and array.dtype != target:
        return array.view(target)
    return array


def _node_times(profile_path: str, names: dict[str, int]) -> dict[int, float]:
    """Microseconds per node position from onnxruntime's profile (kernel time events)."""
    times: dict[int, float] = {}
    try:
        with open(profile_path, encoding="utf-8") as f:
            events = json.load(f)
    except (OSError, ValueError):
        return times
    finally:
        if os.path.exists(profile_path):
            os.unlink(profile_path)
    for event in events:
        name = event.get("name", "")
        if event.get("cat") != "Node" or not name.endswith("_kernel_time"):
            continue
        i = names.get(name[: -len("_kernel_time")])
        if i is not None:
            times[i] = times.get(i, 0.0) + float(event.get("dur", 0))
    return times


def _run_reference(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], options: RunOptions,
                   progress: ProgressFn, result: Captured) -> None:
    progress(0.3, "Running on the reference evaluator")
    t0 = time.perf_counter()
    evaluator: Any = None
    try:
        evaluator = _tracked_evaluator()(model)
        wanted = set(evaluator.input_names)
        feeds = {k: v for k, v in feeds.items() if k in wanted}
        with np.errstate(all="ignore"), warnings.catch_warnings():  # NaN and Inf are values the model makes;
            warnings.simplefilter("ignore")  # an operator's own warnings (a locale it lacks) are not the user's
            if options.capture:
                produced = cast(dict[str, Any], evaluator.run(None, feeds, intermediate=True))
            else:
                produced = dict(zip(evaluator.output_names, evaluator.run(None, feeds), strict=True))
    except Exception as exc:  # noqa: BLE001 - any operator implementation can raise anything
        running = evaluator.running if evaluator is not None else []
        position = _producers(model).get(running[0], -1) if running else -1
        where = f"{node_label(model.graph, position)}: " if position >= 0 else ""
        raise RunError(where + engine_message(exc), str(exc), position) from exc
    result.timings.update(session_s=0.0, run_s=time.perf_counter() - t0)
    producers = _producers(model)
    keep = options.keep
    for name, value in produced.items():
        if name not in producers and name not in result.outputs:
            continue  # initializers and constants
        if keep is not None and name not in keep and name not in result.outputs:
            continue  # not in the part chosen to capture
        if isinstance(value, np.generic):
            value = np.asarray(value)
        if value is None or is_structured(value):
            _keep_structured(result, name, value, ENGINE_REFERENCE, producers.get(name, -1))
            continue
        if not isinstance(value, np.ndarray):
            continue
        result.values[name] = value
        result.engines[name] = ENGINE_REFERENCE
        result.producers[name] = producers.get(name, -1)
    result.engine = ENGINE_REFERENCE


@functools.cache
def _tracked_evaluator() -> type:
    from onnx.reference import ReferenceEvaluator

    class TrackedEvaluator(ReferenceEvaluator):
        """Remembers the outputs of the node it runs (from the line it logs before each node), so a
        failure can name its node."""

        running: list[str] = []

        def _log(self, level: int, pattern: str, *args: Any) -> None:
            if level == 1 and len(args) == 3 and not isinstance(args[2], str):
                self.running = [str(name) for name in args[2] if name]
            super()._log(level, pattern, *args)

    return TrackedEvaluator


def _producers(model: onnx.ModelProto) -> dict[str, int]:
    return {name: i for i, node in enumerate(model.graph.node) for name in node.output if name}


def _finish(model: onnx.ModelProto, result: Captured, options: RunOptions, progress: ProgressFn,
            data_dir: Path | None = None) -> Captured:
    bodies = options.capture and any(n.op_type in ("If", "Loop", "Scan") for n in model.graph.node)
    functions = options.capture and bool(model.functions)
    if result.optimized and (bodies or functions):  # not the optimized session's values: not shown with them
        result.notes.append("values inside If/Loop/Scan bodies and local functions are not captured from an "
                            "optimized session.")
        bodies = functions = False
    if bodies or functions:  # run on the reference evaluator: weights in memory
        model = with_external_data(model, data_dir)
    if bodies:
        progress(0.5, "Running If/Loop/Scan bodies on the reference evaluator")
        t0 = time.perf_counter()
        result.bodies = list(run_bodies(model, "", model.graph, result.values, result.notes))
        result.timings["bodies_s"] = time.perf_counter() - t0
    if functions:
        progress(0.55, "Running local functions on the reference evaluator")
        t0 = time.perf_counter()
        result.bodies += run_functions(model, result.values, result.notes)
        result.timings["functions_s"] = time.perf_counter() - t0
    if options.capture and options.keep is not None:
        made = sum(1 for node in model.graph.node for name in node.output if name)
        kept = sum(1 for name, node in result.producers.items() if node >= 0)
        result.notes.append(f"a part was captured: {kept} of {made} node outputs (the chosen part and the graph "
                            "outputs); the others were computed, not kept.")
    missing = [o for o in result.outputs if o and o not in result.values and o not in result.structured]
    if missing:
        result.notes.append(f"graph output '{missing[0]}' was not produced as a tensor.")
    return result
