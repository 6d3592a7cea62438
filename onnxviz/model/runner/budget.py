"""Whether a captured run fits in memory, told before it starts, and the parts a user can capture instead.

Sizes come from ONNX shape inference with the actual inputs' shapes (symbolic dimensions resolved),
the same shapes the worker plans its packs with; a value of a shape inference cannot tell is not
counted. At its peak a captured run holds its values once in the worker (2.5 GiB of values: 2.9 GiB
of private memory, its input included) and copies them into shared memory (RAM) up to the run's
memory budget (beyond it they go to disk), so it fits when that sum is within the memory available now.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from onnxviz.model.graph.summary import human_bytes
from onnxviz.model.runner.errors import RunError

SHARED_BUDGET = 1 << 30  # RunOptions.memory_budget's default: values kept in shared memory, the rest on disk
MEMINFO = Path("/proc/meminfo")


def available_memory() -> int | None:
    """Bytes of memory available to a new process now (Linux' MemAvailable), None when unknown."""
    try:
        for line in MEMINFO.read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:  # other Unix systems: free pages only (a lower bound)
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


@dataclass(frozen=True)
class CaptureSize:
    """Bytes of each main-graph node output whose shape is known; ``unknown`` counts the others."""

    sizes: Mapping[str, int]
    unknown: int
    outputs: tuple[str, ...]  # the graph outputs, always captured

    def total(self, keep: Collection[str] | None = None) -> int:
        """Bytes of the values a run keeping ``keep`` (None: every value) captures."""
        if keep is None:
            return sum(self.sizes.values())
        return sum(self.sizes.get(name, 0) for name in {*keep, *self.outputs})


def capture_size(model: onnx.ModelProto, shapes: Mapping[str, tuple[int, tuple[int, ...]]]) -> CaptureSize:
    """The size of every main-graph node output, from ``shapes`` (see packing.static_shapes)."""
    sizes: dict[str, int] = {}
    unknown = 0
    for node in model.graph.node:
        for name in node.output:
            known = shapes.get(name) if name else None
            if known is None:
                unknown += bool(name)
                continue
            elem_type, dims = known
            try:
                itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)).itemsize
            except (KeyError, TypeError, ValueError):
                unknown += 1
                continue
            sizes[name] = math.prod(dims) * itemsize
    return CaptureSize(sizes, unknown, tuple(o.name for o in model.graph.output))


class CaptureTooBig(RunError):
    """A capture that would not fit in memory; ``size`` tells the parts' sizes, for an offer to capture one."""

    def __init__(self, size: CaptureSize, need: int, available: int, part: bool = False) -> None:
        at_least = "at least " if size.unknown else ""
        what = "capturing the chosen values" if part else "capturing every value"
        super().__init__(f"{what} needs {at_least}{human_bytes(need)} of memory at its peak, "
                         f"but {human_bytes(available)} is available")
        self.size, self.need, self.available, self.part = size, need, available, part


def peak_need(values: int, shared_budget: int = SHARED_BUDGET) -> int:
    """Memory a capture of ``values`` bytes needs at its peak: the values in the worker, and their copy in
    shared memory as far as ``shared_budget`` lets them go there."""
    return values + min(values, shared_budget)


def check_fits(size: CaptureSize, keep: Collection[str] | None, available: int | None,
               shared_budget: int = SHARED_BUDGET) -> None:
    """Raise CaptureTooBig when the values a run keeps would not fit in ``available`` bytes."""
    need = peak_need(size.total(keep), shared_budget)
    if available is not None and need > available:
        raise CaptureTooBig(size, need, available, part=keep is not None)


def upstream_values(nodes: Sequence[onnx.NodeProto], position: int) -> frozenset[str]:
    """The outputs of node ``position`` and of every node it depends on (its values and those above)."""
    producer = {name: i for i, node in enumerate(nodes) for name in node.output if name}
    seen = {position}
    todo = [position]
    while todo:
        for name in nodes[todo.pop()].input:
            i = producer.get(name)
            if i is not None and i not in seen:
                seen.add(i)
                todo.append(i)
    return node_values(nodes, seen)


def node_values(nodes: Sequence[onnx.NodeProto], positions: Iterable[int]) -> frozenset[str]:
    """The outputs of the nodes at ``positions``."""
    return frozenset(name for i in positions for name in nodes[i].output if name)
