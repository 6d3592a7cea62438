"""The transforms onnxviz offers, the packages they need, and the settings of one transform.

Nothing here imports a transform library: the window lists the transforms (and says how to install a
missing one) without loading any of them; :mod:`.tools` runs them, in the transform's worker process.
"""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from onnxviz.model.errors import OnnxvizError

ONNXSLIM = "onnxslim"
ONNXSCRIPT = "onnxscript"
ORT_OPTIMIZE = "ort-optimize"
SIMPLIFY = "simplify"
QUANTIZE_DYNAMIC = "quantize-dynamic"
QUANTIZE_STATIC = "quantize-static"
QUANTIZE_INT4 = "quantize-int4"
OPSET = "opset"
EXTRA = "onnxviz[transform]"  # the optional extra that installs onnxslim and onnxscript


@dataclass(frozen=True)
class Tool:
    """One transform: its command-line name, its menu title, what it does, the module it needs (``package``,
    installed as ``pip``; '' when onnx or onnxruntime, always present, do it) and whether it keeps the
    outputs (``lossless``: checked against the elementwise tolerance; a quantization is not)."""

    name: str
    title: str
    summary: str
    package: str = ""
    pip: str = ""
    lossless: bool = True

    @property
    def quantizes(self) -> bool:
        return self.name.startswith("quantize")

    def missing(self) -> str:
        """How to install this tool's library when it is missing, in one sentence; '' when it is installed."""
        if not self.package or _installed(self.package):
            return ""
        if self.pip in ("onnxslim", "onnxscript"):
            how = f"pip install '{EXTRA}' (or pip install {self.pip})"
        else:
            how = f"pip install {self.pip}"
        return f"{self.title} needs {self.pip}, which is not installed: {how}, then restart onnxviz."


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a broken install, or a module set to None in sys.modules
        return False


TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool(ONNXSLIM, "Slim with onnxslim", "constant folding, dead-code removal and operator fusions of onnxslim",
         "onnxslim", "onnxslim"),
    Tool(ONNXSCRIPT, "Optimize with onnxscript", "onnxscript's optimizer: constant folding, function inlining "
         "and its rewrite rules", "onnxscript", "onnxscript"),
    Tool(ORT_OPTIMIZE, "Optimize with onnxruntime", "onnxruntime's graph optimizations at a chosen level, saved as "
         "a model (com.microsoft fusions from 'extended')"),
    Tool(SIMPLIFY, "Simplify with onnx-simplifier", "onnx-simplifier (onnxsim): constant folding checked by "
         "running the model", "onnxsim", "onnxsim"),
    Tool(OPSET, "Convert Opset", "onnx's version converter to another default-domain opset"),
    Tool(QUANTIZE_DYNAMIC, "Quantize Dynamic (int8)", "onnxruntime's quantize_dynamic: int8 weights, activations "
         "quantized at run time", lossless=False),
    Tool(QUANTIZE_STATIC, "Quantize Static (int8)", "onnxruntime's quantize_static, calibrated on input files "
         "(QDQ or QOperator)", lossless=False),
    Tool(QUANTIZE_INT4, "Quantize Weights to 4 Bits", "onnxruntime's MatMulNBitsQuantizer: 4-bit weight-only "
         "MatMulNBits by blocks", lossless=False),
)}

LEVELS = ("basic", "extended", "all")  # onnxruntime's graph optimization levels a model can be saved at
QUANT_FORMATS = ("qdq", "qoperator")
QUANT_TYPES = ("int8", "uint8", "int16", "uint16")
CALIBRATION_METHODS = ("minmax", "entropy", "percentile")


class TransformError(OnnxvizError):
    """The transform failed or was refused; the model it was given is unchanged."""


