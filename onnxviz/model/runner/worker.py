"""Runs a model in a separate process, so a crash, abort or out-of-memory in the
runtime only ends that process. The parent gets progress and a RunResult.

The model and the inputs travel as files in a private folder, the values come
back as files too (see :mod:`onnxviz.model.runner.store`); the request, progress
messages and errors go through a pipe. A spare process, started ahead of the next
run, has its imports done when the request comes.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import signal
import sys
import tempfile
import threading
import traceback
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnx

from onnxviz.model.errors import Cancelled, OnnxvizError
from onnxviz.model.forking import start_method
from onnxviz.model.io.disk import DiskError, atomic_write, atomic_write_with, process_alive, write_npz
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner.budget import CaptureTooBig
from onnxviz.model.runner.errors import InputsRefused, RunError
from onnxviz.model.runner.inputs import as_strings, restored, savable
from onnxviz.model.runner.protocol import (
    DEFAULT_OPTIONS,
    ENGINE_ORT,
    PLANNING,
    SIZING,
    RunOptions,
    RunRequest,
)
from onnxviz.model.runner.store import RunResult

if TYPE_CHECKING:
    from onnxviz.model.runner.capture import Captured
    from onnxviz.model.runner.sizes import GeneratedInputs, SizePlan, Tried

SHARED_MEMORY = Path("/dev/shm")  # a RAM-backed folder on Linux; elsewhere values stay on disk
STOP_GRACE_S = 0.4  # terminate, then kill: the process is gone well within a second
POLL_S = 0.05
RUN_FOLDER_PREFIX = "onnxviz-run-"  # then the owner's process id: onnxviz-run-<pid>-<random>


# -- in the worker process -----------------------------------------------------------
def worker_main(conn: Connection) -> None:
    """Entry point of the worker process: import the runtime, wait for the request (a spare
    process waits here until a run needs it), run, write the values, report."""
    import onnxruntime  # noqa: F401 - imported while the process waits

    from onnxviz.model.runner.capture import capture  # noqa: F401 - the same
    from onnxviz.model.runner.store import write_result

    try:
        request: RunRequest = conn.recv()
    except (EOFError, OSError):  # the app ended, or dropped this spare, before a run needed it
        return

    def progress(fraction: float, text: str) -> None:
        conn.send(("progress", fraction, text))

    model: onnx.ModelProto | None = None
    try:
        request.out_dir.mkdir(parents=True, exist_ok=True)
        model = _load_model(request)
        given = _load_feeds(request, model)
        if request.generated is None:
            captured = _capture(request, model, given, progress, strict=False)
        else:
            captured = _capture_generated(request, model, given, progress)
        write_result(captured, model, request.out_dir, _pack_dir(request, captured.values), progress,
                     index=not request.pack_values)
        conn.send(("done",))
    except CaptureTooBig as exc:
        conn.send(("too_big", exc.size, exc.need, exc.available, exc.part))
    except RunError as exc:
        conn.send(("error", exc.message, exc.details, exc.node, _write_partial(exc, request, model, progress)))
    except OnnxvizError as exc:
        conn.send(("error", exc.message, exc.details, getattr(exc, "node", -1)))
    except MemoryError:
        conn.send(("error", "the run ran out of memory.", ""))
    except Exception as exc:  # noqa: BLE001 - reported to the parent as one sentence
        conn.send(("error", f"the run failed ({type(exc).__name__}: {exc}).", traceback.format_exc()))
    finally:
        conn.close()


def _capture(request: RunRequest, model: onnx.ModelProto, feeds: dict[str, np.ndarray], progress: ProgressFn,
             strict: bool) -> Captured:
    from onnxviz.model.runner.capture import capture

    shapes = _checked_shapes(model, feeds, request.options, progress)
    with np.errstate(all="ignore"):  # NaN/Inf are what the user looks for, not a warning on stderr
        return capture(model, feeds, request.options, progress, scratch_dir=request.out_dir,
                       data_dir=_data_dir(request, model), shapes=shapes, strict_inputs=strict)


def _capture_generated(request: RunRequest, model: onnx.ModelProto, given: dict[str, np.ndarray],
                       progress: ProgressFn) -> Captured:
    """A run on inputs made here (see sizes.py): first with the sizes that ran last time, else 1, and the ones
    that follow from them (expressions, KV caches); when onnxruntime refuses them, the sizes the graph
    suggests and other candidates tried in a plain session within the time budget, and the capture run again
    with the first that ran. None running is an error (the reference evaluator is not asked: its values on
    inputs onnxruntime refused would look like a success). The graph is read for sizes only then: its shape
    inference costs a third of a run of 12k nodes."""
    from onnxviz.model.runner.sizes import plan_sizes

    generated = request.generated
    assert generated is not None
    plan = plan_sizes(model, generated.specs, generated.fixed, hints=False, preferred=generated.preferred)
    first = plan.first
    feeds = {**given, **generated.make(first)}
    strict = request.options.engine == ENGINE_ORT
    try:
        captured = _capture(request, model, feeds, progress, strict)
        sizes = first
    except InputsRefused as refused:
        if generated.hints:
            progress(0.1, SIZING)
            plan = plan_sizes(model, generated.specs, generated.fixed, preferred=generated.preferred)
        candidates = [c for c in (plan.first, *plan.candidates) if c != first]
        sizes = _sizes_that_run(request, model, given, plan, candidates, first, refused, feeds, progress)
        captured = _capture(request, model, {**given, **generated.make(sizes)}, progress, strict)
        captured.notes.insert(0, f"the generated inputs' first sizes ({plan.chosen_text(first)}) did not run "
                                 f"({refused.message.rstrip('.')}); these ran: {plan.chosen_text(sizes)}.")
    captured.dims = {name: sizes[name] for name in first if name not in plan.fixed}
    captured.generated = [spec.name for spec in generated.specs]
    said = [h.text() for h in plan.hints if h.dim in sizes and (sizes[h.dim] >= h.size if h.at_least
                                                                  else sizes[h.dim] == h.size)]
    if said:
        captured.notes.append("sizes the graph suggests: " + "; ".join(dict.fromkeys(said)) + ".")
    return captured


def _sizes_that_run(request: RunRequest, model: onnx.ModelProto, given: dict[str, np.ndarray], plan: SizePlan,
                    candidates: list[dict[str, int]], first: dict[str, int], refused: InputsRefused,
                    feeds: dict[str, np.ndarray], progress: ProgressFn) -> dict[str, int]:
    """The first of ``candidates`` that runs (RunError when none does, with the values computed before the
    failing node in ``partial`` for a capture)."""
    from onnxviz.model.runner.capture import plain_runner, values_before
    from onnxviz.model.runner.sizes import try_sizes

    generated = request.generated
    assert generated is not None
    tried: list[Tried] = []
    if generated.search and candidates:
        progress(0.15, "Trying other sizes for the generated inputs")
        try:
            runner = plain_runner(model, _data_dir(request, model))
        except Exception:  # noqa: BLE001 - a session that cannot be made again: the first error stands
            runner = None
        if runner is not None:
            found, tried = try_sizes(runner, generated, given, candidates, generated.budget_s)
            if found is not None:
                return found
    error = RunError(_refused_text(plan, first, refused, tried), refused.details, refused.node)
    if request.options.capture and refused.node >= 0:
        error.partial = values_before(model, feeds, request.options, refused.node, progress)
    raise error


def _refused_text(plan: SizePlan, first: dict[str, int], refused: InputsRefused, tried: list[Tried]) -> str:
    chosen = plan.chosen_text(first)
    head = f"ONNX Runtime could not run the model on the generated inputs{f' ({chosen})' if chosen else ''}: " \
           f"{refused.message.rstrip('.')}"
    if tried:
        shown = "; ".join(plan.chosen_text(t.sizes) for t in tried[:4]) + ("; ..." if len(tried) > 4 else "")
        head += f"; nor on {len(tried)} other sizes ({shown})"
    elif not plan.free():
        head += "; no size of theirs is left to choose"
    return head + ". Give the inputs from files, or sizes that run."


def _write_partial(error: RunError, request: RunRequest, model: onnx.ModelProto | None,
                   progress: ProgressFn) -> bool:
    """Write the values computed before the run failed (``error.partial``) like a result's; whether it was."""
    from onnxviz.model.runner.store import write_result

    if error.partial is None or model is None:
        return False
    try:
        write_result(error.partial, model, request.out_dir, _pack_dir(request, error.partial.values), progress,
                     index=not request.pack_values)
    except Exception:  # noqa: BLE001 - the run's own error is what the user must see
        return False
    return True


