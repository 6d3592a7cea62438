"""``onnxviz diff A B [--json]``: every structural difference; exit 0 identical, 1 different, 2 error."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from onnxviz.cli.common import open_model
from onnxviz.cli.output import print_json, say
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.matching import diff_models
from onnxviz.model.matching.diff import HIDEABLE, hidden_text, shown
from onnxviz.model.text import display_name


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = ("Compare two models' structure: nodes aligned by what they compute and read "
                          "(names settle ties); prints a summary and every difference (nodes, weights, inputs, outputs, "
                          "value_info, functions, subgraph bodies, the model's fields). Exit 0 when identical, "
                          "1 when different, 2 on error.")
    parser.add_argument("a", help="the first .onnx model (A)")
    parser.add_argument("b", help="the second .onnx model (B)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--hide", action="append", default=[], metavar="WHAT",
                        help="leave out differences: 'renames' (a node, weight, input or output renamed and "
                             "nothing else changed) and 'value_info' (value_info types), comma-separated; "
                             "the summary counts what is hidden, and the exit code is 0 when nothing else differs")
    return run


def parse_hide(items: list[str]) -> frozenset[str]:
    """``--hide`` entries (comma-separated, repeatable) as a set of :data:`HIDEABLE` keys."""
    chosen = {part.strip() for item in items for part in item.split(",") if part.strip()}
    unknown = sorted(chosen - set(HIDEABLE))
    if unknown:
        raise OnnxvizError(f"--hide: '{display_name(unknown[0], 40)}' is not one of {', '.join(HIDEABLE)}.")
    return frozenset(chosen)


def run(args: argparse.Namespace) -> int:
    hide = parse_hide(args.hide)
    doc_a, doc_b = open_model(args.a), open_model(args.b)
    result = diff_models(doc_a.index, doc_b.index, base_dir_a=doc_a.base_dir, base_dir_b=doc_b.base_dir)
    keep, hidden = shown(result.differences, hide)
    listed = [result.differences[k] for k in keep]
    if args.json:
        data = {"a": doc_a.name, "b": doc_b.name, **result.to_json()}
        if hide:
            data.update(differences=[d.to_json() for d in listed], hidden=hidden)
        print_json(data)
    else:
        said = hidden_text(hidden)
        say(f"{doc_a.name} vs {doc_b.name}: {result.summary()}" + (f" ({said})" if said else ""),
            *(d.text() for d in listed))
    return 0 if not listed else 1
