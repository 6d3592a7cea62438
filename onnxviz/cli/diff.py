"""``onnxviz diff A B [--json]``: every structural difference; exit 0 identical, 1 different, 2 error."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from onnxviz.cli.common import open_model
from onnxviz.cli.output import print_json, say
from onnxviz.model.matching import diff_models


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = ("Compare two models' structure: nodes aligned by what they compute and read "
                          "(names settle ties); prints a summary and every difference (nodes, weights, inputs, outputs, "
                          "value_info, functions, subgraph bodies, the model's fields). Exit 0 when identical, "
                          "1 when different, 2 on error.")
    parser.add_argument("a", help="the first .onnx model (A)")
    parser.add_argument("b", help="the second .onnx model (B)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return run


def run(args: argparse.Namespace) -> int:
    doc_a, doc_b = open_model(args.a), open_model(args.b)
    result = diff_models(doc_a.index, doc_b.index, base_dir_a=doc_a.base_dir, base_dir_b=doc_b.base_dir)
    if args.json:
        print_json({"a": doc_a.name, "b": doc_b.name, **result.to_json()})
    else:
        say(f"{doc_a.name} vs {doc_b.name}: {result.summary()}", *(d.text() for d in result.differences))
    return 0 if result.identical else 1
