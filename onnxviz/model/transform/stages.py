"""The steps of a transform, each a job of the transform's worker process (see :mod:`.pipeline`), working on
files in the transform's private folder: ``before.onnx`` (the model, its weights inside), ``after.onnx`` (the
result) and ``tool.log`` (what the library printed). Each step returns a :class:`Reply`: a value, or the
error's one sentence and details (an exception's details would not survive the trip between processes).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.disk import reason
from onnxviz.model.matching.crossrun import Limits
from onnxviz.model.transform.calibration import RANDOM_WARNING, Sample, generated_samples, read_samples
from onnxviz.model.transform.catalog import QUANTIZE_STATIC, Settings, TransformError
from onnxviz.model.transform.inline import MAX_PROTOBUF, inline_weights
from onnxviz.model.transform.summary import Figures, Summary
from onnxviz.model.transform.timing import Timing, time_paths
from onnxviz.model.transform.verify import Verification, verify

BEFORE, AFTER, LOG = "before.onnx", "after.onnx", "tool.log"
CHECK_SAMPLES = 2  # generated inputs the outputs are compared on, when none are given
VERIFY_SAMPLES = 8  # at most this many of the calibration samples are run to compare the outputs
_HISTOGRAM = "Too many bins for data range"  # numpy's error for a histogram over float32's whole range
LOG_TAIL = 4000  # characters of the library's output kept with an error's details

_samples: dict[str, list[Sample]] = {}  # folder -> the inputs of the transform working there


@dataclass
class Reply:
    value: Any = None
    error: str = ""
    details: str = ""
    notes: list[str] = field(default_factory=list)


def run_step(name: str, *args: Any) -> Reply:
    """In the worker: the step ``name`` with ``args``: its result (a Reply, or a value wrapped in one), or its
    error in one sentence."""
    try:
        out = _STEPS[name](*args)
        return out if isinstance(out, Reply) else Reply(out)
    except OnnxvizError as exc:
        return Reply(error=exc.message, details=exc.details)
    except MemoryError:
        return Reply(error="the transform ran out of memory.")
    except OSError as exc:  # the step's or its library's files: in words, never errno text
        folder = args[0] if args and isinstance(args[0], str) else ""
        return Reply(error=working_files_error(exc, folder), details=traceback.format_exc())
    except Exception as exc:  # noqa: BLE001 - a library's failure, said in one sentence
        return Reply(error=_failure(exc), details=traceback.format_exc())


_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})


def working_files_error(exc: OSError, folder: str = "") -> str:
    """A transform's file error in one sentence: its working files (in ``folder``, a folder of its own in the
    temporary folder, TMPDIR) could not be written, or another file could not be read."""
    if exc.errno in _WRITE_ERRORS:
        where = Path(folder).parent if folder else Path(tempfile.gettempdir())
        return f"the transform could not write its working files in {where}: {reason(exc)}; the model is unchanged."
    return f"the transform stopped: {reason(exc)}; the model is unchanged."


def _failure(exc: BaseException) -> str:
    text = (str(exc).strip().splitlines() or [""])[0][:300].rstrip(".")
    return f"{type(exc).__name__}: {text}." if text else f"{type(exc).__name__}."


def _failed(settings: Settings, exc: BaseException) -> str:
    """The sentence for the library's exception: what it said, and what to do where the cause is known."""
    said = f"{settings.label()} failed ({_failure(exc)[:-1]})"
    if settings.tool == QUANTIZE_STATIC and settings.calibration_method != "minmax" and _HISTOGRAM in str(exc):
        return (f"{said}: onnxruntime's {settings.calibration_method} calibration cannot make a histogram of a "
                "value that holds float32's extreme numbers (an attention mask's -3.4e38, for one); MinMax "
                "calibration works on such a model.")
    return f"{said}."


# -- the steps ------------------------------------------------------------------------------------------------
def _prepare(folder: str, source: bytes | str, base_dir: str | None) -> Reply:
    """The model written to ``before.onnx`` with its external weights read in (from ``base_dir`` only)."""
    model = onnx.load_from_string(source) if isinstance(source, bytes) else onnx.load(source, load_external_data=False)
    count = inline_weights(model, Path(base_dir) if base_dir else None)
    if model.ByteSize() > MAX_PROTOBUF:
        raise TransformError("the model is bigger than 2 GiB, which onnxviz cannot transform yet.")
    onnx.save(model, str(Path(folder) / BEFORE))
    return Reply(count)


