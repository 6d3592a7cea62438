"""Every model of the test data with its inputs, run by plain onnxruntime, and the comparison of a
capture's values with that run's (see tests/corpus/test_runner_corpus.py).

The cases: the ONNX conformance corpus (see onnx_data.py) with its ``test_data_set_0`` inputs, the
wheel's light models (no data: inputs generated with a fixed seed), the real exports of
``tests/data/exports`` with their saved ``inputs/*.npz``, and ``resources/examples`` (generated inputs). The plain run is an onnxruntime session (CPU,
graph optimizations off) of a copy of the model whose graph outputs also list the intermediate values.

    python tests/corpus_runs.py      # run every case, print the counts of values compared
"""

from __future__ import annotations

import functools
import math
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnx_data import corpus_models, model_id

from onnxviz.model.runner.capture import Captured
from onnxviz.model.runner.inputs import build_feeds, input_specs, symbolic_dims
from onnxviz.model.runner.ortvalues import ortvalue_array, to_ortvalue

EXPORTS = Path(__file__).resolve().parent / "data" / "exports"
EXAMPLES = Path(__file__).resolve().parents[1] / "resources" / "examples"
Feeds = dict[str, Any]

# Operators whose values are random draws (Dropout too, in training mode): without a seed attribute another
# session draws other numbers, so neither their values nor those computed from them are compared. A seeded
# draw is the same in every new session, and is compared.
RANDOM_OPS = frozenset({"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
                        "Multinomial", "Dropout"})


@dataclass(frozen=True)
class Case:
    """One model and where its inputs come from."""

    id: str
    path: Path
    feeds: Callable[[onnx.ModelProto], Feeds | None]


def cases() -> list[Case]:
    """The conformance models (the light ones without data), the exports, then the app's examples."""
    found = []
    for path in corpus_models():
        data = path.parent / "test_data_set_0"
        found.append(Case(model_id(path), path, functools.partial(_case_feeds, data=data) if data.is_dir()
                          else _generated_feeds))
    found += [Case(f"exports/{p.stem}", p, functools.partial(_npz_feeds, path=EXPORTS / "inputs" / f"{p.stem}.npz"))
              for p in sorted(EXPORTS.glob("*.onnx"))]
    return found + [Case(f"examples/{p.stem}", p, _generated_feeds) for p in sorted(EXAMPLES.glob("*.onnx"))]


def _numbered(folder: Path, prefix: str) -> list[Path]:
    return sorted(folder.glob(f"{prefix}_*.pb"), key=lambda f: int(f.stem.split("_")[1]))


def read_value(path: Path, info: onnx.ValueInfoProto) -> Any:
    """A conformance .pb as onnxruntime takes it: an array, a list, a dict, or None (an empty optional)."""
    kind = info.type.WhichOneof("value")
    proto: Any = {"sequence_type": onnx.SequenceProto, "optional_type": onnx.OptionalProto,
                  "map_type": onnx.MapProto}.get(kind, onnx.TensorProto)()
    proto.ParseFromString(path.read_bytes())
    read = {"sequence_type": numpy_helper.to_list, "optional_type": numpy_helper.to_optional,
            "map_type": numpy_helper.to_dict}.get(kind, numpy_helper.to_array)
    return read(proto)


def _case_feeds(model: onnx.ModelProto, data: Path) -> Feeds | None:
    initializers = {t.name for t in model.graph.initializer}
    infos = [v for v in model.graph.input if v.name not in initializers]
    files = _numbered(data, "input")
    if len(files) != len(infos):  # a case that feeds fewer inputs than declared: not a complete run
        return None
    return {info.name: read_value(f, info) for info, f in zip(infos, files, strict=True)}


def _generated_feeds(model: onnx.ModelProto) -> Feeds:
    specs = input_specs(model)
    return build_feeds(specs, {}, dict.fromkeys(symbolic_dims(specs), 1), seed=0)


def _npz_feeds(model: onnx.ModelProto, path: Path) -> Feeds:
    with np.load(path) as data:
        return {k: data[k].astype(object) if data[k].dtype.kind == "U" else data[k] for k in data.files}


