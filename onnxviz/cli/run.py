"""``onnxviz run FILE ...``: run on CPU in the worker process, print the outputs' statistics."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from onnxviz.cli import output
from onnxviz.model.graph.index import ModelIndex, index_escaping_text
from onnxviz.model.graph.tensors import RawLengths
from onnxviz.model.io.disk import reason
from onnxviz.model.io.loading import read_model_file
from onnxviz.model.runner import (
    ENGINE_ORT,
    ENGINE_REFERENCE,
    RunError,
    RunOptions,
    RunResult,
    run_model,
    too_new,
    warm_up,
)
from onnxviz.model.runner.budget import CaptureTooBig, upstream_values
from onnxviz.model.runner.input_files import read_array_file, read_inputs
from onnxviz.model.runner.inputs import InputSpec, conversion_note, input_specs, parse_dims, unknown_input
from onnxviz.model.runner.sizes import expression_names, inputs_to_run
from onnxviz.model.runner.store import ValueRecord
from onnxviz.model.text import display_name

ENGINE_NAMES = {"ort": ENGINE_ORT, "reference": ENGINE_REFERENCE}
SLOWEST = 10  # nodes listed by --profile
NAME_WIDTH = 60  # a longer node name is cut so the columns stay aligned
VALUES_LIMIT = 1000  # elements of an output --values shows by default


@dataclass(frozen=True)
class NodeTime:
    """One main-graph node's kernel time from onnxruntime's profiler; ``share`` of all nodes' time."""

    position: int
    name: str
    op_type: str
    ms: float
    share: float

    @property
    def label(self) -> str:
        """The node's name, or its op type and position when it has none."""
        return display_name(self.name, NAME_WIDTH) if self.name else f"{self.op_type} node {self.position}"


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = ("Run a model on CPU (onnxruntime, or the ONNX reference evaluator) in a separate "
                          "process and print its outputs' statistics. Inputs not given are random (seeded).")
    parser.add_argument("file", help="an .onnx model file")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=PATH",
                        help="an input from .npy, .npz or TensorProto .pb (repeatable)")
    parser.add_argument("--inputs", metavar="PATH", help="an .npz of arrays named after the graph inputs, or a "
                        "folder of input_N.pb TensorProto files (the onnx test data layout)")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                        help="size of a dimension of the generated inputs, by name or as INPUT[AXIS] (repeatable); "
                             "the others are chosen: sizes the graph suggests, else 1, and others tried when those "
                             "do not run")
    parser.add_argument("--seed", type=_seed, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--dump", metavar="DIR", help="write every captured value into DIR/values.bin, each one's offset, "
                        "dtype and shape in DIR/index.json (strings as .npy files)")
    parser.add_argument("--capture", metavar="PART",
                        help="what --dump keeps: 'all' (every value, even when it may not fit in memory), 'outputs' "
                             "(the graph outputs only) or 'upstream-of:NODE' (NODE's outputs and every value above "
                             "it); by default every value, refused when the estimate says it will not fit")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--values", nargs="?", type=_seed, const=VALUES_LIMIT, default=0, metavar="LIMIT",
                        help=f"also print the values of each output of at most LIMIT elements (default {VALUES_LIMIT})")
    parser.add_argument("--optimized", action="store_true",
                        help="enable onnxruntime graph optimizations; with --dump, the values that still exist "
                             "under their names in the optimized graph")
    parser.add_argument("--engine", choices=sorted(ENGINE_NAMES), default="ort",
                        help="the engine tried first (onnxruntime falls back to the reference evaluator)")
    parser.add_argument("--allow-newer", action="store_true",
                        help="run a model that declares an IR or opset version newer than onnx and onnxruntime know "
                             "(refused without it: neither engine knows what its operators mean there)")
    parser.add_argument("--profile", action="store_true",
                        help=f"record per-node run times (onnxruntime's profiler) and print the {SLOWEST} slowest "
                             "nodes after the outputs' statistics")
    return run


