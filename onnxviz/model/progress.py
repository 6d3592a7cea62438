"""Progress reporting and cancellation for long work run off the GUI thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from onnxviz.model.errors import Cancelled

ProgressFn = Callable[[float, str], None]
"""Called with a fraction in [0, 1] and a short description of the current step."""


def no_progress(_fraction: float, _text: str) -> None:
    """A progress callback that ignores everything."""


class CancelToken:
    """Set from any thread; checked by the worker at convenient points."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` when cancellation was requested."""
        if self._event.is_set():
            raise Cancelled()

    def pause(self) -> None:
        """Between two slices of long work in a background thread: :meth:`check`, then let the other threads
        (the GUI's) take the GIL. A slice in C holds it throughout (parsing 2,000 nodes, copying a 256 MiB
        tensor out of protobuf: ~0.1 s); without a yield the same thread may take it straight back."""
        self.check()
        time.sleep(0)
