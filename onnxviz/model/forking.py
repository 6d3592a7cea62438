"""How a helper process starts: as a fork of this one where that is safe, else as a fresh interpreter.

A fork has everything this process imported (onnx, numpy, the model layer: ~0.3 s of CPU for a fresh
interpreter to import again) and needs no resource-tracker process of multiprocessing's, which would outlive
the command by a moment. It is safe on Linux while this process runs no other thread (a lock held by another
thread stays held in the copy) and has not imported Qt; a window's later processes are spawned."""

from __future__ import annotations

import sys
import threading


def start_method() -> str:
    """``"fork"`` when a new process may be a copy of this one now, else ``"spawn"``."""
    forkable = sys.platform.startswith("linux") and threading.active_count() == 1 and "PySide6.QtCore" not in sys.modules
    return "fork" if forkable else "spawn"