@dataclass(frozen=True)
class _Model:
    """The model file as read (text that is not valid UTF-8 escaped, as the window shows it) and its index: what
    a run needs of it, without the window's document (its editing and saving modules are a tenth of the command's
    start)."""

    model: onnx.ModelProto
    index: ModelIndex
    path: Path

    @classmethod
    def read(cls, file: str) -> _Model:
        path = Path(file).absolute()
        model, data = read_model_file(path)
        return cls(model, index_escaping_text(model, RawLengths(data))[0], path)


def run(args: argparse.Namespace) -> int:
    warm_up()  # the runner process imports onnxruntime while this one reads and checks the model
    doc = _Model.read(args.file)
    newer = too_new(doc.model)
    if newer and not args.allow_newer:
        raise RunError(f"{newer.rstrip('.')}; --allow-newer runs it anyway.")
    if newer:
        output.note(newer)
    keep, check = _capture_choice(args.capture, doc.model)
    specs = input_specs(doc.model, doc.index)
    given = _given_inputs(args, specs)
    # first: a refused input says so alone, before any note
    feeds, generated = inputs_to_run(specs, given, parse_dims(args.dim), "random", args.seed)
    for spec in specs:
        note = conversion_note(spec, given[spec.name]) if spec.name in given else ""
        if note:
            output.note(note)
    options = RunOptions(engine=ENGINE_NAMES[args.engine], optimized=args.optimized, profile=args.profile,
                         capture=bool(args.dump) or args.profile, keep=keep, check_memory=check)
    dump = _dump_folder(args.dump) if args.dump else None
    try:
        result = run_model(doc.model, feeds, options, index=doc.index, base_dir=doc.path.parent, out_dir=dump,
                           generated=generated)
    except CaptureTooBig as exc:
        raise RunError(f"{exc.message}; capture a part with --capture outputs or --capture upstream-of:NODE "
                       "(or --capture all to try anyway).") from exc
    except RunError as exc:
        raise _with_partial(exc, dump) from exc
    try:
        chosen = chosen_dims(result)
        if chosen:
            output.note(f"the generated inputs ran with {chosen}")
        slowest = slowest_nodes(result, doc.model.graph) if args.profile else None
        if args.json:
            output.print_json(_json(doc.path.name, result, options, dump, slowest, args.values))
        else:
            output.say(*_text(doc.path.name, result, options, dump, slowest, args.values))
    finally:
        result.cleanup()
    return 0


def chosen_dims(result: RunResult) -> str:
    """``--dim batch=1 --dim sequence=50``: the sizes onnxviz chose for the generated inputs, as the options
    that give them again ('' when the user or the given arrays set every one)."""
    return " ".join(f"--dim {_quoted(name)}={size}" for name, size in result.dims.items()
                    if expression_names(name) is None)


def _quoted(name: str) -> str:
    """A dimension's name as a shell word: quoted when it holds anything but letters, digits and ``_.-``."""
    import re
    import shlex

    return name if re.fullmatch(r"[\w.\-]+", name) else shlex.quote(name)


def _with_partial(error: RunError, dump: Path | None) -> RunError:
    """The run's error, saying where the values computed before the failing node went (--dump)."""
    partial = error.partial
    if partial is None:
        return error
    count = len(partial.values) + len(partial.structured)
    partial.cleanup()  # a --dump folder is the user's: cleanup() leaves it
    if dump is None:
        return error
    return RunError(f"{error.message.rstrip('.')}; the {count} values computed before it were written to {dump} "
                    "(index.json).", error.details, error.node)


def _capture_choice(part: str | None, model: onnx.ModelProto) -> tuple[frozenset[str] | None, bool]:
    """The values to keep (None: all) and whether to check they fit, for ``--capture`` 'all', 'outputs'
    or 'upstream-of:NODE'."""
    if part is None:
        return None, True
    kind, _, name = part.partition(":")
    if part not in ("all", "outputs") and not (kind == "upstream-of" and name):
        raise RunError(f"--capture: '{display_name(part, 80)}' is not all, outputs or upstream-of:NODE.")
    if kind == "all":
        return None, False
    if kind == "outputs":
        return frozenset(), True
    nodes = model.graph.node
    position = next((i for i, n in enumerate(nodes) if n.name == name), -1)
    if position < 0:  # a value's name: its producer
        position = next((i for i, n in enumerate(nodes) if name in n.output), -1)
    if position < 0:
        raise RunError(f"--capture upstream-of: the main graph has no node or value named '{display_name(name, 80)}'.")
    return upstream_values(nodes, position), True


