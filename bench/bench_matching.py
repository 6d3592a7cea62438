"""The matcher on every quantization format: for each pair of tests/quantized_models.py (a float export A
and its copy B made by onnxruntime's quantizers or float16 converter), run both on A's sample input and
print the aligned fraction, the value pairs, the wrong ones (by the tests' name rule, or shapes or dtype
kinds that differ), and the values of A and of B left unmatched.

    python bench/bench_matching.py [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from quantized_models import FORMATS, quantized, reference, right_pair, sample  # noqa: E402

from onnxviz.model.graph.index import ModelIndex  # noqa: E402
from onnxviz.model.matching import compare_models  # noqa: E402

LAYERS = frozenset({"Conv", "MatMul", "Gemm"})


def row(name: str) -> tuple[str, list[str]]:
    a, b = onnx.load(reference(name)), onnx.load(quantized(name))
    cross = compare_models(ModelIndex(a), ModelIndex(b), sample(FORMATS[name][0]))
    try:
        wrong = []
        pairs = {(p.a, p.b): p for p in cross.pairing.pairs}
        for d in cross.diffs:
            ra, rb = cross.result_a.values[d.name], cross.result_b.values[d.other]
            p = pairs[d.name, d.other]
            float_a = "float" in ra.numpy_dtype or p.scale_a is not None
            float_b = "float" in rb.numpy_dtype or p.scale_b is not None
            if not right_pair(a, b, d.name, d.other) or ra.shape != rb.shape or float_a != float_b:
                wrong.append(f"{d.name} ~ {d.other}")
        pairing = cross.pairing
        aligned = cross.alignment.fraction()
        right = {d.name for d in cross.diffs if f"{d.name} ~ {d.other}" not in wrong}
        layers = [o for n in a.graph.node if n.op_type in LAYERS for o in n.output[:1]]
        found = sum(1 for x in layers if x in right)
        fused = sum(1 for x in layers if "fused" in pairing.reasons_a.get(x, ""))
        return (f"| {name} | {100 * pairing.fraction():.0f}% ({100 * aligned:.0f}%) | {len(cross.diffs)} | "
                f"{len(wrong)} | {len(pairing.unmatched_a)} / {len(pairing.unmatched_b)} | "
                f"{found} / {len(layers)}{f' (+{fused} fused)' if fused else ''} |"), wrong
    finally:
        cross.cleanup()


def export_row(name_a: str, name_b: str) -> tuple[str, list[str]]:
    """Two exports of one module with the same weights: a pair is right when its values agree."""
    from quantized_models import EXPORTS

    a, b = onnx.load(EXPORTS / f"{name_a}.onnx"), onnx.load(EXPORTS / f"{name_b}.onnx")
    cross = compare_models(ModelIndex(a), ModelIndex(b), sample(name_a))
    try:
        wrong = []
        for d in cross.diffs:
            ra, rb = cross.result_a.values[d.name], cross.result_b.values[d.other]
            same = ra.shape == rb.shape and np.allclose(cross.result_a.array(d.name), cross.result_b.array(d.other),
                                                        rtol=1e-4, atol=1e-5)
            if not same:
                wrong.append(f"{d.name} ~ {d.other} ({d.sqnr_db:.2f} dB{', ' + d.note if d.note else ''})")
        p = cross.pairing
        return (f"| {name_a} / {name_b} | {100 * p.fraction():.0f}% ({100 * cross.alignment.fraction():.0f}%) | "
                f"{len(cross.diffs)} | "
                f"{len(wrong)} | {len(p.unmatched_a)} / {len(p.unmatched_b)} | |"), wrong
    finally:
        cross.cleanup()


def main() -> None:
    print("| B | aligned: values (nodes) | pairs | wrong pairs | unmatched A / B | Conv/MatMul/Gemm outputs paired right |")
    print("|---|---|---|---|---|---|")
    details = []
    for name in sys.argv[1:] or list(FORMATS):
        line, wrong = row(name)
        print(line, flush=True)
        details += [f"  {name}: {w}" for w in wrong[:5]]
    if not sys.argv[1:]:
        line, wrong = export_row("bert_legacy", "bert_dynamo")
        print(line, flush=True)
        details += [f"  exports: {w}" for w in wrong]
    print("\n".join(details))


if __name__ == "__main__":
    main()
