"""The ``onnxviz`` command: ``info``, ``check``, ``render``, ``run``, ``diff``, ``compare``, ``transform``, or the
window."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from onnxviz.model.errors import OnnxvizError

EXIT_OK, EXIT_PROBLEMS, EXIT_UNREADABLE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        fail(message)


_json_errors = False  # the command was asked for JSON: its errors are JSON too


def fail(message: str, code: int = EXIT_UNREADABLE) -> None:
    """Print the one-line error (with ``--json``, as a JSON object on stdout, where its reader reads) and exit;
    the only way the CLI reports failure."""
    from onnxviz.cli.output import error, json_error

    if _json_errors:
        json_error(message, code)
    else:
        error(message)
    raise SystemExit(code)


SUBCOMMANDS = ("info", "check", "render", "run", "diff", "compare", "transform")

# What each command's exit status means: the epilog of its --help, and the README's table. Every command
# also exits 2 on an error (one line on stderr: the file cannot be read, a bad argument) and 130 when
# interrupted.
EXIT_STATUS = {
    "gui": "0 when the window was closed (or --screenshot wrote its picture)",
    "info": "0 when the model was read",
    "check": "0 when the model has no error (its warnings and notes are printed), 1 when it has errors "
             "(with --strict: errors or warnings)",
    "render": "0 when the picture was written",
    "run": "0 when the model ran",
    "diff": "0 when the models are identical, 1 when they differ",
    "compare": "0 when every value pair is within tolerance, 1 when one is beyond it",
    "transform": "0 when the result was written, 1 when its outputs changed beyond the tolerance (nothing is "
                 "written)",
}


def exit_status_text(command: str) -> str:
    """The exit codes of ``command`` (a subcommand, or "gui" for the window), one paragraph for --help."""
    return (f"exit status: {EXIT_STATUS[command]}; 2 on an error (the file cannot be read, a bad argument: "
            "one line on stderr); 130 when interrupted.")


def _configure(name: str) -> Callable[[argparse.ArgumentParser], Callable[[argparse.Namespace], int]]:
    """The ``configure`` of the subcommand ``name`` (or of the window, ``gui``), its module imported now: the
    window's start imports none of the others (they import onnx, which its worker processes import first)."""
    module = importlib.import_module(f"onnxviz.cli.{name}")
    configure: Callable[[argparse.ArgumentParser], Callable[[argparse.Namespace], int]] = module.configure
    return configure


class _Version(argparse.Action):
    """``--version``: one line, never wrapped (argparse's own action wraps it at the terminal's width)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from onnxviz.cli.output import say

        say(version_text())
        parser.exit()


def version_text() -> str:
    """``onnxviz 0.1.0`` and, on the same line, the versions a bug report needs."""
    from importlib.metadata import PackageNotFoundError, version

    from onnxviz.version import VERSION

    def installed(name: str, *distributions: str) -> str:
        for distribution in distributions or (name,):
            try:
                return f"{name} {version(distribution)}"
            except PackageNotFoundError:
                continue
        return f"{name} not installed"

    libraries = ", ".join((installed("onnx"), installed("onnxruntime"), installed("numpy"),
                           installed("PySide6", "PySide6-Essentials", "PySide6")))
    return f"onnxviz {VERSION} ({libraries}; Python {sys.version.split()[0]})"


def main(argv: Sequence[str] | None = None) -> int:
    global _json_errors
    args = list(sys.argv[1:] if argv is None else argv)
    _json_errors = bool(args) and args[0] in SUBCOMMANDS and "--json" in args
    try:
        if args and args[0] in SUBCOMMANDS:
            parser = _Parser(prog=f"onnxviz {args[0]}", epilog=exit_status_text(args[0]))
            handler = _configure(args[0])(parser)
            return handler(parser.parse_args(args[1:]))
        parser = _Parser(prog="onnxviz", description=(
            "Open, inspect, edit and run ONNX models. Without a subcommand, opens the window. "
            f"Subcommands: {', '.join(SUBCOMMANDS)} (see 'onnxviz SUBCOMMAND -h')."),
            epilog=exit_status_text("gui"))
        parser.add_argument("--version", action=_Version, help="print the versions of onnxviz and of the libraries it runs on, and exit")
        handler = _configure("gui")(parser)
        # the command itself (not a call from Python): a finished --screenshot may end the process at once
        return handler(parser.parse_args(args, argparse.Namespace(ends_process=argv is None)))
    except OnnxvizError as exc:
        fail(exc.message)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except MemoryError:
        fail("out of memory")
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        fail(f"unexpected internal error ({type(exc).__name__}: {exc})")
    return EXIT_UNREADABLE
