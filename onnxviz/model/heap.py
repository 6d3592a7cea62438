"""Keeping Python's cycle collector from stopping the window while big structures are built.

A full collection walks every tracked object with the GIL held, in whichever thread
happens to allocate: with a 123k-node model open (its index, the laid-out scene:
millions of lists, dicts and tuples) one takes ~200 ms, and when the layout thread
triggers it the GUI thread waits as long. Once such long-lived structures are built,
:func:`settle` moves everything alive out of the collector's sight (``gc.freeze``, O(1));
later collections only walk what was created since. Frozen objects are still freed by
reference counting: a closed document has no reference cycles, so it goes as before
(tests/ui/test_window.py checks it).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


def settle() -> None:
    """Call when objects that live as long as the document have just been built (any thread)."""
    gc.freeze()


@contextlib.contextmanager
def building() -> Iterator[None]:
    """Around code that makes very many long-lived, acyclic objects (a run's 100k value records):
    no collection meanwhile, and the result settled, so no later one walks it either (loading 61k
    records froze the window ~0.3 s in a collection triggered by the load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        settle()
        if enabled:
            gc.enable()
