"""``onnxviz [FILE] [--screenshot OUT.png]``: the window."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from onnxviz.api.protocol import REMOTE_OPTION, Link
from onnxviz.model.background.procpool import close_shared_workers, kill_shared_workers
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.process_tuning import building, one_blas_thread, tune_window_process

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings

# The model's modules the window uses, imported before Qt: PySide6 reads the source of every module imported
# after it (its __feature__ import hook), ~0.05 s for these with onnx and numpy, at the start of every window.
# The matcher (onnxviz.model.matching) is not among them: the diff and a comparison with another model import it;
# nor the runner (onnxviz.model.runner), which the Run feature imports on first use, nor the editor, the operator
# palette and the saving modules, which the first edit or save imports.
# The worker processes' modules come first: the workers are forked as soon as they are in, and analyse the file
# while this process imports the rest (~50 ms of CPU earlier than after all of them).
WORKERS_FIRST = ("onnxviz.model.background.jobs", "onnxviz.model.background.early")
MODEL_FIRST = (*WORKERS_FIRST, "onnxviz.model.document", "onnxviz.model.layout.inline",
               "onnxviz.model.editing.values", "onnxviz.model.graph.opdocs")


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.add_argument("file", nargs="?", help="an .onnx model to open")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="open the window, wait until the model is drawn, save a grab of the window, exit "
                             "(works without a display)")
    parser.add_argument("--example", action="store_true", help="open the example model shipped with onnxviz")
    parser.add_argument("--size", default="1400x900", help="window size for --screenshot (WxH)")
    parser.add_argument(REMOTE_OPTION, metavar="FOLDER", help=argparse.SUPPRESS)  # onnxviz.show's window
    return run


def choose_platform(screenshot: bool, environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    """Pick Qt's offscreen platform for --screenshot without a display; refuse the window without one.

    Without this Qt aborts the interpreter with a long message about xcb plugins.
    """
    if environ.get("QT_QPA_PLATFORM") or not sys.platform.startswith("linux"):
        return
    display = environ.get("DISPLAY", "")
    if environ.get("WAYLAND_DISPLAY") or (display and _x_display_reachable(display)):
        return
    if screenshot:
        environ["QT_QPA_PLATFORM"] = "offscreen"
        return
    why = f"DISPLAY={display} cannot be reached" if display else "DISPLAY and WAYLAND_DISPLAY are unset"
    raise OnnxvizError(f"no display available ({why}); "
                       "run it in a desktop session, or use --screenshot OUT.png to render without one.")


def _x_display_reachable(display: str) -> bool:
    """False only for a local display ``:N`` whose X server socket is missing (Qt would abort)."""
    host, _, number = display.partition(":")
    if host or not number.split(".")[0].isdigit():
        return True  # a remote or unusual display: let Qt try
    return os.path.exists(f"/tmp/.X11-unix/X{number.split('.')[0]}")


def end_process(code: int, settings: QSettings) -> NoReturn:
    """End the command now that its picture is saved: the settings written, the worker processes killed and
    reaped, the output flushed. The interpreter's own end (waiting for the background threads, freeing Qt's and
    Python's objects one by one) took ~0.1 s more, which nobody waits for."""
    settings.sync()
    close_shared_workers()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def run(args: argparse.Namespace) -> int:
    remote = getattr(args, "remote", None)
    link = Link.take(remote) if remote else None  # onnxviz.show's window: stdin and stdout are its link
    if link is not None and link.first is None:
        return 0  # the handle went away before asking for anything
    first = str(link.first.get("path", "")) if link is not None and link.first is not None else args.file
    if args.file and not os.path.exists(args.file):
        raise OnnxvizError(f"{args.file} does not exist.")
    choose_platform(bool(args.screenshot))
    one_blas_thread()  # before numpy comes with the workers' modules
    with building():  # the modules and the window live as long as the process: no collection walks them
        for module in WORKERS_FIRST:
            importlib.import_module(module)
    from onnxviz.model.background.early import analyse_early, start_analysis_workers

    start_analysis_workers()  # forks of this process, before any thread starts: their imports are done
    tune_window_process()  # before any other thread starts: each thread must allocate from the one heap it tunes
    early = None
    if first and os.path.isfile(first):
        from pathlib import Path

        early = analyse_early(Path(first))  # in the worker processes, while this one imports Qt and builds a window
    with building():
        for module in MODEL_FIRST:
            importlib.import_module(module)
        from onnxviz.ui.app import ensure_app, example_model_path, install_exception_hook
        from onnxviz.ui.main_window import MainWindow

        app = ensure_app(guard=False)
        install_exception_hook()
        window = MainWindow()  # which guards the tooltips once built
    if early is not None:
        window.validation.adopt(early)  # the window's open of that file takes it over
    if link is not None:
        from onnxviz.ui.remote import serve

        return serve(app, window, link)
    if args.example and not args.file:
        args.file = str(example_model_path())
    if args.screenshot:
        from onnxviz.ui.screenshot import screenshot_and_quit

        ends = getattr(args, "ends_process", False)  # the workers are killed once grabbed: their end overlaps the PNG
        code = screenshot_and_quit(window, args.file, args.screenshot, args.size, kill_shared_workers if ends else None)
        if ends:
            end_process(code, window.settings)
        return code
    window.show()
    if args.file:
        window.open_path(args.file)
    return app.exec()
