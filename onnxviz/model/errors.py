"""The project's own error type: a one-sentence message for the user plus details."""

from __future__ import annotations


class OnnxvizError(Exception):
    """An error the user should see as one clear sentence.

    ``message`` is what a dialog or the command line prints; ``details`` is the
    longer explanation (or the underlying exception text) shown on request.
    """

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return self.message


def sentence(message: str) -> str:
    """``message`` as a sentence for a dialog: its first letter capitalised, unless the first word is a
    file or value name ("bad.npz could not be read", "x_1 ...") that would then be misspelt."""
    first = message.split(" ", 1)[0]
    if not first or any(c in first for c in "./\\_'\"0123456789") or not first.islower():
        return message
    return message[:1].upper() + message[1:]


class LoadError(OnnxvizError):
    """The file could not be read as an ONNX model."""


class EditError(OnnxvizError):
    """An edit was refused; the document is unchanged."""


class SaveError(OnnxvizError):
    """Saving failed; the file on disk is unchanged."""


class Cancelled(Exception):
    """Raised inside long work when the user cancelled it."""
