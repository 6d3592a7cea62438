"""The transforms themselves, each a call into the field's own library (in the transform's worker process:
they import onnxslim, onnxscript, onnxsim or onnxruntime's quantizers, and any of them may crash).

Each reads the model at ``source`` (weights inside it) and writes its result to ``target``; it returns
notes for the user (what it did not do, and why), and raises TransformError in one sentence.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx

from onnxviz.model.transform.calibration import Sample
from onnxviz.model.transform.catalog import (
    ONNXSCRIPT,
    ONNXSLIM,
    OPSET,
    ORT_OPTIMIZE,
    QUANTIZE_DYNAMIC,
    QUANTIZE_INT4,
    QUANTIZE_STATIC,
    SIMPLIFY,
    TOOLS,
    Settings,
    TransformError,
)

Notes = list[str]


def apply(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    """Run ``settings.tool`` on the model at ``source``, its result written to ``target``."""
    missing = TOOLS[settings.tool].missing()
    if missing:
        raise TransformError(missing)
    if settings.exclude:
        _check_names(source, settings.exclude)
    return _RUNNERS[settings.tool](settings, source, target, samples)


def _check_names(source: Path, names: tuple[str, ...]) -> None:
    present = {n.name for n in onnx.load(str(source), load_external_data=False).graph.node}
    unknown = [n for n in names if n not in present]
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise TransformError(f"the model has no node named '{unknown[0]}'{more} to keep in float.")


def _save(model: onnx.ModelProto, target: Path) -> None:
    try:
        onnx.save(model, str(target))
    except ValueError as exc:  # protobuf's 2 GiB limit
        raise TransformError("the result is bigger than 2 GiB, which onnxviz cannot transform yet.", str(exc)) from exc


def _onnxslim(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    import onnxslim

    _save(onnxslim.slim(str(source)), target)
    return []


def _onnxscript(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    optimizer = importlib.import_module("onnxscript.optimizer")
    _save(optimizer.optimize(onnx.load(str(source))), target)
    return []


_LEVELS = {"basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def _ort_optimize(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, _LEVELS[settings.level])
    options.optimized_model_filepath = str(target)
    options.log_severity_level = 3
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    if settings.level == "all":
        return ["onnxruntime's 'all' level lays data out for this machine's CPU (NCHWc): the result runs on "
                "onnxruntime's CPU provider of a machine like this one, and nowhere else"]
    return []


def _simplify(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    import onnxsim

    simplified, ok = onnxsim.simplify(onnx.load(str(source)))
    if not ok:
        raise TransformError("onnx-simplifier's own check of its result failed.")
    _save(simplified, target)
    return []


def _opset(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    model = onnx.load(str(source))
    current = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if current == settings.opset:
        raise TransformError(f"the model already uses opset {current}.")
    try:
        converted = onnx.version_converter.convert_version(model, settings.opset)
    except Exception as exc:  # noqa: BLE001 - the converter raises plain RuntimeErrors
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise TransformError(f"onnx's version converter could not convert the model to opset {settings.opset}: "
                             f"{first.rstrip('.')}.", str(exc)) from exc
    _save(converted, target)
    return []


def _quant_type(name: str) -> object:
    from onnxruntime.quantization import QuantType

    return {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8, "int16": QuantType.QInt16,
            "uint16": QuantType.QUInt16}[name]


def _quantize_dynamic(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    from onnxruntime.quantization import quantize_dynamic

    quantize_dynamic(str(source), str(target), per_channel=settings.per_channel, reduce_range=settings.reduce_range,
                     weight_type=_quant_type(settings.weight_type), nodes_to_exclude=list(settings.exclude))
    return []


class _Reader:
    """onnxruntime's CalibrationDataReader over the samples (subclassed when onnxruntime is imported)."""

    def __init__(self, samples: list[Sample]) -> None:
        self._samples: Iterator[Sample] = iter(samples)

    def get_next(self) -> Sample | None:
        return next(self._samples, None)


def _quantize_static(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        quantize_static,
    )

    reader = type("SampleReader", (_Reader, CalibrationDataReader), {})(samples)
    method = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
              "percentile": CalibrationMethod.Percentile}[settings.calibration_method]
    quantize_static(str(source), str(target), reader,
                    quant_format=QuantFormat.QDQ if settings.quant_format == "qdq" else QuantFormat.QOperator,
                    per_channel=settings.per_channel, reduce_range=settings.reduce_range,
                    activation_type=_quant_type(settings.activation_type), weight_type=_quant_type(settings.weight_type),
                    nodes_to_exclude=list(settings.exclude), calibrate_method=method)
    return []


def _quantize_int4(settings: Settings, source: Path, target: Path, samples: list[Sample]) -> Notes:
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    quantizer = MatMulNBitsQuantizer(onnx.load(str(source)), block_size=settings.block_size,
                                     is_symmetric=settings.symmetric, accuracy_level=settings.accuracy_level or None,
                                     nodes_to_exclude=list(settings.exclude))
    quantizer.process()
    _save(quantizer.model.model, target)
    return []


_RUNNERS: dict[str, Callable[[Settings, Path, Path, list[Sample]], Notes]] = {
    ONNXSLIM: _onnxslim, ONNXSCRIPT: _onnxscript, ORT_OPTIMIZE: _ort_optimize, SIMPLIFY: _simplify, OPSET: _opset,
    QUANTIZE_DYNAMIC: _quantize_dynamic, QUANTIZE_STATIC: _quantize_static, QUANTIZE_INT4: _quantize_int4,
}


def samples_for_calibration(samples: list[Sample]) -> list[Sample]:
    """The samples as onnxruntime's calibration reads them: contiguous arrays."""
    return [{k: np.ascontiguousarray(v) for k, v in s.items()} for s in samples]