def _seed(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of 0 or more")
    return int(text)


def _dump_folder(path: str) -> Path:
    """``path`` as a folder, made before the run so a bad place is one sentence, not a failed run."""
    dump = Path(path)
    if dump.exists() and not dump.is_dir():
        raise RunError(f"{dump} exists and is not a folder.")
    try:
        dump.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"the folder {dump} could not be made: {reason(exc)}.", str(exc)) from exc
    return dump


def _given_inputs(args: argparse.Namespace, specs: list[InputSpec]) -> dict[str, np.ndarray]:
    """The arrays of --inputs and --input, each checked against its input before it is read."""
    given = read_inputs(args.inputs, specs) if args.inputs else {}
    by_name = {s.name: s for s in specs}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise RunError(f"'{item}' is not NAME=PATH.")
        if name not in by_name:
            raise unknown_input(name, specs)
        given[name] = read_array_file(path, by_name[name])
    return given


def _how(result: RunResult) -> str:
    ms = 1000 * result.timings.get("run_s", 0.0)
    if result.engine == ENGINE_REFERENCE:
        return f"ran on the reference evaluator in {ms:.1f} ms"
    return f"ran on {result.engine} (graph optimizations {'on' if result.optimized else 'off'}) in {ms:.1f} ms"


def slowest_nodes(result: RunResult, graph: onnx.GraphProto, count: int = SLOWEST) -> list[NodeTime]:
    """The ``count`` main-graph nodes with the longest kernel times, slowest first."""
    times = {i: us for i, us in result.node_times_us.items() if 0 <= i < len(graph.node)}
    total = sum(times.values())
    ranked = sorted(times.items(), key=lambda item: (-item[1], item[0]))[:count]
    return [NodeTime(i, graph.node[i].name, graph.node[i].op_type, us / 1000, us / total if total else 0.0)
            for i, us in ranked]


def _profile_text(result: RunResult, slowest: list[NodeTime]) -> list[str]:
    if not slowest:
        if result.engine != ENGINE_ORT:
            return [f"no node times: the profiler times onnxruntime runs only, and this one ran on {result.engine}"]
        return ["no node times were recorded"]
    total_ms = sum(result.node_times_us.values()) / 1000
    header = (f"slowest nodes ({len(slowest)} of {len(result.node_times_us)}, "
              f"{total_ms:.3f} ms of node time in all):")
    rows = [("node", "op type", "ms", "share")]
    rows += [(t.label, display_name(t.op_type, NAME_WIDTH), f"{t.ms:.3f}", f"{100 * t.share:.1f}%") for t in slowest]
    widths = [max(len(row[c]) for row in rows) for c in range(4)]
    return [header] + [f"  {a:<{widths[0]}}  {b:<{widths[1]}}  {c:>{widths[2]}}  {d:>{widths[3]}}"
                       for a, b, c, d in rows]


def _text(name: str, result: RunResult, options: RunOptions, dump: Path | None,
          slowest: list[NodeTime] | None = None, values: int = 0) -> list[str]:
    lines = [f"{name}: {_how(result)}", f"inputs: {result.inputs_text() or 'none'}"]
    lines += [f"note: {n}" for n in result.notes]
    lines += [f"  inside {scope} (reference evaluator): {shown}" for scope, shown in result.scopes.items()]
    for out in result.outputs:
        r = result.values.get(out)
        structured = result.structured.get(out)
        shown = _stats_text(r) if r else structured["kind"] if structured else "not produced"
        lines.append(f"  {out}: {shown}")
        if values and r is not None:
            lines.append(f"    values: {_values_text(result, r, values)}")
    bad = result.first_nonfinite()
    if bad is not None and options.capture:
        lines.append(f"first NaN/Inf: {bad.name} (output of {bad.op_type} node '{bad.node_name}')")
    elif bad is not None:
        lines.append("NaN/Inf in the outputs; --dump DIR captures every value and names the first node that made one")
    if slowest is not None:
        lines += _profile_text(result, slowest)
    if dump is not None:
        lines.append(f"{len(result.values) + len(result.structured)} values written to {dump} (index.json)")
    return lines