def random_values(model: onnx.ModelProto) -> set[str]:
    """The main graph's values made by an unseeded random operator or computed from one (excluded)."""
    tainted: set[str] = set()
    for node in model.graph.node:  # conformance graphs are in order
        training = node.op_type != "Dropout" or (len(node.input) > 2 and node.input[2])
        unseeded = node.op_type in RANDOM_OPS and training and not any(a.name == "seed" for a in node.attribute)
        if unseeded or tainted.intersection(node.input):
            tainted.update(n for n in node.output if n)
    return tainted


def produced(model: onnx.ModelProto) -> list[str]:
    return [name for node in model.graph.node for name in node.output if name]


# -- the plain run ------------------------------------------------------------------------------------
def plain_session(model: onnx.ModelProto, extra: list[str]) -> Any:
    """A plain onnxruntime session of a copy of ``model`` whose outputs also list ``extra``."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    listed = {o.name for o in copy.graph.output}
    copy.graph.output.extend(onnx.ValueInfoProto(name=name) for name in extra if name not in listed)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    return ort.InferenceSession(copy.SerializeToString(), options, providers=["CPUExecutionProvider"])


def plain_run(model: onnx.ModelProto, feeds: Feeds) -> dict[str, Any]:
    """The graph outputs of a plain session (raises when onnxruntime cannot run the model), and every
    intermediate value a session exposing it as an extra output gives (see :func:`exposed`)."""
    outputs = _run(plain_session(model, []), feeds)
    return {**exposed(model, feeds, [n for n in produced(model) if n not in outputs]), **outputs}


def exposed(model: onnx.ModelProto, feeds: Feeds, names: list[str]) -> dict[str, Any]:
    """``names`` from one session listing them all as outputs; a batch whose session fails is split in
    two until each value is tried alone (a value onnxruntime cannot hand back is left out)."""
    if not names:
        return {}
    try:
        return _run(plain_session(model, names), feeds)
    except Exception:  # noqa: BLE001 - onnxruntime's own exception types
        if len(names) == 1:
            return {}
    half = len(names) // 2
    return {**exposed(model, feeds, names[:half]), **exposed(model, feeds, names[half:])}


_ML_TYPES = ("bfloat16", "float8", "float4", "int4", "int2")  # element types numpy has only through ml_dtypes


def _run(session: Any, feeds: Feeds) -> dict[str, Any]:
    """onnxruntime's own run() and numpy conversion; for what that refuses (ml_dtypes inputs, bfloat16
    and 4-bit outputs), OrtValues read as capture reads them."""
    wanted = {i.name for i in session.get_inputs()}
    feeds = {k: v for k, v in feeds.items() if k in wanted}
    outputs = [o.name for o in session.get_outputs()]
    if not any(t in o.type for o in session.get_outputs() for t in _ML_TYPES):  # newer releases hand float8 as uint8
        try:
            return dict(zip(outputs, session.run(outputs, feeds), strict=True))
        except (RuntimeError, TypeError) as exc:
            if "Numpy" not in str(exc):
                raise
    fetched = session.run_with_ort_values(outputs, {k: to_ortvalue(v) for k, v in feeds.items()})
    return {name: ortvalue_array(v) for name, v in zip(outputs, fetched, strict=True)}


# -- the comparison ---------------------------------------------------------------------------------
def kind_of(value: Any, declared: str) -> str:
    """tensor, sequence, map (a map, or a ZipMap's sequence of maps) or optional (by its declared type)."""
    if declared == "optional_type" or value is None:
        return "optional"
    if isinstance(value, dict) or (isinstance(value, list) and value and isinstance(value[0], dict)):
        return "map"
    return "sequence" if isinstance(value, list) else "tensor"


def same_tensor(got: np.ndarray, expected: np.ndarray) -> bool:
    """Same dtype, shape and values; NaN equals NaN (bytes compared for ml_dtypes' types). A run's
    stored strings read back as unicode (no pickled objects on disk): the same strings as onnxruntime's."""
    if got.dtype.kind == "U" and expected.dtype == object:
        got = got.astype(object)
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return False
    if expected.dtype.kind == "V" or type(expected.dtype).__module__.startswith("ml_dtypes") or \
            expected.dtype.kind not in "biufcOUS?":
        return got.tobytes() == expected.tobytes()
    return bool(np.array_equal(got, expected, equal_nan=expected.dtype.kind in "fc"))


def same_json(got: Any, expected: Any) -> bool:
    """A value capture keeps as JSON (structured.py) against onnxruntime's Python object: sequences
    element by element, maps key by key, tensors inside them value by value, None for an empty optional."""
    if expected is None or got is None:
        return got is None and expected is None
    if isinstance(expected, np.ndarray):
        return _same_json_tensor(got, expected)
    if isinstance(expected, dict):
        keys = {_json_key(k): v for k, v in expected.items()}
        return isinstance(got, dict) and got.keys() == keys.keys() and all(same_json(got[k], keys[k]) for k in keys)
    if isinstance(expected, (list, tuple)):
        return isinstance(got, list) and len(got) == len(expected) and \
            all(same_json(g, e) for g, e in zip(got, expected, strict=True))
    return _same_scalar(got, expected)


def _json_key(key: Any) -> str:
    key = key.item() if isinstance(key, np.generic) else key
    return key.decode() if isinstance(key, bytes) else str(key)


def _same_json_tensor(got: Any, expected: np.ndarray) -> bool:
    if expected.size == 0:  # JSON keeps no shape of an empty tensor: [] or nested empty lists
        return np.asarray(got, dtype=object).size == 0
    flat = np.asarray(got, dtype=object)
    if flat.shape != expected.shape:
        return False
    return all(_same_scalar(g, e) for g, e in zip(flat.ravel().tolist(), expected.ravel().tolist(), strict=True))


def _same_scalar(got: Any, expected: Any) -> bool:
    expected = expected.item() if isinstance(expected, np.generic) else expected
    if isinstance(expected, bytes):
        expected = expected.decode()
    if isinstance(expected, float):
        if math.isnan(expected):
            return got == "NaN"
        if math.isinf(expected):
            return got == ("Infinity" if expected > 0 else "-Infinity")
        return isinstance(got, (int, float)) and got == expected
    return type(got) is type(expected) and got == expected


@dataclass
class Compared:
    """What one case compared: value counts by kind, and the names that differed."""

    kinds: Counter[str]
    differ: list[str]
    missing: list[str]


def compare(model: onnx.ModelProto, captured: Captured, plain: dict[str, Any]) -> Compared:
    """Every graph output, and every main-graph value capture kept that the plain run exposed."""
    skip = random_values(model)
    declared = {v.name: v.type.WhichOneof("value") or "" for v in [*model.graph.value_info, *model.graph.output]}
    kinds: Counter[str] = Counter()
    differ, missing = [], []
    for name in dict.fromkeys([o.name for o in model.graph.output] + produced(model)):
        if name in skip or name not in plain:
            continue
        expected = plain[name]
        if name in captured.values:
            ok = isinstance(expected, np.ndarray) and same_tensor(captured.values[name], expected)
        elif name in captured.structured:
            ok = same_json(captured.structured[name], expected)
        else:
            missing.append(name)
            continue
        kinds[kind_of(expected, declared.get(name, ""))] += 1
        if not ok:
            differ.append(name)
    return Compared(kinds, differ, missing)


def main() -> None:
    from onnxviz.model.runner.capture import capture

    totals: Counter[str] = Counter()
    for case in cases():
        model = onnx.load(str(case.path))
        feeds = case.feeds(model)
        try:
            plain = plain_run(model, feeds) if feeds is not None else None
        except Exception:  # noqa: BLE001
            plain = None
        if plain is None:
            totals["not run by onnxruntime"] += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            captured = capture(model, feeds)
        done = compare(model, captured, plain)
        totals["models"] += 1
        totals.update(done.kinds)
        totals["random values not compared"] += len(random_values(model))
        totals["body values not compared"] += sum(len(body.values) for body in captured.bodies)
        totals["intermediates not exposed"] += len(set(produced(model)) - set(plain))
        if done.differ or done.missing:
            print(case.id, "differ", done.differ[:3], "missing", done.missing[:3])
    print(dict(totals))


if __name__ == "__main__":
    sys.exit(main())
