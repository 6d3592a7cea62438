"""What onnxruntime refuses when it creates a session, as a problem on the node concerned.

onnxruntime checks more than ``onnx.checker`` and shape inference: attribute values its kernels
cannot use, node names given twice, operators or types it does not implement. A session is
created (CPU, graph optimizations off, nothing run) on the model without its big weights
(:func:`~onnxviz.model.graph.slim.without_big_weights`: they become typed inputs, so no weight is
copied into onnxruntime and no external data file is ever opened). Its messages often name the
node; a kernel that refuses its attributes does not, and then the node is found by creating a
session for each kind of node alone (a fraction of a millisecond each, within a time budget).

Refusals that only say onnxruntime lacks something (an operator, an opset, a type) are warnings,
"onnxruntime cannot run this"; others are errors. An IR version newer than the installed onnxruntime
reads is such a warning too, on the whole model, said in onnxviz's words (the model is valid ONNX; a
newer onnxruntime reads it). Models of more than :data:`SESSION_MAX_NODES`
nodes are not checked (a session takes seconds there): a note says so.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import onnx
from onnx import GraphProto, ModelProto, NodeProto, TypeProto

from onnxviz.model.graph.inference import infer_types
from onnxviz.model.graph.node_messages import named_node, node_table
from onnxviz.model.graph.ort_messages import engine_message
from onnxviz.model.graph.slim import without_big_weights
from onnxviz.model.io.external import is_external, iter_all_tensors
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.text import display_name

SOURCE = "onnxruntime"
SESSION_MAX_NODES = 50_000  # about 2 s of session creation (12k nodes: ~0.5 s)
SLIM_ABOVE = 64 << 20  # bytes: bigger models always reach onnxruntime without their big weights
LOCATE_BUDGET_S = 2.0  # for finding the node of a message that names none
# onnxruntime's ways of saying it lacks something (the model may well be right): operators, types,
# opsets, features (batchwise RNN layout), element types (complex64 tensors), or this machine's locales
# (StringNormalizer)
_UNSUPPORTED = ("NOT_IMPLEMENTED", "No Op registered for", "is not a registered function/op",
                "Could not find an implementation", "Failed to find kernel",
                "only *guarantees* support", "is till opset", "is under development", "not supported",
                "Failed to construct locale", "is not currently registered or supported")
_IR_TOO_NEW = re.compile(r"Unsupported model IR version: (\d+), max supported IR version: (\d+)")


def skipped_note(proto: ModelProto) -> Problem | None:
    """The note that onnxruntime's check is skipped for a model of more than :data:`SESSION_MAX_NODES` nodes
    (decided without starting a process for it), or None when it is checked."""
    nodes = len(proto.graph.node)
    if nodes <= SESSION_MAX_NODES:
        return None
    return Problem(Severity.INFO, f"onnxruntime's check was skipped: the model has {nodes:,} nodes, more than "
                                  f"the {SESSION_MAX_NODES:,} checked while editing.", SOURCE)


def runtime_problems(proto: ModelProto, data: bytes | None = None, light: bytes | None = None,
                     made: list[object] | None = None) -> list[Problem]:
    """What onnxruntime refuses in the model (``proto``, serialized as ``data`` when the caller has its
    bytes); ``light`` is the model without its big weights when the caller has it already. Never raises.
    ``made``: the session created is put there for the caller to free, instead of being freed before the answer
    (12k nodes: ~70 ms, see :func:`~onnxviz.model.background.jobs.runtime_job`)."""
    skipped = skipped_note(proto)
    if skipped is not None:
        return [skipped]
    try:
        model = light if light is not None and light is not data else \
            without_big_weights(proto, data, force=data is None or len(data) > SLIM_ABOVE)
    except Exception:  # noqa: BLE001 - a model too odd to slim down is left to the other checks
        return []
    if b"location" in model and _reads_files(ModelProto.FromString(model)):
        return [Problem(Severity.INFO, "onnxruntime's check was skipped: a subgraph, a node attribute or a sparse "
                                       "initializer stores its tensor in an external file.", SOURCE)]
    try:
        session = _session(model)
    except ImportError:
        return []
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own pybind types
        return [_refusal(model, exc)]
    if made is not None:
        made.append(session)
    return []


def _reads_files(model: ModelProto) -> bool:
    """Whether a session would open an external data file (its path relative to the current folder)."""
    sparse = [part for t in model.graph.sparse_initializer for part in (t.values, t.indices)]
    return any(is_external(t) for t in (*iter_all_tensors(model), *sparse))


def _session(model: bytes | ModelProto) -> object:
    """onnxruntime's session of ``model`` (raises what onnxruntime raises)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    so.enable_mem_pattern = False  # planned for runs; none comes (12k nodes: -20% of the session's time)
    so.enable_mem_reuse = False  # the same (12k nodes: -14% of the session's instructions)
    so.add_session_config_entry("session.disable_prepacking", "1")  # no copies of weights
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _refusal(model: bytes, exc: Exception) -> Problem:
    raw = " ".join(str(exc).split())
    too_new = _IR_TOO_NEW.search(raw)
    if too_new is not None:
        return _ir_refusal(int(too_new[1]), int(too_new[2]))
    unsupported = any(mark in raw for mark in _UNSUPPORTED)
    lead = "onnxruntime cannot run this" if unsupported else "onnxruntime refuses this model"
    message = f"{lead}: {display_name(engine_message(exc), None)}."
    severity = Severity.WARNING if unsupported else Severity.ERROR
    proto = ModelProto.FromString(model)
    found = named_node(raw, node_table(proto, None))
    if found is None:
        found = _locate(proto, raw, engine_message(exc))
    if found is None:
        return Problem(severity, message, SOURCE)
    (scope, i), name = found
    return Problem(severity, message, SOURCE, scope, i, name)


