"""The ``onnxviz`` command: ``info``, ``check``, ``render``, ``run``, ``diff``, ``compare``, or the window."""

from __future__ import annotations

import argparse
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


def _subcommands() -> dict[str, Callable[[argparse.ArgumentParser], Callable[[argparse.Namespace], int]]]:
    from onnxviz.cli import check, compare, diff, info, render, run

    return {"info": info.configure, "check": check.configure, "render": render.configure, "run": run.configure,
            "diff": diff.configure, "compare": compare.configure}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        subs = _subcommands()
        if args and args[0] in subs:
            parser = _Parser(prog=f"onnxviz {args[0]}")
            handler = subs[args[0]](parser)
            return handler(parser.parse_args(args[1:]))
        from onnxviz.cli import gui

        parser = _Parser(prog="onnxviz", description=(
            "Open, inspect, edit and run ONNX models. Without a subcommand, opens the window. "
            "Subcommands: info, check, render, run, diff, compare (see 'onnxviz SUBCOMMAND -h')."))
        handler = gui.configure(parser)
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