def _pack_dir(request: RunRequest, values: dict[str, np.ndarray]) -> Path:
    """Where the packed values go: a --dump's own folder (the user's), else shared memory while they fit the
    budget, else the (disk) run folder."""
    if not request.pack_values:
        return request.out_dir
    total = sum(a.nbytes for a in values.values())
    if total <= request.options.memory_budget and SHARED_MEMORY.is_dir():
        try:
            if shutil.disk_usage(SHARED_MEMORY).free > 2 * total + (64 << 20):
                folder = SHARED_MEMORY / request.out_dir.name
                folder.mkdir(exist_ok=True)
                return folder
        except OSError:
            pass
    return request.out_dir


def _checked_shapes(model: onnx.ModelProto, feeds: dict[str, np.ndarray], options: RunOptions,
                    progress: ProgressFn) -> dict[str, tuple[int, tuple[int, ...]]] | None:
    """The values' shapes (ONNX shape inference with these inputs), after checking the values a
    capture keeps fit in memory (raises CaptureTooBig); None when there is nothing to check."""
    from onnxviz.model.runner.budget import available_memory, capture_size, check_fits
    from onnxviz.model.runner.packing import static_shapes

    if not (options.capture and options.check_memory and options.pack):
        return None
    progress(0.05, PLANNING)
    shapes = static_shapes(model, feeds)
    limit = options.memory_limit if options.memory_limit is not None else available_memory()
    check_fits(capture_size(model, shapes), options.keep, limit, options.memory_budget)
    return shapes


