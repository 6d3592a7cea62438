"""onnx's checker and shape inference, and onnxruntime's session, run where a native crash is contained.

They are C++, and some files make them crash: a 36-byte model whose RegexFullMatch reads an undefined input
makes onnx's shape inference dereference a null type (SIGSEGV), as does a LabelEncoder with keys reading one.
So they never run in the caller's process (the command line, a script's, the window's): a child forked for
the job where the caller may fork (no threads, no Qt: the command line, most scripts; ~20-50 ms, no interpreter
to start), else the shared worker process (:mod:`.procpool`); a crash costs only that process. The caller then
gets one sentence naming what crashed and on which node ("onnx's shape inference crashed on node 0
(RegexFullMatch)"), found by :func:`crash_cause`: in a process of its own, each step of the checks (the checker,
shape inference, onnxruntime's session) is tried on the model, then the crashing one on prefixes of its main
graph (each step goes through the nodes in order), each try in a child forked for it (a few ms each).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeVar

import onnx

from onnxviz.model.background.procpool import CHECKS, WorkerDied, WorkerProcess, shared_worker
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.session_check import runtime_problems
from onnxviz.model.graph.validation import (
    InferenceResult,
    PackedValidation,
    ValidationResult,
    check_model,
    checker_problem,
    has_error,
    infer_types,
    pack,
    slimmed,
    unpack,
    validate,
)
from onnxviz.model.io.digest import digest_of
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.progress import CancelToken
from onnxviz.model.text import quoted_name

T = TypeVar("T")


@dataclass(frozen=True)
class Step:
    """A step of the work done on a model in the worker, as the triage tries it alone: ``label`` names the
    library in a sentence, ``source`` the problem's source, ``run`` does it on a model's bytes (a module-level
    function, or a partial of one: it travels to the triage's process)."""

    label: str
    source: str
    run: Callable[[bytes], object]


def _checker(light: bytes) -> None:
    checker_problem(light)


def _inference(light: bytes) -> None:
    infer_types(light, strict=True, contrib=False)
    infer_types(light)


def _runtime(light: bytes) -> None:
    runtime_problems(onnx.ModelProto.FromString(light), light, light)


CHECKER = Step("onnx's checker", "checker", _checker)
INFERENCE = Step("onnx's shape inference", "shape_inference", _inference)
RUNTIME = Step("onnxruntime", "onnxruntime", _runtime)
STEPS = (CHECKER, INFERENCE, RUNTIME)  # in the order the checks run them


class NativeCrash(OnnxvizError):
    """A library of the field crashed on the model (its process is gone; the caller's is not)."""

    def __init__(self, cause: CrashCause) -> None:
        super().__init__(cause.sentence)
        self.cause = cause


@dataclass(frozen=True)
class CrashCause:
    """What crashed (``step``: None when no step crashed again alone) and on which node of the main graph
    (-1: none could be told), with the signal that ended the process."""

    step: Step | None
    node: int = -1
    op_type: str = ""
    name: str = ""
    signal: int = 0

    @property
    def sentence(self) -> str:
        if self.step is None:
            return "a library crashed on the model, and trying each of its steps alone did not crash it again."
        if self.node < 0:
            return f"{self.step.label} crashed on this model."
        name = f" '{quoted_name(self.name)}'" if self.name else ""
        return f"{self.step.label} crashed on node {self.node}{name} ({quoted_name(self.op_type)})."

    def problem(self) -> Problem:
        """The crash as an error on its node: what crashed here crashes onnxruntime's load of the model too
        (it runs onnx's shape inference), so the model cannot be run as it is."""
        source = self.step.source if self.step is not None else "validation"
        return Problem(Severity.ERROR, self.sentence.rstrip("."), source, node=self.node, node_name=self.name)


# -- the checks, in the worker ---------------------------------------------------------------------------
def check_job(data: bytes, runtime: bool) -> list[Problem]:
    """In the worker: ``onnx check``'s problems (the checker and strict shape inference; then, with ``runtime``
    and when these found no error, what onnxruntime refuses)."""
    problems = check_model(data)
    if runtime and not has_error(problems):
        problems += runtime_problems(onnx.ModelProto.FromString(data), data)
    return problems


def validate_job(data: bytes, generation: int, runtime: bool) -> PackedValidation:
    """In the worker: the validation of ``doc.check()`` (:func:`~onnxviz.model.graph.validation.validate`);
    onnxruntime's check only with ``runtime`` (the caller's own problems have no error)."""
    return pack(validate(data, None, generation, runtime=runtime))


def types_job(data: bytes) -> InferenceResult:
    """In the worker: shape inference's types (lenient)."""
    return infer_types(data)


def run_checks(job: Callable[..., T], data: bytes, *args: object, steps: Sequence[Step] = STEPS,
               token: CancelToken | None = None, role: str = CHECKS) -> T:
    """``job(data, *args)`` in a child forked for it when this process may fork (:func:`may_fork`: the command
    line, a script: ~10 ms, no interpreter to start), else in the shared worker process of ``role``; raises
    :class:`NativeCrash` naming the step of ``steps`` that crashed it, and where."""
    if may_fork():
        return crash_named(lambda: forked(job, data, *args), data, steps, token)
    return crash_named(lambda: shared_worker(role).run(job, data, *args, token=token), data, steps, token)


def may_fork() -> bool:
    """Whether a child forked from this process can run onnx's C++ safely: a POSIX system, and no thread of
    Python's and no Qt application here (the window's threads hold locks a child would wait on for ever; the
    threads a numeric library keeps idle are made safe by its own fork handlers)."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    qt = sys.modules.get("PySide6.QtCore")  # looked up, not imported: this layer has no Qt
    return qt is None or qt.QCoreApplication.instance() is None


def forked(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` in a forked child, its result (or exception) sent back pickled; raises WorkerDied with the
    signal that ended the child if it crashed."""
    return fork_job(fn, *args)()


def fork_job(fn: Callable[..., T], *args: object) -> Callable[[], T]:
    """:func:`forked`, begun: the child is forked now; the call returned waits for its answer (once)."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        try:
            answer: tuple[bool, object] = (True, fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
            answer = (False, exc)
        try:
            payload = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
            payload = pickle.dumps((False, OnnxvizError(f"the check failed: {exc}")))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)

    def wait() -> T:
        return _answer(read_end, pid)  # type: ignore[no-any-return]  # fn's result
    return wait


def _answer(read_end: int, pid: int) -> Any:
    """The answer of the child ``pid`` (see :func:`fork_job`), read from ``read_end``."""
    with os.fdopen(read_end, "rb") as answers:
        payload = answers.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) or not payload:
        ended_by = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        raise WorkerDied("the checks' process stopped unexpectedly.", signal=ended_by)
    ok, value = pickle.loads(payload)  # noqa: S301 - this process's own child wrote it
    if not ok:
        raise value  # an exception, as sent
    return value


def crash_named(call: Callable[[], T], data: bytes, steps: Sequence[Step] = STEPS[:2],
                token: CancelToken | None = None) -> T:
    """``call()``, which runs a job on the model ``data`` in a worker process (in a background thread); a
    native crash of that process raises :class:`NativeCrash` naming the step of ``steps`` that crashed it,
    and where (other deaths of the process, such as the kernel's out-of-memory kill, are raised as they are)."""
    try:
        return call()
    except WorkerDied as died:
        if not died.crashed:
            raise
        raise NativeCrash(crash_cause(data, steps, died.signal or 0, token)) from None


def checked(data: bytes, runtime: bool) -> list[Problem]:
    """``onnxviz check``'s problems of the model ``data`` (see :func:`check_job`), a crash among them."""
    try:
        return run_checks(check_job, data, runtime, steps=STEPS if runtime else STEPS[:2])
    except NativeCrash as crash:
        return [crash.cause.problem()]


def validated(data: bytes, generation: int, runtime: bool) -> ValidationResult:
    """The validation of the model ``data`` for ``doc.check()`` (see :func:`validate_job`), a crash among its
    problems (and then no types)."""
    try:
        return unpack(run_checks(validate_job, data, generation, runtime, steps=STEPS if runtime else STEPS[:2]))
    except NativeCrash as crash:
        return ValidationResult(generation, InferenceResult(), [crash.cause.problem()])


def inferred_types(data: bytes, role: str = CHECKS) -> InferenceResult:
    """Shape inference's types of the model ``data`` (lenient; see :func:`types_job`), in the worker of ``role``
    when this process may not fork; raises :class:`NativeCrash` when inference crashed."""
    return run_checks(types_job, data, steps=(INFERENCE,), role=role)


def inferred_types_begun(data: bytes) -> Callable[[], InferenceResult]:
    """:func:`inferred_types` of ``data``, begun now in a forked child when this process may fork, so the caller
    works on while it runs (``render``: its layout's wiring, Qt's start); the call returned waits for the types
    (or runs the job then, in the worker, when this process may not fork) and raises what that raises."""
    if not may_fork():
        return lambda: inferred_types(data)
    answer = fork_job(types_job, data)
    return lambda: crash_named(answer, data, (INFERENCE,))


def converted(model: onnx.ModelProto, version: int) -> onnx.ModelProto:
    """``onnx.version_converter.convert_version(model, version)``, in the worker process (it runs onnx's shape
    inference first); raises what it raises, or :class:`NativeCrash`."""
    data = model.SerializeToString()
    steps = (INFERENCE, Step("onnx's version converter", "version_converter", partial(_convert, version=version)))
    return onnx.ModelProto.FromString(run_checks(_convert, data, version, steps=steps))


def _convert(data: bytes, version: int) -> bytes:
    return onnx.version_converter.convert_version(onnx.ModelProto.FromString(data), version).SerializeToString()


# -- finding the cause, in a process of its own ----------------------------------------------------------
_causes: OrderedDict[tuple[bytes, tuple[Step, ...]], CrashCause] = OrderedDict()  # (digest, steps) -> cause found
_causes_lock = threading.Lock()
REMEMBERED_CAUSES = 8  # the window's validation and its Model panel crash on the same state: one triage


def crash_cause(data: bytes, steps: Sequence[Step], signal: int = 0, token: CancelToken | None = None) -> CrashCause:
    """Which of ``steps`` crashes on the model ``data``, and on which node: found in a fresh process (the
    shared worker is not risked again), which tries each in a child of its own; remembered for a few states."""
    key = (digest_of(data), tuple(steps))
    with _causes_lock:
        known = _causes.get(key)
    if known is not None:
        return known
    if may_fork():  # each try is a forked child already: no process of its own needed
        cause = triage_job(data, tuple(steps))
    else:
        triage = WorkerProcess()
        try:
            cause = triage.run(triage_job, data, tuple(steps), token=token)
        except (WorkerDied, OSError):  # the triage's own process crashed or could not fork
            cause = CrashCause(None)
        finally:
            triage.shutdown()
    cause = replace(cause, signal=cause.signal or signal)
    with _causes_lock:
        _causes[key] = cause
        while len(_causes) > REMEMBERED_CAUSES:
            _causes.popitem(last=False)
    return cause


def triage_job(data: bytes, steps: tuple[Step, ...]) -> CrashCause:
    """In a process of its own: the first of ``steps`` that crashes a child running it on ``data``, then the
    shortest prefix of the main graph's nodes on which it still does (bisected: the steps read nodes in order)."""
    light = slimmed(data)[2]
    for step in steps:
        signal = _crashes(partial(step.run, light))
        if signal:
            return _on_node(step, onnx.ModelProto.FromString(light), signal)
    return CrashCause(None)


def _on_node(step: Step, model: onnx.ModelProto, signal: int) -> CrashCause:
    nodes = model.graph.node
    if _crashes(partial(_on_prefix, step, model, 0)):
        return CrashCause(step, signal=signal)  # not a node of the main graph: its functions, say
    low, high = 0, len(nodes)  # the prefix of `low` nodes survives, that of `high` crashes
    while high - low > 1:
        middle = (low + high) // 2
        if _crashes(partial(_on_prefix, step, model, middle)):
            high = middle
        else:
            low = middle
    node = nodes[high - 1]
    return CrashCause(step, high - 1, node.op_type, node.name, signal)


def _on_prefix(step: Step, model: onnx.ModelProto, count: int) -> None:
    """``step`` on ``model`` with the first ``count`` nodes of its main graph only (in a forked child: the
    model is the child's own copy)."""
    del model.graph.node[count:]
    step.run(model.SerializeToString())


def _crashes(attempt: Callable[[], object]) -> int:
    """The signal that ended a child process running ``attempt`` (0: it ended normally, or raised)."""
    with warnings.catch_warnings():  # Python 3.12 warns of forking a process with threads: this child uses none
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child
        with contextlib.suppress(BaseException):
            _quiet()
            attempt()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


def _quiet() -> None:
    """A child's libraries print nothing (onnxruntime's warnings, a crash's own lines)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