def _stats_text(r: ValueRecord) -> str:
    s = r.stats
    head = f"{s.dtype} [{', '.join(str(d) for d in r.shape)}]"
    bad = f"  NaN {s.nan_count}  Inf {s.inf_count}" if r.nonfinite else ""
    if s.minimum is None:  # no finite element (or not numeric): the NaN/Inf counts still matter
        return head + bad
    return f"{head}  min {s.minimum:.6g}  max {s.maximum:.6g}  mean {s.mean:.6g}  std {s.std:.6g}{bad}"


def _values_text(result: RunResult, r: ValueRecord, limit: int) -> str:
    size = math.prod(r.shape)
    if size > limit:
        return f"not shown: {size:,} elements, more than {limit:,} (--values LIMIT shows more; --dump DIR writes all)"
    array = np.asarray(result.array(r.key))
    return " ".join(np.array2string(array, threshold=limit + 1, max_line_width=1 << 30).split())


def _values_json(result: RunResult, r: ValueRecord, limit: int) -> dict[str, Any]:
    """``values``: the output's elements as nested lists (NaN and infinities as null: JSON has none), or
    ``values_omitted`` saying why not."""
    size = math.prod(r.shape)
    if size > limit:
        return {"values": None, "values_omitted": f"{size} elements, more than the limit of {limit}"}
    array = np.asarray(result.array(r.key))
    if array.dtype.kind == "f" or array.dtype.kind == "c":
        array = array.astype(object)
        flat = array.reshape(-1)
        for k, x in enumerate(flat):
            flat[k] = _json_number(x)
    elif array.dtype.kind not in "biuUSO":
        array = array.astype(np.float64).astype(object)
    return {"values": array.tolist()}


def _json_number(x: Any) -> Any:
    if isinstance(x, complex | np.complexfloating):
        return [_json_number(x.real), _json_number(x.imag)]
    x = float(x)
    return x if math.isfinite(x) else None


def _inputs_json(result: RunResult) -> list[dict[str, Any]]:
    made = set(result.generated)
    out = []
    for name in result.inputs:
        r = result.values.get(name)
        entry: dict[str, Any] = {"name": name, "generated": name in made}
        if r is not None:
            entry.update(dtype=r.stats.dtype, shape=list(r.shape))
        out.append(entry)
    return out


def _json(name: str, result: RunResult, options: RunOptions, dump: Path | None,
          slowest: list[NodeTime] | None = None, values: int = 0) -> dict[str, Any]:
    def entry(out: str) -> dict[str, Any]:
        r = result.values.get(out)
        structured = result.structured.get(out)
        if r is None and structured is not None:  # a sequence or map: its JSON is in the dump
            return {"name": out, "kind": structured["kind"], "engine": structured["engine"],
                    "value": result.structured_value(out)}
        if r is None:
            return {"name": out, "produced": False}
        s = r.stats
        return {"name": out, "dtype": s.dtype, "shape": list(r.shape), "engine": r.engine,
                "min": s.minimum, "max": s.maximum, "mean": s.mean, "std": s.std,
                "nan": s.nan_count, "inf": s.inf_count, **(_values_json(result, r, values) if values else {})}

    bad = result.first_nonfinite() if options.capture else None  # only outputs are seen otherwise
    first = {"name": bad.name, "node": bad.node_name, "op_type": bad.op_type} if bad is not None else None
    return {"model": name, "engine": result.engine, "optimized": result.optimized, "notes": result.notes,
            "inputs": _inputs_json(result), "dims": result.dims,
            "timings": result.timings, "outputs": [entry(o) for o in result.outputs], "first_nonfinite": first,
            "dump": str(dump) if dump else None, "values": len(result.values),
            "slowest_nodes": None if slowest is None else [
                {"position": t.position, "name": t.name, "op_type": t.op_type, "ms": t.ms, "share": t.share}
                for t in slowest]}
