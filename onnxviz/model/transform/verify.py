"""Whether a transform kept the model's outputs: both models run in onnxruntime on the same inputs and each
graph output is measured with the comparison's own measures (:func:`~onnxviz.model.runner.compare.measure_arrays`),
against limits (:class:`~onnxviz.model.matching.Limits`): for the lossless transforms numpy.allclose's
test at the comparison's default tolerance, for a quantization none unless the user sets some. Outputs that
turn NaN or Inf where the original's are finite, or lose their shape, are always beyond.

Runs in the transform's worker process (it imports onnxruntime).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from onnxviz.model.matching.crossrun import Limits
from onnxviz.model.runner.compare import DEFAULT_TOLERANCE, ValueDiff, measure_arrays
from onnxviz.model.transform.calibration import Sample

LOSSLESS = Limits()
LOSSY = Limits(elementwise=None)


@dataclass(frozen=True)
class OutputCheck:
    """One graph output, its worst over the samples: the original's value is the reference."""

    name: str
    max_abs: float = 0.0
    max_rel: float = 0.0
    cosine: float = 1.0
    sqnr_db: float = math.inf
    outside: int = 0
    note: str = ""            # why it could not be measured, or what is wrong with it
    beyond: tuple[str, ...] = ()  # the limits it crosses (empty: within)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "max_abs": _finite(self.max_abs), "max_rel": _finite(self.max_rel),
                "cosine": _finite(self.cosine), "sqnr_db": _finite(self.sqnr_db), "outside": self.outside,
                "note": self.note, "beyond": list(self.beyond)}

    def text(self) -> str:
        said = self.note or (f"max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}, cosine {self.cosine:.6f}, "
                             f"SQNR {_db(self.sqnr_db)}")
        return f"{self.name}: {said}" + (f" - beyond: {'; '.join(self.beyond)}" if self.beyond else "")


@dataclass
class Verification:
    """The outputs compared (``checked``), or why they could not be (``reason``)."""

    checked: bool
    reason: str = ""
    samples: int = 0
    outputs: list[OutputCheck] = field(default_factory=list)
    limits: str = ""  # the limits as words, e.g. "rtol 0.001, atol 1e-05"

    @property
    def beyond(self) -> list[OutputCheck]:
        return [o for o in self.outputs if o.beyond]

    def worst_sqnr(self) -> float:
        return min((o.sqnr_db for o in self.outputs if not o.note), default=math.inf)

    def worst_rel(self) -> float:
        return max((o.max_rel for o in self.outputs if not o.note), default=0.0)

    def to_json(self) -> dict[str, Any]:
        return {"checked": self.checked, "reason": self.reason, "samples": self.samples, "limits": self.limits,
                "outputs": [o.to_json() for o in self.outputs], "beyond_tolerance": len(self.beyond)}


def limits_text(limits: Limits) -> str:
    parts = [limits.elementwise.text()] if limits.elementwise is not None else []
    for name in ("max_abs", "max_rel", "cosine", "sqnr_db"):
        value = getattr(limits, name)
        if value is not None:
            parts.append(f"{name} {'>=' if name in ('cosine', 'sqnr_db') else '<='} {value:g}")
    return ", ".join(parts) or "none (finite values of the same shapes)"