def _ir_refusal(version: int, newest: int) -> Problem:
    """The installed onnxruntime loads no model of IR ``version`` (it reads up to ``newest``): no session
    of it, so runs go to the reference evaluator."""
    import onnxruntime as ort

    return Problem(Severity.WARNING, f"onnxruntime {ort.__version__} cannot run this model: its IR version {version} "
                                     f"is newer than the {newest} it reads (runs use the reference evaluator).", SOURCE)


# -- finding the node of a message that names none ---------------------------------------------
def _locate(model: ModelProto, raw: str, message: str) -> tuple[tuple[str, int], str] | None:
    """The main-graph node that, in a model of its own, fails with the same ``message``.

    Nodes of the operators the raw text mentions (e.g. "LSTMBase") are tried first; nodes alike
    (operator, attributes, input types) only once; the search stops after :data:`LOCATE_BUDGET_S`.
    """
    deadline = time.monotonic() + LOCATE_BUDGET_S
    if _fails_alike(_empty_like(model), message):
        return None  # about the model itself (its IR version, an opset), not one of its nodes
    types = _known_types(model)
    small = {t.name: t for t in model.graph.initializer}
    tried: set[bytes] = set()
    for i in _candidates(model.graph, raw.lower()):
        if time.monotonic() > deadline:
            return None
        alone = _alone(model, model.graph.node[i], types, small)
        if alone is None or (key := _kind(alone)) in tried:
            continue
        tried.add(key)
        if _fails_alike(alone, message):
            return ("", i), model.graph.node[i].name
    return None


def _fails_alike(model: ModelProto, message: str) -> bool:
    try:
        _session(model)
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own pybind types
        return engine_message(exc) == message
    return False


def _empty_like(model: ModelProto) -> ModelProto:
    """A model with the same versions and no node: its input is its output."""
    value = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])
    graph = GraphProto(name="empty", input=[value], output=[value])
    return ModelProto(ir_version=model.ir_version, opset_import=model.opset_import, graph=graph)


def _candidates(graph: GraphProto, raw: str) -> Iterator[int]:
    named = [i for i, n in enumerate(graph.node) if n.op_type and n.op_type.lower() in raw]
    yield from named
    others = set(named)
    yield from (i for i in range(len(graph.node)) if i not in others)


def _known_types(model: ModelProto) -> dict[str, TypeProto]:
    graph = model.graph
    types = dict(infer_types(model).types.get("", {}))
    for v in (*graph.input, *graph.value_info, *graph.output):
        if v.HasField("type"):
            types.setdefault(v.name, v.type)
    return types


def _alone(model: ModelProto, node: NodeProto, types: dict[str, TypeProto],
           small: dict[str, onnx.TensorProto]) -> ModelProto | None:
    """A model of ``node`` alone: its inputs typed graph inputs (small constants kept), its
    outputs untyped; None when a type is unknown or the node has a subgraph."""
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return None
    graph = GraphProto(name="alone", node=[node])
    for name in dict.fromkeys(n for n in node.input if n):
        if name in small:
            graph.initializer.append(small[name])
        elif name in types:
            graph.input.append(onnx.ValueInfoProto(name=name, type=types[name]))
        else:
            return None
    graph.output.extend(onnx.ValueInfoProto(name=name) for name in node.output if name)
    return ModelProto(ir_version=model.ir_version, opset_import=model.opset_import, graph=graph)


def _kind(alone: ModelProto) -> bytes:
    """What a node alone is, names aside: nodes alike fail alike."""
    node = alone.graph.node[0]
    parts = [node.domain.encode(), node.op_type.encode(), *(a.SerializeToString() for a in node.attribute)]
    parts += [v.type.SerializeToString() for v in alone.graph.input]
    parts += [t.SerializeToString() for t in alone.graph.initializer]
    return b"\0".join(parts)
