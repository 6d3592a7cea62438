"""``onnxviz compare A B``: run both models on the same inputs and compare the values the matcher pairs;
exit 0 when every pair is within tolerance, 1 when one is not, 2 on error."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping
from typing import Any

from onnxviz.cli import output
from onnxviz.cli.common import given_inputs, open_model
from onnxviz.model.document import Document
from onnxviz.model.matching import CrossRun, Limits, compare_deployed, compare_models
from onnxviz.model.matching.crossrun import SORT_MEASURES
from onnxviz.model.matching.samples import (
    PairOverSamples,
    SamplesRun,
    compare_deployed_samples,
    compare_samples,
)
from onnxviz.model.runner.compare import DEFAULT_TOLERANCE, ArrayDiff, Tolerance, ValueDiff
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.input_files import Sample, input_samples
from onnxviz.model.runner.inputs import input_specs, parse_dims
from onnxviz.model.runner.sizes import inputs_to_run

LIMIT_KEYS = ("max_abs", "max_rel", "cosine", "sqnr_db", "rtol", "atol")
NAME_WIDTH = 48


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = (
        "Run two models (say float and quantized, or two exports) on the same inputs in a separate process, "
        "pair their values by structure (a QDQ value through its DequantizeLinear output, past nodes one "
        "side fused or removed; a quantized op as the float op it computes, its integer values through their "
        "scale and zero point) and print each pair's errors, worst first, with the error B's layer adds on "
        "its own (run on A's values of its inputs). Exit 1 when a pair is beyond "
        "tolerance. By default a pair is beyond it when an element is outside "
        f"{DEFAULT_TOLERANCE.text()}; --tolerance limits replace that test.")
    parser.add_argument("a", help="the reference .onnx model (A)")
    parser.add_argument("b", help="the model compared with it (B)")
    parser.add_argument("--inputs", metavar="PATH", nargs="+",
                        help="samples of A's graph inputs: .npz files of arrays named after them, folders of "
                             "input_N.pb files (the onnx test data layout), or folders of such samples "
                             "(test_data_set_N folders or .npz files); with several, every measure of a pair "
                             "is given as its mean and worst over the samples (default: generated inputs, seeded)")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                        help="size of a dimension of the generated inputs, by name or as INPUT[AXIS] (repeatable); "
                             "the others are chosen as 'onnxviz run' chooses them")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    parser.add_argument("--tolerance", action="append", default=[], metavar="MEASURE=VALUE",
                        help="a limit: max_abs, max_rel (upper), cosine, sqnr_db (lower), or rtol/atol of the "
                             "elementwise test (repeatable)")
    parser.add_argument("--optimized", action="store_true",
                        help="compare the two models as onnxruntime's sessions deploy them: the graphs their "
                             "sessions run with every graph optimization on (the outputs the sessions give; the "
                             "intermediates that still exist, named as in the optimized graphs)")
    parser.add_argument("--sort", choices=list(SORT_MEASURES), default="sqnr",
                        help="the order of the pairs, worst first: lowest SQNR (default), lowest cosine, "
                             "largest max_abs or max_rel error")
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
    in_place = isinstance(args.inputs, Mapping)  # arrays the Python API hands in place of files
    samples = input_samples(args.inputs, specs) if args.inputs and not in_place else []
    dims = parse_dims(args.dim)
    if len(samples) > 1:
        return _run_samples(args, doc_a, doc_b, samples, limits)
    given = given_inputs(args.inputs, specs) if in_place else samples[0].read(specs) if samples else {}
    feeds, generated = inputs_to_run(specs, given, dims, "random", args.seed)
    tolerance = limits.elementwise or DEFAULT_TOLERANCE
    if args.optimized:
        _need_files(doc_a, doc_b)
        assert doc_a.path is not None and doc_b.path is not None
        cross = compare_deployed(doc_a.path, doc_b.path, feeds, tolerance=tolerance, seed=args.seed,
                                 generated=generated)
    else:
        cross = compare_models(doc_a.index, doc_b.index, feeds, base_dir_a=doc_a.base_dir,
                               base_dir_b=doc_b.base_dir, tolerance=tolerance, seed=args.seed, generated=generated)
    try:
        if not cross.diffs:
            raise RunError(f"no value of {doc_a.name} pairs with a numeric value of {doc_b.name}: "
                           "the two graphs have nothing in common to compare.")
        worst = cross.worst_first(args.sort)
        beyond = any(limits.exceeded(d) for d in worst)
        if args.json:
            output.print_json({**_json(doc_a.name, doc_b.name, cross, worst, limits), **what_ran(cross),
                               "optimized": args.optimized})
        else:
            output.say(*_text(doc_a.name, doc_b.name, cross, worst, limits), *what_ran_lines(cross))
    finally:
        cross.cleanup()
    return 1 if beyond else 0


def _need_files(doc_a: Document, doc_b: Document) -> None:
    if doc_a.path is None or doc_b.path is None:
        raise RunError("--optimized compares two model files: onnxruntime writes the graphs its sessions run "
                       "from files.")


def _number(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _json(name_a: str, name_b: str, cross: CrossRun, worst: list[ValueDiff], limits: Limits) -> dict[str, Any]:
    how = {(p.a, p.b): p.how for p in cross.pairing.pairs}
    pairs = [{"a": d.name, "b": d.other, **_figures(d), "how": how.get((d.name, d.other), ""),
              "beyond": limits.exceeded(d), "note": d.note, **_added_json(cross, d)}
             for d in worst]
    return {"a": name_a, "b": name_b, "engine_a": cross.result_a.engine, "engine_b": cross.result_b.engine,
            **_pairing_json(cross), "pairs": pairs, "beyond_tolerance": sum(1 for p in pairs if p["beyond"]),
            "weights": [w.to_json() for w in cross.weights]}


def _pairing_json(cross: CrossRun) -> dict[str, Any]:
    """How much of A is paired (its values; its nodes aligned apart) and why the others are not."""
    pairing = cross.pairing
    return {"aligned_fraction": pairing.fraction(), "aligned_nodes_fraction": cross.alignment.fraction(),
            "values_a": pairing.values_a,
            "unmatched_a": [{"name": x, "reason": pairing.reasons_a.get(x, "")} for x in pairing.unmatched_a],
            "unmatched_b": [{"name": y, "reason": pairing.reasons_b.get(y, "")} for y in pairing.unmatched_b]}


def _added_json(cross: CrossRun, d: ValueDiff) -> dict[str, Any]:
    """The error B's layer adds on its own (B's layer run on A's values of its inputs), or why it has none."""
    added = cross.added_of(d)
    if added is None:
        return {"added": None, "added_note": cross.not_isolated.get((d.name, d.other), "")}
    return {"added": _added_figures(added)}