@dataclass(frozen=True)
class Settings:
    """What one transform is asked to do (``tool`` names it; the other fields are its options; those of other
    tools are ignored). Plain data: it goes to the worker process, into a variant's row and into ``--json``."""

    tool: str
    level: str = "extended"              # ort-optimize
    opset: int = 0                       # opset: the target default-domain version
    quant_format: str = "qdq"            # quantize-static
    per_channel: bool = False            # quantize-dynamic, quantize-static
    reduce_range: bool = False           # quantize-dynamic, quantize-static (7-bit weights, for older CPUs)
    activation_type: str = "uint8"       # quantize-static
    weight_type: str = "int8"            # quantize-dynamic, quantize-static
    calibration_method: str = "minmax"   # quantize-static
    calibration: tuple[str, ...] = ()    # quantize-static: input files or folders (.npz/.npy/.pb); () generates
    samples: int = 8                     # quantize-static: generated calibration inputs when no files are given
    block_size: int = 32                 # quantize-int4
    symmetric: bool = True               # quantize-int4
    accuracy_level: int = 0              # quantize-int4: MatMulNBits' accuracy_level (0: not set)
    exclude: tuple[str, ...] = ()        # quantizations: names of the nodes kept in float
    dims: tuple[tuple[str, int], ...] = field(default=())  # sizes of symbolic dimensions for generated inputs
    seed: int = 0                        # of generated inputs

    def __post_init__(self) -> None:
        problem = self.problem()
        if problem:
            raise TransformError(problem)

    @property
    def spec(self) -> Tool:
        return TOOLS[self.tool]

    def problem(self) -> str:
        """Why these settings are not valid, in one sentence ('' when they are)."""
        if self.tool not in TOOLS:
            return f"'{self.tool}' is not a transform; use one of {', '.join(TOOLS)}."
        choices = (("level", LEVELS), ("quant_format", QUANT_FORMATS), ("activation_type", QUANT_TYPES),
                   ("weight_type", QUANT_TYPES), ("calibration_method", CALIBRATION_METHODS))
        for name, allowed in choices:
            if getattr(self, name) not in allowed:
                return f"{name.replace('_', ' ')} must be one of {', '.join(allowed)}, not '{getattr(self, name)}'."
        if self.tool == OPSET and self.opset < 1:
            return "say which opset to convert to (a version from 1)."
        if self.tool == QUANTIZE_INT4 and (self.block_size < 16 or self.block_size & (self.block_size - 1)):
            return f"the block size must be a power of 2 from 16, not {self.block_size}."
        if self.tool == QUANTIZE_STATIC and self.quant_format == "qoperator" and \
                "16" in self.activation_type + self.weight_type:
            return "16-bit types need the QDQ format (onnxruntime's QOperator format quantizes to 8 bits only)."
        if self.samples < 1:
            return f"calibration needs at least 1 generated sample, not {self.samples}."
        return ""

    def options(self) -> dict[str, Any]:
        """The options this tool uses, by name (for a variant's row and ``--json``)."""
        used = _USED.get(self.tool, ())
        values = asdict(self)
        out = {name: values[name] for name in used}
        if "calibration" in out:
            out["calibration"] = list(self.calibration) or f"{self.samples} generated samples"
        elif self.calibration:
            out["inputs"] = list(self.calibration)
        if "exclude" in out:
            out["exclude"] = list(self.exclude)
        return out

    def label(self) -> str:
        """The undo step's and the variant's name, e.g. 'Quantize static (QDQ, per channel, 2 in float)'."""
        t = self.tool
        if t == ORT_OPTIMIZE:
            return f"Optimize with onnxruntime ({self.level})"
        if t == OPSET:
            return f"Convert to opset {self.opset}"
        if t == QUANTIZE_DYNAMIC:
            parts = [self.weight_type] + (["per channel"] if self.per_channel else [])
            return f"Quantize dynamic ({', '.join(parts + self._excluded())})"
        if t == QUANTIZE_STATIC:
            parts = [self.quant_format.upper() if self.quant_format == "qdq" else "QOperator",
                     f"{self.activation_type}/{self.weight_type}"] + (["per channel"] if self.per_channel else [])
            return f"Quantize static ({', '.join(parts + self._excluded())})"
        if t == QUANTIZE_INT4:
            return f"Quantize to 4 bits ({', '.join([f'block {self.block_size}'] + self._excluded())})"
        return TOOLS[t].title

    def _excluded(self) -> list[str]:
        return [f"{len(self.exclude)} in float"] if self.exclude else []

    def excluding(self, names: tuple[str, ...]) -> Settings:
        return replace(self, exclude=tuple(dict.fromkeys(names)))


_USED: dict[str, tuple[str, ...]] = {
    ORT_OPTIMIZE: ("level",),
    OPSET: ("opset",),
    QUANTIZE_DYNAMIC: ("weight_type", "per_channel", "reduce_range", "exclude"),
    QUANTIZE_STATIC: ("quant_format", "activation_type", "weight_type", "per_channel", "reduce_range",
                      "calibration_method", "calibration", "exclude"),
    QUANTIZE_INT4: ("block_size", "symmetric", "accuracy_level", "exclude"),
}
SETTING_NAMES = tuple(f.name for f in fields(Settings))
