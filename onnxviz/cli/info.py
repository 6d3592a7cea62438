"""``onnxviz info FILE [--json]``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from onnxviz.cli.common import add_file_arguments, open_document, print_json, terminal_text
from onnxviz.model.index import display_name
from onnxviz.model.summary import human_bytes, model_info


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = "Print a model's signature, size and operator counts."
    add_file_arguments(parser)
    return run


def run(args: argparse.Namespace) -> int:
    doc = open_document(args)
    info = model_info(doc.model, doc.index)
    if args.json:
        print_json(info)
    else:
        print(terminal_text(format_text(doc.name, info)))
    return 0


def _one_line(text: object) -> str:
    """A string from the file on one line: its newlines escaped here, as terminal_text escapes the rest."""
    return display_name(str(text), None)


def _sig(v: dict[str, Any]) -> str:
    shape = "?" if v["shape"] is None else "[" + ", ".join("?" if d is None else _one_line(d) for d in v["shape"]) + "]"
    return f"  {_one_line(v['name'])}: {v['dtype'] or '?'} {shape}"


def format_text(name: str, info: dict[str, Any]) -> str:
    producer = " ".join(_one_line(x) for x in (info["producer"]["name"], info["producer"]["version"]) if x) \
        or "(unknown)"
    lines = [
        f"{name}",
        f"IR version:  {info['ir_version']}",
        "opsets:      " + (", ".join(f"{_one_line(d)} {v}" for d, v in info["opsets"].items()) or "(none)"),
        f"producer:    {producer}",
        f"nodes:       {info['nodes']} ({info['nodes_total']} including subgraphs and functions)",
        f"parameters:  {info['parameters']:,} ({human_bytes(info['parameter_bytes'])})",
        "inputs:", *[_sig(v) for v in info["inputs"]],
        "outputs:", *[_sig(v) for v in info["outputs"]],
        "operators:",
        *[f"  {_one_line(op):<24} {n}" for op, n in info["op_types"].items()],
    ]
    metadata = list(info["metadata"].items())
    if metadata:
        lines += ["metadata:", *[f"  {_one_line(k)}: {_one_line(v)[:TEXT_VALUE_CHARS]}"
                                 for k, v in metadata[:TEXT_METADATA_ROWS]]]
        if len(metadata) > TEXT_METADATA_ROWS:
            lines.append(f"  ... and {len(metadata) - TEXT_METADATA_ROWS:,} more (all of them with --json)")
    return "\n".join(lines)


TEXT_METADATA_ROWS = 50  # metadata entries the text output lists; --json has every one
TEXT_VALUE_CHARS = 200