def verify(before: Path, after: Path, samples: list[Sample], limits: Limits) -> Verification:
    """Run both models on every sample and measure each output of the original against the result's."""
    import onnxruntime as ort

    text = limits_text(limits)
    try:
        session_a = _session(ort, before)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own errors, said as the reason
        return Verification(False, f"onnxruntime cannot load the original model ({_first_line(exc)})", limits=text)
    names_a = [o.name for o in session_a.get_outputs()]
    try:
        session_b = _session(ort, after)
    except Exception as exc:  # noqa: BLE001
        return Verification(True, "", len(samples), [OutputCheck(
            n, note="", beyond=(f"onnxruntime cannot load the result ({_first_line(exc)})",)) for n in names_a], text)
    names_b = {o.name for o in session_b.get_outputs()}
    inputs_b = {i.name for i in session_b.get_inputs()}
    worst: dict[str, list[OutputCheck]] = {n: [] for n in names_a}
    for k, sample in enumerate(samples):
        try:
            values_a = session_a.run(names_a, sample)
        except Exception as exc:  # noqa: BLE001
            return Verification(False, f"the original model does not run on sample {k + 1} ({_first_line(exc)})",
                                limits=text)
        missing = sorted(inputs_b - set(sample))
        if missing:
            return Verification(True, "", len(samples), [OutputCheck(n, beyond=(
                f"the result needs input '{missing[0]}', which the original does not have",)) for n in names_a], text)
        kept = [n for n in names_a if n in names_b]
        try:
            values_b = dict(zip(kept, session_b.run(kept, {n: v for n, v in sample.items() if n in inputs_b}),
                                strict=True))
        except Exception as exc:  # noqa: BLE001
            return Verification(True, "", len(samples), [OutputCheck(n, beyond=(
                f"the result does not run ({_first_line(exc)})",)) for n in names_a], text)
        for name, a in zip(names_a, values_a, strict=True):
            worst[name].append(_check(name, a, values_b.get(name), limits))
    return Verification(True, "", len(samples), [_worst(name, checks, limits) for name, checks in worst.items()],
                        text)


def _session(ort: Any, path: Path) -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = 4  # a failing run is reported as the reason, not printed on the terminal too
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _check(name: str, a: Any, b: Any, limits: Limits) -> OutputCheck:
    """One sample's measures of one output (``beyond`` holds only what no measure says: a lost output, a new
    shape, values that differ or turn NaN; :func:`_worst` adds the limits crossed)."""
    if b is None:
        return OutputCheck(name, note="not an output of the result", beyond=("the result no longer has this output",))
    fa, fb = _numeric(a), _numeric(b)
    if fa is None or fb is None:
        same = _same(a, b)
        return OutputCheck(name, note="compared as values" if same else "values differ",
                           beyond=() if same else ("its values differ",))
    if fa.shape != fb.shape:
        return OutputCheck(name, note=f"shape {list(fa.shape)} became {list(fb.shape)}",
                           beyond=(f"its shape changed from {list(fa.shape)} to {list(fb.shape)}",))
    m = measure_arrays(fa, fb, limits.elementwise or DEFAULT_TOLERANCE)
    nan = bool(np.isfinite(fa).all()) and not bool(np.isfinite(fb).all())
    return OutputCheck(name, m.max_abs, m.max_rel, m.cosine, m.sqnr_db,
                       m.outside if limits.elementwise is not None else 0, "",
                       ("it has NaN or Inf where the original's values are finite",) if nan else ())


def _worst(name: str, checks: list[OutputCheck], limits: Limits) -> OutputCheck:
    """The output's worst measures over the samples, and the limits they cross."""
    if not checks:
        return OutputCheck(name, note="no sample was run")
    noted = next((c for c in checks if c.note and c.beyond), None) or next((c for c in checks if c.note), None)
    if noted is not None:
        return noted
    worst = OutputCheck(name, max(c.max_abs for c in checks), max(c.max_rel for c in checks),
                        min(c.cosine for c in checks), min(c.sqnr_db for c in checks), sum(c.outside for c in checks))
    measured = ValueDiff(name, -1, 0, worst.max_abs, worst.max_rel, worst.cosine, outside=worst.outside,
                         sqnr_db=worst.sqnr_db)
    beyond = [*limits.exceeded(measured), *dict.fromkeys(b for c in checks for b in c.beyond)]
    return replace(worst, beyond=tuple(beyond))


def _numeric(value: Any) -> np.ndarray | None:
    """A numeric array for an output: a tensor, or a sequence of maps (a ZipMap's probabilities, keys in order)."""
    if isinstance(value, np.ndarray):
        return value if value.dtype.kind in "biuf" else None
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        try:
            return np.array([[v[k] for k in sorted(v)] for v in value], dtype=np.float64)
        except (TypeError, ValueError):
            return None
    return None


def _same(a: Any, b: Any) -> bool:
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _db(x: float) -> str:
    return f"{x:.1f} dB" if math.isfinite(x) else "inf (identical)"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0]
    return (line[:300] + "...") if len(line) > 300 else line.rstrip(".")
