"""``onnxviz transform IN OUT --with NAME [options] [--json]``: optimize, convert or quantize a model in a
worker process, check the result (onnx's checker, onnxruntime, the outputs on the same inputs) and write it;
exit 0 when written, 1 when the outputs changed beyond the tolerance (nothing written), 2 on error."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import onnx

from onnxviz.cli import output
from onnxviz.cli.compare import parse_limits
from onnxviz.model.document import Document
from onnxviz.model.runner.inputs import parse_dims
from onnxviz.model.transform import TOOLS, Outcome, OutputsChanged, Settings, TransformError, run_transform
from onnxviz.model.transform.catalog import CALIBRATION_METHODS, LEVELS, QUANT_FORMATS, QUANT_TYPES

EXIT_WRITTEN, EXIT_BEYOND = 0, 1


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = (
        "Transform a model in a separate process and write the result: " + "; ".join(
            f"{t.name}: {t.summary}" for t in TOOLS.values()) + ". The result must pass onnx's checker (unless the "
        "original fails it too) and run in onnxruntime; both models run on the same inputs and a lossless "
        "transform's outputs must stay within numpy.allclose's rtol 1e-3, atol 1e-5 (a quantization's only finite "
        "and of the same shapes, unless --tolerance says more). onnxslim and onnxscript come with "
        "pip install 'onnxviz[transform]', onnx-simplifier with pip install onnxsim.")
    parser.add_argument("input", help="the .onnx model to transform")
    parser.add_argument("output", help="where to write the result (.onnx, its weights inside)")
    parser.add_argument("--with", dest="tool", required=True, choices=list(TOOLS), metavar="NAME",
                        help=f"the transform: {', '.join(TOOLS)}")
    parser.add_argument("--level", choices=LEVELS, default="extended",
                        help="ort-optimize: onnxruntime's optimization level (default extended)")
    parser.add_argument("--opset", type=int, default=0, help="opset: the default-domain opset to convert to")
    group = parser.add_argument_group("quantization")
    group.add_argument("--format", dest="quant_format", choices=QUANT_FORMATS, default="qdq",
                       help="quantize-static: QuantizeLinear/DequantizeLinear pairs (qdq, default) or QLinear operators")
    group.add_argument("--per-channel", action="store_true", help="one scale per output channel of a weight")
    group.add_argument("--reduce-range", action="store_true", help="7-bit weights (for CPUs without VNNI)")
    group.add_argument("--activation-type", choices=QUANT_TYPES, default="uint8",
                       help="quantize-static: type of activations (default uint8)")
    group.add_argument("--weight-type", choices=QUANT_TYPES, default="int8", help="type of weights (default int8)")
    group.add_argument("--method", dest="calibration_method", choices=CALIBRATION_METHODS, default="minmax",
                       help="quantize-static: how activation ranges are calibrated (default minmax)")
    parser.add_argument("--inputs", "--calibrate", dest="inputs", action="append", default=[], metavar="PATH",
                        help="input samples the outputs are compared on, and a static quantization calibrated on: an "
                             ".npz of arrays named after the inputs (an .npy or .pb for a model of one input) or a "
                             "folder of them (or of input_0.pb... sets), one sample each (repeatable; default: "
                             "generated random inputs, with a warning for quantize-static)")
    group.add_argument("--samples", type=int, default=8, help="generated calibration samples (default 8)")
    group.add_argument("--block-size", type=int, default=32, help="quantize-int4: weights per scale (default 32)")
    group.add_argument("--asymmetric", action="store_true", help="quantize-int4: with zero points")
    group.add_argument("--accuracy-level", type=int, default=0,
                       help="quantize-int4: MatMulNBits' accuracy_level (default: not set)")
    group.add_argument("--exclude", action="append", default=[], metavar="NODE",
                       help="a node name kept in float (repeatable)")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                        help="size of a symbolic dimension for generated inputs (default 1; repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="seed of generated inputs (default 0)")
    parser.add_argument("--tolerance", action="append", default=[], metavar="MEASURE=VALUE",
                        help="a limit on each output: max_abs, max_rel (upper), cosine, sqnr_db (lower), or rtol/atol "
                             "of the elementwise test (repeatable; replaces the default)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return run


def settings_of(args: argparse.Namespace) -> Settings:
    return Settings(args.tool, level=args.level, opset=args.opset, quant_format=args.quant_format,
                    per_channel=args.per_channel, reduce_range=args.reduce_range, activation_type=args.activation_type,
                    weight_type=args.weight_type, calibration_method=args.calibration_method,
                    calibration=tuple(args.inputs), samples=args.samples, block_size=args.block_size,
                    symmetric=not args.asymmetric, accuracy_level=args.accuracy_level, exclude=tuple(args.exclude),
                    dims=tuple(parse_dims(args.dim).items()), seed=args.seed)


def run(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    missing = settings.spec.missing()
    if missing:
        raise TransformError(missing)
    limits = parse_limits(args.tolerance) if args.tolerance else None
    source = Document.open(args.input)  # a file onnxviz cannot open is said before any process starts
    try:
        outcome = run_transform(Path(args.input), settings, base_dir=source.base_dir, limits=limits)
    except OutputsChanged as exc:
        _report(args, exc.outcome, written=None, refused=exc.message)
        return EXIT_BEYOND
    written = Document(onnx.load_from_string(outcome.data)).save(args.output)
    _report(args, outcome, written=written)
    return EXIT_WRITTEN


def _report(args: argparse.Namespace, outcome: Outcome, written: Path | None, refused: str = "") -> None:
    name = Path(args.input).name
    if args.json:
        output.print_json({"input": name, "output": str(written) if written else None, "written": written is not None,
                           "refused": refused, **outcome.to_json()})
        return
    v = outcome.verification
    lines = [f"{name}: {outcome.settings.label()}", *outcome.summary.text_lines()]
    if v.checked:
        lines.append(f"outputs on {v.samples} input sample{'s' if v.samples != 1 else ''} (limits: {v.limits}):")
        lines += [f"  {o.text()}" for o in v.outputs]
    else:
        lines.append(f"outputs not compared: {v.reason}")
    output.say(*lines)
    for note in outcome.notes:
        output.note(note)
    if refused:
        output.error(refused)
    elif written is not None:
        output.say(f"wrote {written}")