def _added_figures(added: ArrayDiff) -> dict[str, Any]:
    return {"max_abs": _number(added.max_abs), "max_rel": _number(added.max_rel), "cosine": _number(added.cosine),
            "sqnr_db": _number(added.sqnr_db)}


def _cell(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[:NAME_WIDTH - 3] + "..."


def _text(name_a: str, name_b: str, cross: CrossRun, worst: list[ValueDiff], limits: Limits) -> list[str]:
    bad = {id(d) for d in worst if limits.exceeded(d)}
    pairing = cross.pairing
    lines = [f"{name_a} vs {name_b}: {len(worst)} value pairs, {len(bad)} beyond tolerance; "
             f"{100 * pairing.fraction():.1f}% of A's {pairing.values_a} computed values paired, "
             f"{100 * cross.alignment.fraction():.1f}% of nodes aligned"]
    rows = [("", "A", "B", "max_abs", "max_rel", "cosine", "sqnr_db", "added_sqnr")]
    for d in worst:
        added = cross.added_of(d)
        rows.append(("!" if id(d) in bad else "", _cell(d.name), _cell(d.other), f"{d.max_abs_error:.4g}",
                     f"{d.rel_error:.4g}", f"{d.cosine:.6f}", f"{d.sqnr_db:.2f}",
                     f"{added.sqnr_db:.2f}" if added is not None else "-"))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines += ["  ".join(cell.ljust(w) if c < 3 else cell.rjust(w) for c, (cell, w) in enumerate(zip(r, widths,
              strict=True))).rstrip() for r in rows]
    lines += [f"  {d.name}: {d.note}" for d in worst if d.note]
    lines += _weight_lines(cross)
    return lines + _unmatched_lines(cross)


def _unmatched_lines(cross: CrossRun) -> list[str]:
    """The values of each side left unpaired, each with the reason."""
    pairing, lines = cross.pairing, []
    for side, names, reasons in (("A", pairing.unmatched_a, pairing.reasons_a),
                                 ("B", pairing.unmatched_b, pairing.reasons_b)):
        lines.append(f"unmatched in {side} ({len(names)})" + (":" if names else ": none"))
        lines += [f"  {name}: {reasons.get(name, 'no partner')}" for name in names]
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


# -- several samples ----------------------------------------------------------------------------------
def _run_samples(args: argparse.Namespace, doc_a: Document, doc_b: Document, samples: list[Sample],
                 limits: Limits) -> int:
    """Both models run on every sample; each pair's figures as their mean and worst over the samples."""
    specs = input_specs(doc_a.model, doc_a.index)
    dims = parse_dims(args.dim)

    def reader(sample: Sample) -> Callable[[], Any]:
        return lambda: inputs_to_run(specs, sample.read(specs), dims, "random", args.seed)

    readers, labels = [reader(s) for s in samples], [s.label for s in samples]
    tolerance = limits.elementwise or DEFAULT_TOLERANCE
    if args.optimized:
        _need_files(doc_a, doc_b)
        assert doc_a.path is not None and doc_b.path is not None
        over = compare_deployed_samples(doc_a.path, doc_b.path, readers, labels, tolerance=tolerance, seed=args.seed)
    else:
        over = compare_samples(doc_a.index, doc_b.index, readers, labels, base_dir_a=doc_a.base_dir,
                               base_dir_b=doc_b.base_dir, tolerance=tolerance, seed=args.seed)
    try:
        if not over.pairs:
            raise RunError(f"no value of {doc_a.name} pairs with a numeric value of {doc_b.name}: "
                           "the two graphs have nothing in common to compare.")
        worst = over.worst_first(args.sort)
        beyond = any(limits.exceeded(p.worst) for p in worst)
        if args.json:
            output.print_json({**_samples_json(doc_a.name, doc_b.name, over, worst, limits), **what_ran(over.last),
                               "optimized": args.optimized})
        else:
            output.say(*_samples_text(doc_a.name, doc_b.name, over, worst, limits),
                       *what_ran_lines(over.last, f" (the last of {len(over.labels)} samples)"))
    finally:
        over.cleanup()
    return 1 if beyond else 0


def _figures(d: ValueDiff) -> dict[str, Any]:
    return {"max_abs": _number(d.max_abs_error), "max_rel": _number(d.rel_error), "cosine": _number(d.cosine),
            "sqnr_db": _number(d.sqnr_db), "outside": d.outside}


def _samples_json(name_a: str, name_b: str, over: SamplesRun, worst: list[PairOverSamples],
                  limits: Limits) -> dict[str, Any]:
    """As one sample's JSON, each pair's figures (and added error) its worst over the samples, with ``mean``
    and ``samples`` (one entry per sample, null where the pair was not measured) beside them."""
    cross = over.as_cross()
    how = {(p.a, p.b): p.how for p in cross.pairing.pairs}
    pairs = [{"a": p.worst.name, "b": p.worst.other, **_figures(p.worst), "how": how.get((p.worst.name, p.worst.other), ""),
              "beyond": limits.exceeded(p.worst), "note": p.worst.note, **_added_json(cross, p.worst),
              "mean": {**_figures(p.mean), "outside": p.mean_outside,
                       "added": None if p.added_mean is None else _added_figures(p.added_mean)},
              "measured_samples": p.measured,
              "samples": [_sample_json(d, a) for d, a in zip(p.samples, p.added_samples or (None,) * len(p.samples),
                                                             strict=True)]} for p in worst]
    return {"a": name_a, "b": name_b, "engine_a": cross.result_a.engine, "engine_b": cross.result_b.engine,
            "samples": over.labels, "sample_dims": over.dims, "aggregate": "worst (mean and per sample alongside)",
            **_pairing_json(cross), "pairs": pairs, "beyond_tolerance": sum(1 for p in pairs if p["beyond"]),
            "weights": [w.to_json() for w in cross.weights]}


def _sample_json(d: ValueDiff | None, added: ArrayDiff | None) -> dict[str, Any] | None:
    """A pair's figures in one sample (None: not measured there), with its added error there."""
    if d is None:
        return None
    return {**_figures(d), "added": None if added is None else _added_figures(added)}


def _samples_text(name_a: str, name_b: str, over: SamplesRun, worst: list[PairOverSamples],
                  limits: Limits) -> list[str]:
    bad = {id(p) for p in worst if limits.exceeded(p.worst)}
    pairing = over.last.pairing
    lines = [f"{name_a} vs {name_b} over {len(over.labels)} samples: {len(worst)} value pairs, {len(bad)} beyond "
             f"tolerance in some sample; {100 * pairing.fraction():.1f}% of A's {pairing.values_a} computed values paired, "
             f"{100 * over.alignment.fraction():.1f}% of nodes aligned; each figure is mean / worst over the samples"]
    rows = [("", "A", "B", "max_abs", "max_rel", "cosine", "sqnr_db", "added_sqnr")]
    rows += [("!" if id(p) in bad else "", _cell(p.worst.name), _cell(p.worst.other),
              f"{p.mean.max_abs_error:.4g} / {p.worst.max_abs_error:.4g}",
              f"{p.mean.rel_error:.4g} / {p.worst.rel_error:.4g}", f"{p.mean.cosine:.6f} / {p.worst.cosine:.6f}",
              f"{p.mean.sqnr_db:.2f} / {p.worst.sqnr_db:.2f}",
              "-" if p.added_mean is None or p.added_worst is None
              else f"{p.added_mean.sqnr_db:.2f} / {p.added_worst.sqnr_db:.2f}") for p in worst]
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines += ["  ".join(cell.ljust(w) if c < 3 else cell.rjust(w) for c, (cell, w) in enumerate(zip(r, widths,
              strict=True))).rstrip() for r in rows]
    lines += [f"  {p.worst.name}: {p.worst.note}" for p in worst if p.worst.note]
    partial = [p for p in worst if p.measured < len(over.labels)]
    lines += [f"  {p.worst.name}: measured in {p.measured} of {len(over.labels)} samples" for p in partial]
    lines += _weight_lines(over.last)
    return lines + _unmatched_lines(over.last)


def what_ran(cross: CrossRun) -> dict[str, Any]:
    """What each run ran: its engine, whether graph optimizations were on, its inputs' shapes as run and the
    sizes onnxviz chose for generated ones."""
    out: dict[str, Any] = {}
    for side, result in (("a", cross.result_a), ("b", cross.result_b)):
        out[f"ran_{side}"] = {"engine": result.engine, "optimized": result.optimized, "dims": result.dims,
                              "inputs": [{"name": n, "shape": list(result.values[n].shape),
                                          "dtype": result.values[n].stats.dtype, "generated": n in result.generated}
                                         for n in result.inputs if n in result.values]}
    return out


def what_ran_lines(cross: CrossRun, which: str = "") -> list[str]:
    return [f"{side} ran on {result.what_ran()}; inputs{which}: {result.inputs_text() or 'none'}"
            for side, result in (("A", cross.result_a), ("B", cross.result_b))]
