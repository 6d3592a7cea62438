"""A subcommand run in this process as the Python API's engine: its own arguments (parsed by its own parser,
so every option keeps the command's default), documents and arrays in place of paths, and its ``--json``
object handed back rather than printed. What ``onnxviz.compare`` returns is therefore, by construction,
what ``onnxviz compare --json`` prints."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from onnxviz.model.errors import OnnxvizError

PLACEHOLDER = "-"  # a positional argument the API then sets to an object (a document, arrays)


@dataclass(frozen=True)
class CommandOutput:
    """A command's exit code, its ``--json`` object and the notes it gave (on stderr from the shell)."""

    code: int
    value: dict[str, Any]
    notes: list[str] = field(default_factory=list)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise OnnxvizError(f"{message.rstrip('.')}.")


def run_command(command: str, positional: int, options: list[str], objects: dict[str, Any]) -> CommandOutput:
    """Run ``onnxviz COMMAND`` with ``positional`` placeholders, ``options`` and ``--json``; then set each of
    ``objects`` (argument name -> object) on the parsed arguments before the command runs."""
    from onnxviz.cli import _configure
    from onnxviz.cli.output import collecting

    parser = _Parser(prog=f"onnxviz {command}")
    handler = _configure(command)(parser)
    args = parser.parse_args([PLACEHOLDER] * positional + options + ["--json"])
    for name, value in objects.items():
        if not hasattr(args, name):
            raise AssertionError(f"onnxviz {command} has no argument '{name}'")
        setattr(args, name, value)
    with collecting() as collected:
        code = handler(args)
    if len(collected.values) != 1 or not isinstance(collected.values[0], dict):
        raise OnnxvizError(f"onnxviz {command} gave no result.")
    return CommandOutput(code, collected.values[0], collected.notes)
