"""A transform from the caller's side: each step (:mod:`.stages`) a job of a worker process of its own
(:class:`~onnxviz.model.background.procpool.WorkerProcess`), so a library that crashes or runs out of memory
ends that process only; Cancel kills it at once. The steps: the model and its inputs, the tool, onnx's check
of the result, both models run on the same inputs (outputs within the limits, or the result is refused),
and the figures before and after.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from onnxviz.model.background.contained import STEPS, crash_cause
from onnxviz.model.background.jobs import INLINE_BYTES
from onnxviz.model.background.procpool import WorkerDied, WorkerProcess
from onnxviz.model.errors import Cancelled
from onnxviz.model.io.disk import process_alive
from onnxviz.model.matching.crossrun import Limits
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.transform.calibration import Sample
from onnxviz.model.transform.catalog import Settings, TransformError
from onnxviz.model.transform.stages import AFTER, Reply, run_step, working_files_error
from onnxviz.model.transform.summary import Summary
from onnxviz.model.transform.timing import DEFAULT_RUNS, Timing
from onnxviz.model.transform.verify import LOSSLESS, LOSSY, Verification

FOLDER_PREFIX = "onnxviz-transform-"  # then the owner's process id: onnxviz-transform-<pid>-<random>


@dataclass
class Outcome:
    """A transform's result: its bytes, what it changed, how its outputs compare with the original's, and the
    inputs they were compared on (``sample``: the first set, for a later comparison or timing)."""

    settings: Settings
    data: bytes
    summary: Summary
    verification: Verification
    notes: list[str] = field(default_factory=list)
    sample: Sample = field(default_factory=dict)
    seconds: float = 0.0  # the tool's own time

    def to_json(self) -> dict[str, Any]:
        return {"transform": self.settings.tool, "label": self.settings.label(), "settings": self.settings.options(),
                "seconds": round(self.seconds, 3), "summary": self.summary.to_json(),
                "verification": self.verification.to_json(), "notes": list(self.notes)}


class OutputsChanged(TransformError):
    """The result's outputs are beyond the limits: it is not used. ``outcome`` holds it, for the details."""

    def __init__(self, message: str, details: str, outcome: Outcome) -> None:
        super().__init__(message, details)
        self.outcome = outcome


def default_limits(settings: Settings) -> Limits:
    """numpy.allclose's test at the comparison's default tolerance for the lossless transforms; none for a
    quantization (its outputs must only stay finite and keep their shapes)."""
    return LOSSLESS if settings.spec.lossless else LOSSY


class Transformer:
    """Runs transforms (one at a time) in its worker process, started on first use and kept for the next one
    (a window's transforms reuse it: the libraries stay imported); :meth:`close` ends it."""

    def __init__(self) -> None:
        self._worker = WorkerProcess()

    def run(self, model: bytes | Path, settings: Settings, *, base_dir: Path | None = None,
            limits: Limits | None = None, progress: ProgressFn = no_progress,
            token: CancelToken | None = None) -> Outcome:
        """Transform ``model`` (its bytes, or its file; external weights read from ``base_dir``). Raises
        TransformError in one sentence (OutputsChanged when the outputs are beyond ``limits``), Cancelled."""
        limits = limits if limits is not None else default_limits(settings)
        title = settings.label()
        try:
            folder = private_folder()
        except OSError as exc:
            raise TransformError(working_files_error(exc)) from None
        notes: list[str] = []
        try:
            try:
                source = _handed(model, folder)
            except OSError as exc:
                raise TransformError(working_files_error(exc)) from None
            self._step("prepare", (str(folder), source, str(base_dir) if base_dir else None), progress, token,
                       0.02, "Reading the model", notes)
            self._step("inputs", (str(folder), settings), progress, token, 0.08, "Reading the inputs", notes)
            seconds = self._step("transform", (str(folder), settings), progress, token, 0.15, f"{title}", notes)
            self._step("check", (str(folder),), progress, token, 0.6, "Checking the result", notes)
            verification, sample = self._step("verify", (str(folder), limits), progress, token, 0.7,
                                              "Running both models on the same inputs", notes)
            summary = self._step("figures", (str(folder),), progress, token, 0.85, "Counting what changed", notes)
            progress(0.98, "Reading the result")
            outcome = Outcome(settings, (folder / AFTER).read_bytes(), summary, verification, notes, sample, seconds)
        except ProcessEnded as ended:
            raise ended.named(model, token) from None
        finally:
            self._release(folder)
        _refuse_beyond(outcome, title)
        return outcome

    def time(self, paths: list[Path], sample: Sample, runs: int = DEFAULT_RUNS, *, progress: ProgressFn = no_progress,
             token: CancelToken | None = None) -> list[Timing]:
        """Each model's onnxruntime timing on ``sample`` (see :mod:`.timing`), in the worker process."""
        timings: list[Timing] = self._step("timing", ([str(p) for p in paths], sample, runs), progress, token, 0.0,
                                           f"Timing {len(paths)} models ({runs} runs each)", [])
        return timings

    def close(self) -> None:
        self._worker.shutdown()

    @property
    def pids(self) -> list[int]:
        return self._worker.pids

    def _step(self, name: str, args: tuple[Any, ...], progress: ProgressFn, token: CancelToken | None,
              fraction: float, text: str, notes: list[str]) -> Any:
        progress(fraction, text)
        try:
            reply: Reply = self._worker.run(run_step, name, *args, token=token)
        except Cancelled:
            self._worker.shutdown()  # a running library is stopped, not waited for
            raise
        except WorkerDied as exc:
            raise ProcessEnded(text, exc) from None
        if reply.error:
            raise TransformError(reply.error, reply.details)
        notes += reply.notes
        return reply.value

    def _release(self, folder: Path) -> None:
        try:
            if self._worker.pids:
                self._worker.run(run_step, "release", str(folder))
        except (Cancelled, WorkerDied):
            pass
        shutil.rmtree(folder, ignore_errors=True)


