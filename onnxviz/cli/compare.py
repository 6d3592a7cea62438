"""``onnxviz compare A B``: run both models on the same inputs and compare the values the matcher pairs;
exit 0 when every pair is within tolerance, 1 when one is not, 2 on error."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from onnxviz.cli import output
from onnxviz.cli.common import given_inputs, open_model
from onnxviz.model.matching import CrossRun, Limits, compare_models
from onnxviz.model.runner.compare import DEFAULT_TOLERANCE, Tolerance, ValueDiff
from onnxviz.model.runner.inputs import build_feeds, input_specs, parse_dims
from onnxviz.model.runner.protocol import RunError

LIMIT_KEYS = ("max_abs", "max_rel", "cosine", "sqnr_db", "rtol", "atol")
NAME_WIDTH = 48


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = (
        "Run two models (say float and quantized, or two exports) on the same inputs in a separate process, "
        "pair their values by structure (a QDQ value through its DequantizeLinear output, past nodes one "
        "side fused or removed) and print each pair's errors, worst first. Exit 1 when a pair is beyond "
        "tolerance. By default a pair is beyond it when an element is outside "
        f"{DEFAULT_TOLERANCE.text()}; --tolerance limits replace that test.")
    parser.add_argument("a", help="the reference .onnx model (A)")
    parser.add_argument("b", help="the model compared with it (B)")
    parser.add_argument("--inputs", metavar="PATH.npz", help="an .npz of arrays named after A's graph inputs "
                        "(default: generated inputs, seeded)")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                        help="size of a symbolic dimension for generated inputs (default 1; repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    parser.add_argument("--tolerance", action="append", default=[], metavar="MEASURE=VALUE",
                        help="a limit: max_abs, max_rel (upper), cosine, sqnr_db (lower), or rtol/atol of the "
                             "elementwise test (repeatable)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return run


def parse_limits(items: list[str]) -> Limits:
    """``--tolerance`` items as Limits; none given: the elementwise default."""
    if not items:
        return Limits()
    values: dict[str, float] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or key not in LIMIT_KEYS:
            raise RunError(f"'{item}' is not MEASURE=VALUE with MEASURE one of {', '.join(LIMIT_KEYS)}.")
        try:
            values[key] = float(text)
        except ValueError:
            raise RunError(f"'{text}' in '{item}' is not a number.") from None
    elementwise = None
    if "rtol" in values or "atol" in values:
        elementwise = Tolerance(values.pop("rtol", 0.0), values.pop("atol", 0.0))
    return Limits(elementwise, **values)


def run(args: argparse.Namespace) -> int:
    limits = parse_limits(args.tolerance)
    doc_a, doc_b = open_model(args.a), open_model(args.b)
    specs = input_specs(doc_a.model, doc_a.index)
    given = given_inputs(args.inputs, specs)
    feeds = build_feeds(specs, given, parse_dims(args.dim), "random", args.seed)
    cross = compare_models(doc_a.index, doc_b.index, feeds, base_dir_a=doc_a.base_dir, base_dir_b=doc_b.base_dir,
                           tolerance=limits.elementwise or DEFAULT_TOLERANCE, seed=args.seed)
    try:
        if not cross.diffs:
            raise RunError(f"no value of {doc_a.name} pairs with a numeric value of {doc_b.name}: "
                           "the two graphs have nothing in common to compare.")
        worst = cross.worst_first()
        beyond = any(limits.exceeded(d) for d in worst)
        if args.json:
            output.print_json(_json(doc_a.name, doc_b.name, cross, worst, limits))
        else:
            output.say(*_text(doc_a.name, doc_b.name, cross, worst, limits))
    finally:
        cross.cleanup()
    return 1 if beyond else 0


def _number(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _json(name_a: str, name_b: str, cross: CrossRun, worst: list[ValueDiff], limits: Limits) -> dict[str, Any]:
    how = {(p.a, p.b): p.how for p in cross.pairing.pairs}
    pairs = [{"a": d.name, "b": d.other, "max_abs": _number(d.max_abs_error), "max_rel": _number(d.rel_error),
              "cosine": _number(d.cosine), "sqnr_db": _number(d.sqnr_db), "outside": d.outside,
              "how": how.get((d.name, d.other), ""), "beyond": limits.exceeded(d), "note": d.note}
             for d in worst]
    return {"a": name_a, "b": name_b, "engine_a": cross.result_a.engine, "engine_b": cross.result_b.engine,
            "aligned_fraction": cross.alignment.fraction(), "pairs": pairs,
            "beyond_tolerance": sum(1 for p in pairs if p["beyond"]),
            "unmatched_a": cross.pairing.unmatched_a, "unmatched_b": cross.pairing.unmatched_b,
            "weights": [w.to_json() for w in cross.weights]}


def _cell(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[:NAME_WIDTH - 3] + "..."


def _text(name_a: str, name_b: str, cross: CrossRun, worst: list[ValueDiff], limits: Limits) -> list[str]:
    bad = {id(d) for d in worst if limits.exceeded(d)}
    lines = [f"{name_a} vs {name_b}: {len(worst)} value pairs, {len(bad)} beyond tolerance; "
             f"{100 * cross.alignment.fraction():.1f}% of nodes aligned"]
    rows = [("", "A", "B", "max_abs", "max_rel", "cosine", "sqnr_db")]
    rows += [("!" if id(d) in bad else "", _cell(d.name), _cell(d.other), f"{d.max_abs_error:.4g}", f"{d.rel_error:.4g}",
              f"{d.cosine:.6f}", f"{d.sqnr_db:.2f}") for d in worst]
    widths = [max(len(r[c]) for r in rows) for c in range(7)]
    lines += ["  ".join(cell.ljust(w) if c < 3 else cell.rjust(w) for c, (cell, w) in enumerate(zip(r, widths,
              strict=True))).rstrip() for r in rows]
    lines += [f"  {d.name}: {d.note}" for d in worst if d.note]
    lines += _weight_lines(cross)
    for side, names in (("A", cross.pairing.unmatched_a), ("B", cross.pairing.unmatched_b)):
        lines.append(f"unmatched in {side} ({len(names)}): " + (", ".join(names) if names else "none"))
    return lines


def _weight_lines(cross: CrossRun) -> list[str]:
    """Quantized weights against their partners (dequantized), worst SQNR first."""
    if not cross.weights:
        return []
    worst = sorted(cross.weights, key=lambda w: w.sqnr_db if math.isfinite(w.sqnr_db) else -math.inf)
    lines = [f"{len(worst)} quantized weight pairs (through their DequantizeLinear):"]
    lines += [f"  {_cell(w.a)}  {_cell(w.b)}  max_abs {w.max_abs:.4g}  max_rel {w.max_rel:.4g}  "
              f"cosine {w.cosine:.6f}  sqnr_db {w.sqnr_db:.2f}" + (f"  ({w.note})" if w.note else "") for w in worst]
    return lines
