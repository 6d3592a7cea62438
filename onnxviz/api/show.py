"""``onnxviz.show``: a model in a window of its own process, driven from a script or a notebook.

The window is ``onnxviz --remote FOLDER`` started with this interpreter; :mod:`.protocol` carries the
requests and events. The caller's interpreter never waits for it (unless ``block``) and never imports Qt. A
model held in memory is written to a file in FOLDER (its weights to a data file beside it when they are
big): nothing is pickled, and the window reads the file as it reads any model. Each call of ``show`` opens a
window of its own; :meth:`ModelWindow.update` shows another version of the model in the same window,
keeping its view. The window stays open when the script ends, until its user closes it.
"""

from __future__ import annotations

import collections
import os
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from onnxviz.api import protocol
from onnxviz.api.models import ModelLike, as_path, display_name, is_ir_model, model_proto, write_model
from onnxviz.model.errors import OnnxvizError

STDERR_LINES = 40  # of the window's stderr kept, to say why it ended
DEFAULT_TIMEOUT_S = 120.0
CLOSE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Shown:
    """What a window shows once a :func:`show` or :meth:`ModelWindow.update` is drawn: the model's name (the
    window's title) and the number of nodes of its main graph."""

    name: str
    nodes: int


class ModelWindow:
    """A window showing a model, in a process of its own (what :func:`show` returns).

    Every method returns at once but the ``wait...`` ones and :meth:`screenshot`; they raise
    :class:`~onnxviz.OnnxvizError` in one sentence when the window could not do what was asked (the model
    could not be opened, the window was closed), and when ``timeout`` seconds pass first."""

    def __init__(self) -> None:
        protocol.remove_stale_folders()  # of windows killed before they could remove theirs
        self._folder = Path(tempfile.mkdtemp(prefix=protocol.FOLDER_PREFIX))
        self._lock = threading.Condition()
        self._events: dict[int, dict[str, Any]] = {}  # request id -> its answer (ran: under -id)
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._next_id = 0
        self._last_show = -1
        self._last_inputs = False
        try:
            self._process = _start_window(self._folder)
        except BaseException:
            shutil.rmtree(self._folder, ignore_errors=True)
            raise
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin: IO[bytes] = self._process.stdin
        for stream, read in ((self._process.stdout, self._read_events), (self._process.stderr, self._read_stderr)):
            threading.Thread(target=read, args=(stream,), name="onnxviz-show", daemon=True).start()
        self._finalizer = weakref.finalize(self, _remove_when_ended, self._process, self._folder)

    # -- asking ------------------------------------------------------------------------------
    def update(self, model: ModelLike, inputs: Mapping[str, Any] | None = None, *, name: str | None = None) -> None:
        """Show ``model`` (a path, a ``ModelProto``, its bytes, an ``onnx_ir`` model, an object with
        ``model_proto``) in this window in place of the model shown, keeping the view: the graph shown, the
        groups opened, the zoom, the selection. With ``inputs`` (arrays by input name) the window runs it with
        them. A model held in memory is shown as a copy named ``name`` (default: its graph's name) with no
        file of its own: Save asks where to write it. When the window's model has unsaved edits, its user is
        asked first (:meth:`wait_shown` then raises if they keep their edits)."""
        self._check_open()
        ident = self._new_id()
        folder = self._folder / str(ident)
        path = as_path(model)
        try:
            folder.mkdir()
            if path is None:
                path, name = self._hand_over(model, folder, name)
            files = _write_inputs(inputs or {}, folder)
        except OSError as exc:
            raise OnnxvizError(f"the model could not be handed to the window ({exc.strerror or exc}).",
                               str(exc)) from exc
        with self._lock:
            self._last_show, self._last_inputs = ident, bool(files)
        self._send({"op": "show", "id": ident, "path": str(path.absolute()), "name": name, "inputs": files})

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> bool:
        """Close the window as its user would: a model with unsaved edits asks first. True once the window's
        process has ended (within ``timeout`` seconds), False while it is still open (its user was asked)."""
        if self.is_open:
            self._send({"op": "close", "id": self._new_id()})
        return self.wait(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the user closes the window (at most ``timeout`` seconds); True when it is closed."""
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        self._finalizer()
        return True

    def wait_shown(self, timeout: float = DEFAULT_TIMEOUT_S) -> Shown:
        """Wait until the model of the last :func:`show` or :meth:`update` is drawn in the window."""
        event = self._wait_for(self._last_show, timeout, "show the model")
        if event["event"] == "failed":
            raise OnnxvizError(str(event.get("message", "the window could not open the model.")))
        if event["event"] == "kept":
            raise OnnxvizError("the window's user kept their unsaved edits; the new model is not shown.")
        return Shown(str(event.get("name", "")), int(event.get("nodes", 0)))

    def wait_run(self, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Wait until the run with the ``inputs`` of the last :func:`show` or :meth:`update` has ended; raises
        with the window's message when it failed."""
        if not self._last_inputs:
            raise OnnxvizError("the last show() or update() gave no inputs to run the model with.")
        self.wait_shown(timeout)
        event = self._wait_for(-self._last_show - 1, timeout, "run the model")
        if not event.get("ok"):
            raise OnnxvizError(str(event.get("message", "the run failed.")))

    def screenshot(self, path: str | os.PathLike[str], timeout: float = DEFAULT_TIMEOUT_S) -> Path:
        """Save a picture of the window (PNG) once the last model shown is drawn; returns its path."""
        self.wait_shown(timeout)
        ident = self._new_id()
        target = Path(path).absolute()
        self._send({"op": "screenshot", "id": ident, "path": str(target)})
        event = self._wait_for(ident, timeout, "take the picture")
        if not event.get("ok"):
            raise OnnxvizError(str(event.get("message", f"{target} could not be written.")))
        return target

    @property
    def is_open(self) -> bool:
        """Whether the window's process is still running."""
        return self._process.poll() is None

    @property
    def pid(self) -> int:
        """The window's process id."""
        return self._process.pid

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"<onnxviz.ModelWindow pid={self.pid} {state}>"

    # -- the other side ----------------------------------------------------------------------
    def _new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def _hand_over(self, model: ModelLike, folder: Path, name: str | None) -> tuple[Path, str]:
        """Write ``model`` into ``folder``: its file, and the name the window shows it under."""
        proto = None if is_ir_model(model) or is_ir_model(getattr(model, "model", None)) else model_proto(model)
        graph = proto.graph.name if proto is not None else _ir_graph_name(model)
        target = folder / display_name(graph)
        write_model(proto if proto is not None else model, target)
        return target, name or target.name

    def _send(self, message: dict[str, Any]) -> None:
        if not protocol.send(self._stdin, message):
            raise OnnxvizError(self._ended_text())

    def _check_open(self) -> None:
        if not self.is_open:
            raise OnnxvizError(self._ended_text())

    def _wait_for(self, ident: int, timeout: float, doing: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._lock:
            while ident not in self._events:
                left = deadline - time.monotonic()
                if self._process.poll() is not None and ident not in self._events:
                    raise OnnxvizError(self._ended_text())
                if left <= 0:
                    raise OnnxvizError(f"the window did not {doing} within {timeout:g} s.")
                self._lock.wait(min(left, 0.5))
            return self._events[ident]

    def _read_events(self, stream: IO[bytes]) -> None:
        while (message := protocol.read_message(stream)) is not None:
            kind, ident = message.get("event"), message.get("id")
            if not isinstance(ident, int):
                continue
            with self._lock:
                self._events[-ident - 1 if kind == "ran" else ident] = message
                self._lock.notify_all()
        with self._lock:
            self._lock.notify_all()

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for line in stream:
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def _ended_text(self) -> str:
        """Why the window is gone: closed by its user, or the error it printed."""
        self._process.poll()
        said = [line for line in self._stderr if line.startswith("onnxviz: error: ")]
        if said:
            return said[-1].removeprefix("onnxviz: error: ")
        code = self._process.returncode
        if code in (0, None):
            return "the window was closed; onnxviz.show() opens a new one."
        return f"the window's process ended unexpectedly (exit code {code})."


def show(model: ModelLike, inputs: Mapping[str, Any] | None = None, block: bool = False, *,
         name: str | None = None) -> ModelWindow:
    """Open ``model`` in an onnxviz window, a process of its own, and return its :class:`ModelWindow`.

    ``model``: a path, an ``onnx.ModelProto``, its bytes, an ``onnx_ir`` model, or anything with
    ``model_proto`` (torch's ``ONNXProgram``). With ``inputs`` (arrays by input name) the window runs the model
    with them and shows its activations. The call returns at once (in a notebook too) unless ``block``, which
    waits until the window is closed. Each call opens a new window; ``window.update(model)`` shows a new
    version in the same one, keeping the view. Raises :class:`~onnxviz.OnnxvizError` when there is no display
    to show a window on (``onnxviz.run`` and ``onnxviz.compare`` need none)."""
    window = ModelWindow()
    try:
        window.update(model, inputs, name=name)
    except BaseException:
        window.close(0)
        raise
    if block:
        window.wait()
    return window


# -- helpers ---------------------------------------------------------------------------------
def _start_window(folder: Path) -> subprocess.Popen[bytes]:
    """``onnxviz --remote FOLDER`` with this interpreter, in a session of its own (a Ctrl+C in the caller's
    terminal, or a notebook's interrupt, does not close it); refused at once when there is no display."""
    from onnxviz.cli.gui import choose_platform

    env = dict(os.environ)
    choose_platform(False, env)
    package_root = str(Path(__file__).resolve().parents[2])
    if package_root not in {*site.getsitepackages(), site.getusersitepackages()}:
        # onnxviz imported from a checkout (sys.path set by hand): the window imports the same one
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    try:
        return subprocess.Popen([sys.executable, "-m", "onnxviz", protocol.REMOTE_OPTION, str(folder)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True, close_fds=True)
    except OSError as exc:
        raise OnnxvizError(f"the window's process could not be started ({exc.strerror or exc}).", str(exc)) from exc


def _write_inputs(inputs: Mapping[str, Any], folder: Path) -> dict[str, str]:
    """Each input array as an .npy in ``folder`` (strings as unicode arrays): input name -> file."""
    from onnxviz.model.runner.inputs import savable

    files = {}
    for k, (input_name, array) in enumerate(inputs.items()):
        path = folder / f"input_{k}.npy"
        np.save(path, savable(np.asarray(array)), allow_pickle=False)
        files[str(input_name)] = str(path)
    return files


def _ir_graph_name(model: Any) -> str:
    ir = model if is_ir_model(model) else model.model
    return str(getattr(ir.graph, "name", "") or "")


def _remove_when_ended(process: subprocess.Popen[bytes], folder: Path) -> None:
    """The hand-over folder, once the window is gone (a window still open removes it itself when it ends)."""
    if process.poll() is not None:
        shutil.rmtree(folder, ignore_errors=True)
