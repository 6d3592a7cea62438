"""Process-wide tuning, in one place: what onnxviz changes for the whole Python process rather than for a model.

* The window's process calls :func:`one_blas_thread` before it imports numpy, and :func:`tune_window_process` at
  start-up, before any other thread starts: the GIL's switch interval and the C allocator's settings (below).
* The cycle collector: :func:`building` and :func:`settle` (``gc.disable``/``gc.freeze``) around work that builds
  many long-lived objects, in any process.
* The C allocator: :func:`big_blocks` around big protobuf fills (it does nothing unless the process was tuned).

**The cycle collector** must not stop the window while big structures are built. A full collection walks every tracked object with the GIL held, in whichever thread
happens to allocate: with a 123k-node model open (its index, the laid-out scene:
millions of lists, dicts and tuples) one takes ~200 ms, and when the layout thread
triggers it the GUI thread waits as long. Once such long-lived structures are built,
:func:`settle` moves everything alive out of the collector's sight (``gc.freeze``, O(1));
later collections only walk what was created since. Frozen objects are still freed by
reference counting: a closed document has no reference cycles, so it goes as before
(tests/ui/test_window.py checks it).

**The C allocator** of the window's process: big fills find their pages ready, and freed memory goes back. Protobuf fills a new block of memory with the GIL held (parsing a 256 MiB tensor, or handing out its
``raw_data``), and a block that size is fresh from the kernel, so each of its 65k pages faults on first
touch: ~100 ms in which the GUI thread waits for the GIL. Freeing such a block unmaps it, with the GIL held
too (1 GiB: ~70 ms). In the window's process (:func:`reuse_big_blocks`, glibc only) freed blocks stay in
the heap, so :func:`big_blocks` can touch a block first with the GIL released (a C call through ctypes) and
free it for the fill that follows, which then copies into pages already there (~15 ms); and freeing costs
nothing. What is freed is given back to the system by a thread of its own, a piece at a time (a closed
model's memory, within a second).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import mmap
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator

GIL_SWITCH_INTERVAL_S = 0.0005
BIG_BLOCK = 32 << 20  # fills of at least this many bytes are prepared (smaller ones fault for < 15 ms)
GIVE_BACK_EVERY_S = 1.0  # how often the heap's thread looks for free memory to give back
GIVE_BACK_ABOVE = 64 << 20  # and gives it back when there is this much
_SLACK = 1 << 20  # a prepared block is this much larger than the fill, for the allocator's own headers
_STEP = 32 << 20  # pages dropped per call by give_back (~3 ms each)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc's mallopt options
_LARGEST = 2**31 - 1  # mallopt takes an int
_MADV_DONTNEED = 4
_PAGE = mmap.PAGESIZE
_NEEDED = ("gnu_get_libc_version", "mallopt", "malloc_trim", "madvise", "mallinfo2")  # glibc 2.33 and later
_glibc: ctypes.CDLL | None = None  # set by reuse_big_blocks()
_give_back_lock = threading.Lock()
_filling = 0  # big_blocks() under way: their ready blocks must stay until filled


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (2.33 and later): ``arena`` is the bytes the heap holds from the system."""

    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def reuse_big_blocks() -> bool:
    """For the window's process, before its threads start: every thread allocates from one heap (a
    thread's own arena can hold no block over 64 MiB), blocks of any size come from it, and what is freed stays
    in it until a thread of its own gives it back (:func:`give_back`, when a second finds 64 MiB free). True
    when the C library is glibc and took the settings; elsewhere nothing changes."""
    global _glibc
    lib = _load_glibc() if _glibc is None else None
    settings = ((_M_ARENA_MAX, 1), (_M_MMAP_THRESHOLD, _LARGEST), (_M_TRIM_THRESHOLD, _LARGEST))
    if lib is not None and all(lib.mallopt(option, value) == 1 for option, value in settings):
        _glibc = lib
        threading.Thread(target=_give_back_when_free, name="onnxviz-heap", daemon=True).start()
    return _glibc is not None


@contextlib.contextmanager
def big_blocks() -> Iterator[Callable[[int], None]]:
    """Around GIL-held C calls that fill new blocks of many megabytes: yields ``ready(size)``, to call just
    before each; it touches a block of that size with the GIL released and frees it, so the fill takes
    pages already there (see the module's text); meanwhile nothing is given back. Without
    :func:`reuse_big_blocks` (or with fills under :data:`BIG_BLOCK`), ``ready`` does nothing."""
    global _filling
    lib = _glibc
    if lib is None:
        yield _not_needed
        return
    with _give_back_lock:
        _filling += 1
    try:
        yield lambda size: _touch(lib, size) if size >= BIG_BLOCK else None
    finally:
        with _give_back_lock:
            _filling -= 1


