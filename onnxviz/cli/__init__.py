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


def fail(message: str, code: int = EXIT_UNREADABLE) -> None:
    """Print the one-line error and exit; the only way the CLI reports failure."""
    from onnxviz.cli.output import error

    error(message)
    raise SystemExit(code)


SUBCOMMANDS = ("info", "check", "render", "run", "diff", "compare", "transform")


def _configure(name: str) -> Callable[[argparse.ArgumentParser], Callable[[argparse.Namespace], int]]:
    """The ``configure`` of the subcommand ``name`` (or of the window, ``gui``), its module imported now: the
    window's start imports none of the others (they import onnx, which its worker processes import first)."""
    module = importlib.import_module(f"onnxviz.cli.{name}")
    configure: Callable[[argparse.ArgumentParser], Callable[[argparse.Namespace], int]] = module.configure
    return configure


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args and args[0] in SUBCOMMANDS:
            parser = _Parser(prog=f"onnxviz {args[0]}")
            handler = _configure(args[0])(parser)
            return handler(parser.parse_args(args[1:]))
        parser = _Parser(prog="onnxviz", description=(
            "Open, inspect, edit and run ONNX models. Without a subcommand, opens the window. "
            f"Subcommands: {', '.join(SUBCOMMANDS)} (see 'onnxviz SUBCOMMAND -h')."))
        handler = _configure("gui")(parser)
        return handler(parser.parse_args(args))
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
