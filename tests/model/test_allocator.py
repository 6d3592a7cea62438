"""The window's heap (onnxviz.model.process_tuning): a big fill finds its pages ready, and what is freed goes back.

Each check runs in a fresh process: the allocator's settings are the process's, and its figures (resident
memory, the heap's free bytes) must not depend on what other tests left behind.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO
from onnx import numpy_helper

from onnxviz.model import process_tuning
from onnxviz.model.graph.tensors import load_tensor

pytestmark = pytest.mark.skipif(process_tuning._load_glibc() is None, reason="the heap is tuned with glibc only")

MEASURE = r"""
import json, threading, time
from onnxviz.model import process_tuning

MIB = 1 << 20
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * process_tuning._PAGE // MIB

found = {"configured": process_tuning.reuse_big_blocks()}
def fill():  # in a thread of its own, as the window's loading and saving are
    with process_tuning.big_blocks() as ready:
        start = resident()
        ready(96 * MIB)
        found["ready"] = resident() - start  # the touched block stays in the heap, for the fill
        process_tuning.give_back_if_free()  # does nothing while a fill is under way
        found["kept"] = resident() - start
        data = b"x" * (96 * MIB)  # the fill: a block of the same size, in the pages made ready
        found["fill"] = resident() - start
        del data
    found["freed"] = resident() - start
    deadline = time.monotonic() + 20
    while resident() - start > 16 and time.monotonic() < deadline:  # the heap's own thread gives it back
        time.sleep(0.05)
    found["given back"] = resident() - start
thread = threading.Thread(target=fill)
thread.start()
thread.join()
print(json.dumps(found))
"""


def _measured() -> dict[str, int]:
    run = subprocess.run([sys.executable, "-c", MEASURE], capture_output=True, text=True, timeout=120,
                         cwd=REPO)
    assert run.returncode == 0, run.stderr
    return dict(json.loads(run.stdout))


def test_a_big_fill_takes_pages_made_ready_and_the_freed_block_goes_back_later() -> None:
    found = _measured()
    assert found["configured"]
    assert found["ready"] >= 90 and found["kept"] >= 90  # touched with the GIL released, and kept
    assert found["fill"] - found["ready"] < 16  # the fill faulted no new pages (without the settings: +96 MiB)
    assert found["freed"] >= 90  # freeing returns nothing on the spot (it would unmap with the GIL held)
    assert found["given back"] <= 16  # the heap's thread gave it back


def test_elsewhere_than_glibc_nothing_is_tuned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(process_tuning, "_glibc", None)
    assert not process_tuning.reuse_big_blocks()
    touched: list[int] = []
    monkeypatch.setattr(process_tuning, "_touch", lambda lib, size: touched.append(size))
    with process_tuning.big_blocks() as ready:
        ready(1 << 30)
    assert touched == []


def test_a_weight_shown_from_the_model_is_copied_into_a_block_made_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    """A weight read for the Weights panel from the model (an edited one: no file bytes to point into) is copied
    out of protobuf with the GIL held, into a block made ready for it."""
    assert process_tuning.reuse_big_blocks()
    monkeypatch.setattr(process_tuning, "BIG_BLOCK", 1024)
    readied: list[int] = []
    monkeypatch.setattr(process_tuning, "_touch", lambda lib, size: readied.append(size))
    tensor = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    array, stats = load_tensor(tensor)
    assert readied == [4096 * 4] and array is not None and float(array[63, 63]) == 4095.0
    readied.clear()
    load_tensor(tensor, raw=memoryview(tensor.raw_data))  # the file's bytes at hand: nothing is copied
    assert readied == []