def _load_model(request: RunRequest) -> onnx.ModelProto:
    """The model as the parent wrote it: tensors stored externally stay on disk (see :func:`_data_dir`)."""
    return onnx.load(str(request.model_path), load_external_data=False)


def _data_dir(request: RunRequest, model: onnx.ModelProto) -> Path | None:
    """The folder onnxruntime maps the model's external tensors from (None when it has none). The
    parent checked every location stays inside it (io.external) before this process got the request."""
    from onnxviz.model.io.external import is_external, iter_all_tensors

    if request.base_dir is None or not any(is_external(t) for t in iter_all_tensors(model)):
        return None
    return request.base_dir.resolve()


def _load_feeds(request: RunRequest, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The inputs, cast to this model's input types (e.g. for its float16 variant)."""
    from onnxviz.model.runner.inputs import input_specs

    specs = {s.name: s for s in input_specs(model, limits=False)}
    with np.load(request.feeds_path, allow_pickle=False) as saved:  # strings come as unicode (see savable)
        feeds = {name: saved[f"arr_{k}"] for k, name in enumerate(request.feed_names)}
    for name, array in feeds.items():
        spec = specs.get(name)
        if spec is None or array.dtype == spec.dtype:
            continue
        if array.dtype.kind in "biuf" and spec.dtype.kind in "biufV":
            feeds[name] = array.astype(spec.dtype)
        elif array.dtype.kind in "US" and spec.dtype == object:
            feeds[name] = as_strings(array)  # the parent saved strings as unicode, not pickled
        else:
            feeds[name] = restored(array, spec.dtype)  # .npz keeps bfloat16/float8 as raw bytes ('|V2')
    return feeds


# -- in the parent -----------------------------------------------------------------------
class WorkerRun:
    """One run in one process: :meth:`start`, then :meth:`wait` (or :meth:`stop`)."""

    def __init__(self, model: onnx.ModelProto | Path | bytes, feeds: Mapping[str, np.ndarray],
                 options: RunOptions = DEFAULT_OPTIONS, base_dir: Path | None = None,
                 out_dir: Path | None = None, generated: GeneratedInputs | None = None) -> None:
        _sweep_orphans()
        self.work_dir = Path(tempfile.mkdtemp(prefix=f"{RUN_FOLDER_PREFIX}{os.getpid()}-"))
        self._owns_out = out_dir is None
        self.out_dir = self.work_dir if out_dir is None else Path(out_dir)
        if isinstance(model, Path):
            model_path, base_dir = model, base_dir or model.parent
        else:
            model_path = self.work_dir / "model.onnx"
        feeds_path = self.work_dir / "inputs.npz"
        try:
            self._write_inputs(model if model_path.parent == self.work_dir else None, model_path, feeds, feeds_path)
        except DiskError as exc:
            shutil.rmtree(self.work_dir, ignore_errors=True)
            raise RunError(f"the run could not start: the model and its inputs could not be written to the temporary "
                           f"folder ({exc.reason}).", exc.details) from exc
        self.request = RunRequest(model_path, feeds_path, self.out_dir, base_dir, options,
                                  pack_values=self._owns_out, feed_names=tuple(feeds), generated=generated)
        self._process: mp.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self._keep_partial = False

    @staticmethod
    def _write_inputs(model: onnx.ModelProto | bytes | Path | None, model_path: Path,
                      feeds: Mapping[str, np.ndarray], feeds_path: Path) -> None:
        """The model (when not a file already) and the inputs, into the run's folder, every byte checked."""
        if isinstance(model, (bytes, onnx.ModelProto)):
            atomic_write(model_path, model if isinstance(model, bytes) else model.SerializeToString(), durable=False)
        arrays = {f"arr_{k}": savable(np.asarray(v)) for k, v in enumerate(feeds.values())}
        atomic_write_with(feeds_path, lambda f: write_npz(f, arrays), durable=False)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> WorkerRun:
        self._process, self._conn = _spare.take()
        self._conn.send(self.request)
        return self

    def wait(self, progress: ProgressFn = no_progress, token: CancelToken | None = None) -> RunResult:
        """Block until the worker is done; raises RunError on failure, Cancelled on cancel."""
        assert self._process is not None and self._conn is not None, "start() first"
        ok = False
        try:
            result = self._receive(progress, token)
            ok = True
            return result
        finally:
            self.stop()
            self._tidy(keep_output=ok or self._keep_partial)

    def _receive(self, progress: ProgressFn, token: CancelToken | None) -> RunResult:
        assert self._process is not None and self._conn is not None
        while True:
            if token is not None:
                token.check()
            if self._conn.poll(POLL_S):
                try:
                    message = self._conn.recv()
                except (EOFError, OSError):
                    raise _ended(self._process) from None
                if message[0] == "progress":
                    progress(float(message[1]), str(message[2]))
                elif message[0] == "done":
                    return RunResult.load(self.out_dir, owns_directory=self._owns_out)
                elif message[0] == "too_big":
                    raise CaptureTooBig(*message[1:])
                else:
                    raise RunError(message[1], message[2], message[3] if len(message) > 3 else -1,
                                   self._partial() if len(message) > 4 and message[4] else None)
            elif not self._process.is_alive() and not self._conn.poll(0):
                raise _ended(self._process)

    def _partial(self) -> RunResult | None:
        """The values written before the run failed; the run folder is then kept for them."""
        try:
            result = RunResult.load(self.out_dir, owns_directory=self._owns_out)
        except RunError:
            return None
        self._keep_partial = True
        return result

    def stop(self) -> None:
        """End the process now: terminate, then kill if it does not go (well within 1 s)."""
        p = self._process
        if p is None:
            return
        if p.is_alive():
            p.terminate()
            p.join(STOP_GRACE_S)
        if p.is_alive():
            p.kill()
            p.join(STOP_GRACE_S)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _tidy(self, keep_output: bool) -> None:
        """Remove the private folder, except the values of a successful run that live in it."""
        if keep_output and self._owns_out:
            for name in ("model.onnx", "inputs.npz"):
                (self.work_dir / name).unlink(missing_ok=True)
        else:
            shutil.rmtree(self.work_dir, ignore_errors=True)
            shutil.rmtree(SHARED_MEMORY / self.work_dir.name, ignore_errors=True)


def _start_process() -> tuple[mp.process.BaseProcess, Connection]:
    """A worker process on its way to waiting for its request (see :func:`worker_main`): a fork of a command's
    process (its imports done, no resource tracker left running after the command), spawned from a window's."""
    ctx = mp.get_context("fork") if start_method() == "fork" else mp.get_context("spawn")
    parent, child = ctx.Pipe()  # the request goes down, progress and the outcome come back
    process = ctx.Process(target=worker_main, args=(child,), daemon=True, name="onnxviz-run")
    with _main_left_out():
        process.start()
    child.close()
    return process, parent


_MAIN_SWAP = threading.Lock()


@contextmanager
def _main_left_out() -> Iterator[None]:
    """While a worker process starts: a stand-in ``__main__`` module, so the new process does not run the
    caller's main script again. multiprocessing's spawn does that to find what the script defines; the worker
    needs nothing of it (it is this module's function), and a script without an ``if __name__ ==
    "__main__":`` guard would otherwise run again in the worker (its model exported twice) and try to start
    a worker from there, which multiprocessing refuses."""
    with _MAIN_SWAP:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__: nothing to run
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main


class _SpareProcess:
    """At most one worker process started ahead of the next run, its imports done: a run that
    takes it skips the start of a Python process and the imports of numpy, onnx and onnxruntime."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: tuple[mp.process.BaseProcess, Connection] | None = None

    def take(self) -> tuple[mp.process.BaseProcess, Connection]:
        """The spare if it is still alive, else a new process."""
        with self._lock:
            waiting, self._waiting = self._alive(), None
        return waiting or _start_process()

    def refill(self) -> None:
        with self._lock:
            if self._alive() is None:
                self._waiting = _start_process()

    def _alive(self) -> tuple[mp.process.BaseProcess, Connection] | None:
        """The waiting spare; one that died is forgotten and its pipe closed."""
        if self._waiting is not None and not self._waiting[0].is_alive():
            self._waiting[1].close()
            self._waiting = None
        return self._waiting


_spare = _SpareProcess()


def warm_up() -> None:
    """Have a worker process ready for the next run (~0.2 s sooner). The window calls this when
    the user starts to run a model and after every run; it costs one idle process (~60 MB)."""
    _spare.refill()


def _sweep_orphans() -> None:
    """Run folders whose owner is gone (the app crashed or was killed): the values of its runs, on
    disk and in shared memory, which would otherwise hold RAM until reboot and disk until /tmp is cleaned.
    A shared-memory folder of this process whose run folder is gone is left over too; another live process's
    is not judged by this process's temporary folder (its TMPDIR may be another one: its values were removed
    while it read them)."""
    temp = Path(tempfile.gettempdir())
    mine = f"{RUN_FOLDER_PREFIX}{os.getpid()}-"
    for base in (temp, SHARED_MEMORY):
        if not base.is_dir():
            continue
        for folder in base.glob(f"{RUN_FOLDER_PREFIX}*"):
            orphan = not _owner_alive(folder.name)
            if base == SHARED_MEMORY and folder.name.startswith(mine) and not (temp / folder.name).exists():
                orphan = True  # its run folder went with a normal cleanup
            if orphan:
                shutil.rmtree(folder, ignore_errors=True)


def _owner_alive(folder_name: str) -> bool:
    """Whether the process that made this run folder still runs (True when that cannot be told)."""
    owner = folder_name[len(RUN_FOLDER_PREFIX):].split("-", 1)[0]
    return not owner.isdigit() or process_alive(int(owner))  # not a number: an older version's folder


class WorkerEnded(RunError):
    """The worker process ended without reporting. ``crashed``: by a signal of its own fault
    (SIGSEGV, SIGABRT...), not one that ends a process from outside (Cancel, kill, the OOM killer)."""

    def __init__(self, message: str, crashed: bool) -> None:
        super().__init__(message)
        self.crashed = crashed


ENDED_FROM_OUTSIDE = frozenset({"SIGKILL", "SIGTERM", "SIGINT", "SIGHUP"})


def _ended(process: mp.process.BaseProcess) -> WorkerEnded:
    """The one-sentence error of a worker process that ended without reporting."""
    process.join(STOP_GRACE_S)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory, or ended from outside)" if name == "SIGKILL" else ""
        return WorkerEnded(f"the runtime process crashed with {name}{hint}; your model is unchanged.",
                           crashed=name not in ENDED_FROM_OUTSIDE)
    return WorkerEnded(f"the runtime process ended unexpectedly (exit code {code}); your model is unchanged.",
                       crashed=True)


def run_in_worker(model: onnx.ModelProto | Path | bytes, feeds: Mapping[str, np.ndarray],
                  options: RunOptions = DEFAULT_OPTIONS, *, base_dir: Path | None = None,
                  out_dir: Path | None = None, progress: ProgressFn = no_progress,
                  token: CancelToken | None = None,
                  on_start: Callable[[WorkerRun], None] | None = None,
                  generated: GeneratedInputs | None = None) -> RunResult:
    """Run in a new worker process and wait for it (see :class:`WorkerRun`); ``feeds`` are the given inputs,
    ``generated`` the ones the worker makes. If the process crashes while ONNX shape inference plans the
    capture or reads the graph for input sizes (it can, on a malformed model), the run is made again
    without that step; a process ended from outside then (killed) is reported, not run again."""
    last = [""]

    def tracked(fraction: float, text: str) -> None:
        last[0] = text
        progress(fraction, text)

    try:
        return _run_once(model, feeds, options, base_dir, out_dir, tracked, token, on_start, generated)
    except CaptureTooBig:  # planning went well: it found the capture would not fit
        raise
    except RunError as exc:
        step = last[0]
        again = (step == PLANNING and options.pack) or (step == SIZING and generated is not None)
        if not again or (isinstance(exc, WorkerEnded) and not exc.crashed):
            raise
    if last[0] == SIZING:
        assert generated is not None
        result = _run_once(model, feeds, options, base_dir, out_dir, progress, token, on_start,
                           replace(generated, hints=False))
        result.notes.append("shape inference crashed while reading the graph for input sizes; none was suggested.")
        return result
    result = _run_once(model, feeds, replace(options, pack=False), base_dir, out_dir, progress, token, on_start,
                       generated)
    result.notes.append("shape inference crashed while planning the capture; the values were fetched one by one.")
    return result


def _run_once(model: onnx.ModelProto | Path | bytes, feeds: Mapping[str, np.ndarray], options: RunOptions,
              base_dir: Path | None, out_dir: Path | None, progress: ProgressFn, token: CancelToken | None,
              on_start: Callable[[WorkerRun], None] | None, generated: GeneratedInputs | None = None) -> RunResult:
    run = WorkerRun(model, feeds, options, base_dir, out_dir, generated)
    try:
        progress(0.0, "Starting the runtime process")
    except Cancelled:
        shutil.rmtree(run.work_dir, ignore_errors=True)
        raise
    run.start()
    if on_start is not None:
        on_start(run)
    return run.wait(progress, token)
