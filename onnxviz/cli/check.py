"""``onnxviz check FILE [--json]``: exit 0 valid, 1 problems, 2 unreadable."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from onnxviz.model.document import Document
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.validation import check_model


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = "Validate a model: onnx.checker, shape inference and onnxviz's own graph checks."
    parser.add_argument("file", help="an .onnx model file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return run


def collect_problems(doc: Document) -> list[Problem]:
    return doc.load_problems + doc.index.problems + check_model(doc.model, doc.index)


def run(args: argparse.Namespace) -> int:
    doc = Document.open(args.file)
    problems = collect_problems(doc)
    errors = [p for p in problems if p.severity != Severity.INFO]
    if args.json:
        print(json.dumps({"valid": not errors, "problems": [p.to_json() for p in problems]},
                         indent=2, ensure_ascii=False))
    else:
        for p in problems:
            where = " ".join(x for x in (
                f"node {p.node_name or ('#' + str(p.node))}" if p.node >= 0 else "",
                f"value '{p.value}'" if p.value else "",
                f"in {p.scope}" if p.scope else "") if x)
            print(f"{p.severity.value}: {p.message}" + (f" [{where}]" if where else ""))
        print(f"{doc.name}: " + ("valid" if not errors else f"{len(errors)} problem(s)"))
    return 1 if errors else 0