class ProcessEnded(TransformError):
    """The transform's worker process ended during the step ``text`` (``died`` says how)."""

    def __init__(self, text: str, died: WorkerDied) -> None:
        super().__init__(f"the transform's process ended unexpectedly during '{text}' (a crash in the library, "
                         "or out of memory); the model is unchanged.", died.details)
        self.text, self.died = text, died

    def named(self, model: bytes | Path, token: CancelToken | None) -> TransformError:
        """After a native crash, which of onnx's checker and shape inference crashes on ``model`` and on which
        node (as ``check`` says it), found in processes of their own; else this error as it is."""
        if not self.died.crashed:
            return self
        try:
            data = model if isinstance(model, bytes) else model.read_bytes()
        except OSError:
            return self
        cause = crash_cause(data, STEPS[:2], self.died.signal or 0, token)
        if cause.step is None:
            return TransformError(f"the transform's process crashed during '{self.text}' (a native crash in the "
                                  "library); the model is unchanged.", self.details)
        return TransformError(f"{cause.sentence.rstrip('.')}, which ended the transform during '{self.text}'; "
                              "the model is unchanged.", self.details)


def _handed(model: bytes | Path, folder: Path) -> bytes | str:
    """What the worker is given: small bytes as they are, bigger ones as a file in ``folder`` (pickling them for the
    process holds the GIL while it copies them: a 200 MB model froze the window 100 ms), a file by its path."""
    if isinstance(model, bytes) and len(model) > INLINE_BYTES:
        path = folder / "source.onnx"
        path.write_bytes(model)
        return str(path)
    return model if isinstance(model, bytes) else str(model)


def _refuse_beyond(outcome: Outcome, title: str) -> None:
    beyond = outcome.verification.beyond
    if not beyond:
        return
    first = beyond[0]
    more = f" (and {len(beyond) - 1} more outputs)" if len(beyond) > 1 else ""
    raise OutputsChanged(f"{title} changed output '{first.name}' beyond the tolerance ({first.beyond[0]}){more}, "
                         "so its result was not used.",
                         "\n".join(o.text() for o in outcome.verification.outputs), outcome)


def private_folder() -> Path:
    """A new folder of this process for a transform's files (folders of processes that are gone are removed)."""
    _sweep_orphans()
    return Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))


def _sweep_orphans() -> None:
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*"):
        owner = folder.name[len(FOLDER_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not process_alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


def run_transform(model: bytes | Path, settings: Settings, *, base_dir: Path | None = None, limits: Limits | None = None,
                  progress: ProgressFn = no_progress, token: CancelToken | None = None) -> Outcome:
    """One transform in a worker process of its own, ended after it (see :class:`Transformer`)."""
    transformer = Transformer()
    try:
        return transformer.run(model, settings, base_dir=base_dir, limits=limits, progress=progress, token=token)
    finally:
        transformer.close()


__all__ = ["FOLDER_PREFIX", "Outcome", "OutputsChanged", "Transformer", "default_limits", "private_folder",
           "run_transform"]
