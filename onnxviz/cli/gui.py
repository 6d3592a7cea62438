"""``onnxviz [FILE] [--screenshot OUT.png]``: the window."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.add_argument("file", nargs="?", help="an .onnx model to open")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="open the window, wait until the model is drawn, save a grab of the window, exit")
    parser.add_argument("--example", action="store_true", help="open the example model shipped with onnxviz")
    parser.add_argument("--size", default="1400x900", help="window size for --screenshot (WxH)")
    return run


def run(args: argparse.Namespace) -> int:
    from onnxviz.ui.app import ensure_app, example_model_path, install_exception_hook
    from onnxviz.ui.main_window import MainWindow

    app = ensure_app()
    install_exception_hook()
    window = MainWindow()
    if args.example and not args.file:
        args.file = str(example_model_path())
    if args.screenshot:
        return window.screenshot_and_quit(args.file, args.screenshot, args.size)
    window.show()
    if args.file:
        window.open_path(args.file)
    return app.exec()