def give_back() -> None:
    """Return the heap's free memory to the system (after :func:`reuse_big_blocks`, freeing does not) with the GIL
    released and the allocator held only briefly: its free blocks are taken :data:`_STEP` bytes at a time, their
    pages dropped with no lock held, and freed again (``malloc_trim`` alone holds the allocator ~90 ms per GiB,
    and every thread's allocations wait meanwhile); ``malloc_trim`` then returns what is left."""
    lib = _glibc
    if lib is not None:
        with _give_back_lock:
            _drop_free_pages(lib)
            lib.malloc_trim(0)


def give_back_if_free() -> bool:
    """:func:`give_back` when the heap holds :data:`GIVE_BACK_ABOVE` bytes free and no :func:`big_blocks` is
    filling (its ready blocks must stay); whether it did."""
    lib = _glibc
    if lib is None or _filling or lib.mallinfo2().fordblks < GIVE_BACK_ABOVE:
        return False
    give_back()
    return True


def _give_back_when_free() -> None:
    """The heap's own thread: :func:`give_back_if_free` every :data:`GIVE_BACK_EVERY_S` seconds (a closed
    model's memory returns to the system within a second or so, whichever thread freed it)."""
    while True:
        time.sleep(GIVE_BACK_EVERY_S)
        give_back_if_free()


def _drop_free_pages(lib: ctypes.CDLL) -> None:
    """Take the heap's free blocks in pieces of :data:`_STEP` bytes until a piece is new memory (none is left),
    drop each piece's pages, and free them all: that memory costs nothing until it is used again."""
    pieces = []
    arena = lib.mallinfo2().arena
    try:
        while piece := lib.malloc(_STEP):
            pieces.append(piece)
            if lib.mallinfo2().arena > arena:
                break  # the heap grew for it (or for another thread meanwhile): stop here
            first = -(-piece // _PAGE) * _PAGE
            lib.madvise(first, (piece + _STEP - first) // _PAGE * _PAGE, _MADV_DONTNEED)
    finally:
        for piece in pieces:
            lib.free(piece)


def _touch(lib: ctypes.CDLL, size: int) -> None:
    """Touch a heap block of ``size`` bytes and free it; none when the block is mapped on its own (a thread that
    started before :func:`reuse_big_blocks` allocates from an arena of its own, which maps every big block): its
    pages would go with it, and touching them would only add to the fill's time."""
    mapped = lib.mallinfo2().hblks
    block = lib.malloc(size + _SLACK)
    if block and lib.mallinfo2().hblks == mapped:
        lib.memset(block, 0, size + _SLACK)
    lib.free(block)


def _not_needed(size: int) -> None:
    """``ready`` where blocks are not reused: a fill takes fresh pages whatever is done before it."""


def _load_glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL("libc.so.6")  # glibc's name (ctypes.util.find_library runs ldconfig: ~15 ms)
    except OSError:
        return None
    if not all(hasattr(lib, name) for name in _NEEDED):
        return None  # musl, or glibc before 2.33: no such tuning
    lib.malloc.restype = ctypes.c_void_p
    lib.malloc.argtypes = [ctypes.c_size_t]
    lib.free.argtypes = [ctypes.c_void_p]
    lib.memset.restype = ctypes.c_void_p
    lib.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    lib.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.malloc_trim.argtypes = [ctypes.c_size_t]
    lib.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.mallinfo2.restype = _MallInfo2
    return lib


def tune_window_process() -> None:
    """The window's process, at start-up (before any other thread starts, for the allocator): background threads
    (layout, statistics) run Python while the GUI thread calls into Qt, and PySide releases the GIL around every
    C++ call; with the default 5 ms switch interval each re-acquisition can wait 5 ms, which adds up to visible
    freezes (a 123k-node open: ~480 ms longest pause at 5 ms, ~190 ms at 0.5 ms). Then
    :func:`reuse_big_blocks`: protobuf's big fills (a 256 MiB tensor) find their pages ready, no ~100 ms stop.
    Calling it again changes nothing."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    reuse_big_blocks()


def one_blas_thread() -> None:
    """Before numpy is imported: its OpenBLAS does matrix products in one thread. By default it starts a thread
    per further core as numpy is imported, each spinning ~0.1 s of a core while it waits for work (2^28 cycles);
    the window's process does no matrix product, and that core is the one its worker processes start on as they
    are forked (a 12k-node open: ~0.1 s of CPU). Its workers and run processes inherit the setting. A setting the
    user made is kept."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


# -- the cycle collector -----------------------------------------------------------------------------------------
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
