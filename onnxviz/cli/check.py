"""``onnxviz check FILE [--json] [--strict]``: exit 0 without errors (warnings printed), 1 with errors (with
``--strict``: or warnings), 2 unreadable."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from onnxviz.cli.common import add_file_arguments, open_document
from onnxviz.cli.output import print_json, say
from onnxviz.model.document import Document
from onnxviz.model.graph.session_check import runtime_problems
from onnxviz.model.graph.validation import check_model, has_error
from onnxviz.model.problems import Problem, Severity


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = ("Validate a model: onnx.checker, shape inference and onnxviz's own graph checks, then, "
                          "when these find no error, what onnxruntime refuses when it loads the model. What the "
                          "installed onnxruntime cannot run (an operator, a type such as complex64, a custom "
                          "domain, a locale, an IR version newer than it reads) is a warning: the model is valid "
                          "ONNX.")
    add_file_arguments(parser)
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too (notes never fail)")
    return run


def collect_problems(doc: Document) -> list[Problem]:
    index = doc.index  # first: building it may escape text, a load problem
    problems = doc.load_problems + index.problems + check_model(doc.model, index)
    if has_error(problems):
        return problems  # onnxruntime would repeat one of them
    return problems + runtime_problems(doc.model, doc.serialize())


def run(args: argparse.Namespace) -> int:
    doc = open_document(args)
    problems = collect_problems(doc)
    counts = {s: sum(1 for p in problems if p.severity == s) for s in Severity}
    if args.json:
        print_json({"valid": not counts[Severity.ERROR], "errors": counts[Severity.ERROR],
                    "warnings": counts[Severity.WARNING], "notes": counts[Severity.INFO],
                    "problems": [p.to_json() for p in problems]})
    else:
        say(*map(problem_line, problems), f"{doc.name}: {verdict(counts)}")
    failing = counts[Severity.ERROR] + (counts[Severity.WARNING] if args.strict else 0)
    return 1 if failing else 0


def verdict(counts: dict[Severity, int]) -> str:
    """'valid', 'valid, 2 warnings', '1 error, 2 warnings': a model with no error is valid ONNX."""
    found = ", ".join(s.counted(counts[s]) for s in (Severity.ERROR, Severity.WARNING) if counts[s])
    if counts[Severity.ERROR]:
        return found
    return f"valid, {found}" if found else "valid"


def problem_line(p: Problem) -> str:
    """``error: message [node n, value 'v' in scope]``: every problem says where it is."""
    where = " ".join(x for x in (
        f"node {p.node_name or ('#' + str(p.node))}" if p.node >= 0 else "",
        f"value '{p.value}'" if p.value else "",
        f"in {p.scope}" if p.scope else "") if x)
    return f"{p.severity.word}: {p.message}" + (f" [{where}]" if where else "")
