"""``onnxviz info FILE [--json]``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from onnxviz.cli.common import add_file_arguments, open_document
from onnxviz.cli.output import print_json, say
from onnxviz.model.background.contained import NativeCrash, inferred_types
from onnxviz.model.graph.flops import human_count
from onnxviz.model.graph.summary import human_bytes, model_info
from onnxviz.model.graph.validation import without_big_weights
from onnxviz.model.problems import DATA


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = "Print a model's signature, size and operator counts."
    add_file_arguments(parser)
    return run


def run(args: argparse.Namespace) -> int:
    doc = open_document(args)
    index = doc.index  # first: building it may escape text
    try:  # the figures' shapes, as the window's: inferred in a process of its own (a crash of onnx's C++ there is
        index.set_inferred(inferred_types(without_big_weights(doc.model)).types)  # no figure, not this process's end)
    except NativeCrash:
        pass
    without_data = {p.value: p.message for p in doc.load_problems + index.problems if p.source == DATA and p.value}
    info = model_info(doc.model, index, without_data)
    if args.json:
        print_json(info)
    else:
        say(*format_lines(doc.name, info))
    return 0


def _sig(v: dict[str, Any]) -> str:
    # an unknown dimension is "?" within the brackets ([?, 4]); a shape of unknown rank says so
    shape = "unknown rank" if v["shape"] is None else "[" + ", ".join("?" if d is None else f"{d}" for d in v["shape"]) + "]"
    return f"  {v['name']}: {v['dtype'] or '?'} {shape}"


def format_lines(name: str, info: dict[str, Any]) -> list[str]:
    """The report's lines; :func:`~onnxviz.cli.output.say` escapes each (a name's newline too)."""
    producer = " ".join(f"{x}" for x in (info["producer"]["name"], info["producer"]["version"]) if x) \
        or "(unknown)"
    lines = [
        name,
        f"IR version:  {info['ir_version']}",
        "opsets:      " + (", ".join(f"{d} {v}" for d, v in info["opsets"].items()) or "(none)"),
        f"producer:    {producer}",
        f"nodes:       {info['nodes']} ({info['nodes_total']} including subgraphs and functions)",
        f"parameters:  {info['parameters']:,} ({human_bytes(info['parameter_bytes'])}){_left_out(info)}",
        *_by_graph(info["parameters_by_graph"]),
        *_without_data(info["tensors_without_data"]),
        "inputs:", *[_sig(v) for v in info["inputs"]],
        "outputs:", *[_sig(v) for v in info["outputs"]],
        *_cost_lines(info),
        "operators:",
        *[f"  {op:<24} {n}" for op, n in info["op_types"].items()],
    ]
    for title, key in (("metadata", "metadata"), ("graph metadata", "graph_metadata")):
        lines += _metadata_lines(title, list(info[key].items()))
    return lines


def _left_out(info: dict[str, Any]) -> str:
    missing = info["tensors_without_data"]
    if not missing:
        return ""
    tensors = "1 tensor" if len(missing) == 1 else f"{len(missing):,} tensors"
    declared = info["elements_declared_without_data"]
    shown = f"{declared:,}" if declared < 10**21 else f"over 10^{len(str(declared)) - 1}"  # dims a file may declare
    return f", not counting {tensors} whose data is missing or refused ({shown} elements declared)"


def _without_data(missing: list[dict[str, str]]) -> list[str]:
    """A line per tensor whose data is not there (the first :data:`TEXT_METADATA_ROWS`), saying why."""
    lines = [f"  no data: {m['problem']}" for m in missing[:TEXT_METADATA_ROWS]]
    if len(missing) > TEXT_METADATA_ROWS:
        lines.append(f"  ... and {len(missing) - TEXT_METADATA_ROWS:,} more (all of them with --json)")
    return lines


def _cost_lines(info: dict[str, Any]) -> list[str]:
    """The main graph's MACs and FLOPs, saying what they leave out and what they assume."""
    missed = info["nodes_not_counted"]
    notes = [f"{missed:,} node{'s' if missed != 1 else ''} not counted: no shape known"] if missed else []
    notes += ["named dimensions counted as 1"] if info["named_dimensions_as_1"] else []
    note = f" ({'; '.join(notes)})" if notes else ""
    return [f"MACs:        {human_count(info['macs'])}{note}", f"FLOPs:       {human_count(info['flops'])}"]


def _by_graph(graphs: list[dict[str, Any]]) -> list[str]:
    """A line per graph holding parameters (If branches, Loop bodies, functions) when there are several."""
    if len(graphs) < 2:
        return []
    return [f"  {g['label']}: {g['parameters']:,} ({human_bytes(g['bytes'])})" for g in graphs]


def _metadata_lines(title: str, metadata: list[tuple[str, Any]]) -> list[str]:
    if not metadata:
        return []
    lines = [f"{title}:", *[f"  {k}: {str(v)[:TEXT_VALUE_CHARS]}" for k, v in metadata[:TEXT_METADATA_ROWS]]]
    if len(metadata) > TEXT_METADATA_ROWS:
        lines.append(f"  ... and {len(metadata) - TEXT_METADATA_ROWS:,} more (all of them with --json)")
    return lines


TEXT_METADATA_ROWS = 50  # metadata entries the text output lists; --json has every one
TEXT_VALUE_CHARS = 200