def _inputs(folder: str, settings: Settings) -> Reply:
    """The inputs: the calibration files, else generated ones (a warning for a static quantization)."""
    from onnxviz.model.runner.inputs import input_specs

    model = onnx.load(str(Path(folder) / BEFORE), load_external_data=False)
    specs = input_specs(model)
    notes = []
    if settings.calibration:
        samples = read_samples(settings.calibration, specs)
    else:
        count = settings.samples if settings.tool == QUANTIZE_STATIC else CHECK_SAMPLES
        samples = generated_samples(specs, count, dict(settings.dims), settings.seed)
        if settings.tool == QUANTIZE_STATIC:
            notes.append(RANDOM_WARNING)
    _samples[folder] = samples
    return Reply(len(samples), notes=notes)


def _transform(folder: str, settings: Settings) -> Reply:
    """The tool run on ``before.onnx``, its result in ``after.onnx``; what it printed goes to ``tool.log``."""
    from onnxviz.model.transform.tools import apply, samples_for_calibration

    place = Path(folder)
    samples = samples_for_calibration(_samples.get(folder, []))
    started = time.perf_counter()
    try:
        with _printing_to(place / LOG), _in_folder(place):
            notes = apply(settings, place / BEFORE, place / AFTER, samples)
    except OnnxvizError as exc:
        raise TransformError(exc.message, _with_log(exc.details, place)) from exc
    except Exception as exc:  # noqa: BLE001
        raise TransformError(_failed(settings, exc), _with_log(traceback.format_exc(), place)) from exc
    if not (place / AFTER).is_file():
        raise TransformError(f"{settings.label()} wrote no model.", _with_log("", place))
    return Reply(time.perf_counter() - started, notes=notes)


def _check(folder: str) -> Reply:
    """onnx's full check of the result: an error the original does not have too refuses it; one both have is
    a note."""
    place = Path(folder)
    problem = _checker_problem(place / AFTER)
    if not problem:
        return Reply()
    if _checker_problem(place / BEFORE):
        return Reply(notes=[f"onnx's checker finds a problem in the result, as in the original: {problem}"])
    raise TransformError(f"the result fails onnx's checker: {problem}", problem)


def _checker_problem(path: Path) -> str:
    try:
        onnx.checker.check_model(str(path), full_check=True)
    except Exception as exc:  # noqa: BLE001 - the checker's ValidationError, shape inference's errors
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    return ""


def _verify(folder: str, limits: Limits) -> Reply:
    """The outputs of the result against the original's on the transform's inputs; the first sample comes back
    (the inputs a later comparison of the two models runs on)."""
    place = Path(folder)
    samples = _samples.get(folder, [])
    result: Verification = verify(place / BEFORE, place / AFTER, samples[:VERIFY_SAMPLES], limits)
    return Reply((result, samples[0] if samples else {}))


def _figures(folder: str) -> Reply:
    place = Path(folder)
    return Reply(Summary(figures_of(place / BEFORE), figures_of(place / AFTER)))


def figures_of(path: Path) -> Figures:
    """The Model panel's figures of the model file at ``path`` (its shapes inferred, contrib operators too)."""
    from onnxviz.model.background.jobs import figures_job, unpack_figures

    data = path.read_bytes()
    figures = unpack_figures(figures_job(data))
    costs = figures.costs.summary()
    nodes = len(onnx.load_from_string(data).graph.node)
    return Figures(nodes, dict(figures.op_counts), figures.parameters, figures.parameter_bytes, len(data),
                   costs.macs + sum(macs for _, macs, _ in figures.bodies), costs.unknown_nodes)


def _release(folder: str) -> Reply:
    _samples.pop(folder, None)
    return Reply()


def _timing(paths: list[str], sample: Sample, runs: int) -> Reply:
    timings: list[Timing] = time_paths([Path(p) for p in paths], [sample], runs)
    return Reply(timings)


_STEPS: dict[str, Callable[..., Any]] = {
    "prepare": _prepare, "inputs": _inputs, "transform": _transform, "check": _check, "verify": _verify,
    "figures": _figures, "release": _release, "timing": _timing,
}


# -- what the libraries print ------------------------------------------------------------------------------------
@contextlib.contextmanager
def _printing_to(log: Path) -> Iterator[None]:
    """The process's stdout and stderr (Python's and C's) into ``log``: a library's tables and logging stay out
    of the window's terminal, and the end of them goes with an error's details."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(log, "ab") as f:
            os.dup2(f.fileno(), 1)
            os.dup2(f.fileno(), 2)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


@contextlib.contextmanager
def _in_folder(folder: Path) -> Iterator[None]:
    """The transform's folder as the working directory: what a library writes beside itself stays there."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _with_log(details: str, folder: Path) -> str:
    try:
        text = (folder / LOG).read_text(errors="replace")
    except OSError:
        return details
    tail = text[-LOG_TAIL:]
    return f"{details}\n\nWhat the library printed (the end):\n{tail}" if tail.strip() else details
