"""How stored numbers read: the shortest text that reads back as the very value stored.

Attribute floats are float32: a stored 0.2 is 0.20000000298023224 as a Python float, and reads
``0.2`` here. Every place that shows or edits an attribute's or a small tensor's numbers uses these.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def float_text(x: float) -> str:
    """The shortest text that reads back as the same float32: ``0.2``, ``1e-07``, ``3.0``, ``inf``."""
    return str(np.float32(x))


def array_values_text(array: np.ndarray) -> str:
    """The values of a small array, flat: ``3`` for a scalar, ``[0.2, 1.5]`` otherwise; floats at the
    array's own precision, shortest."""
    flat = array.reshape(-1)
    items = [_item_text(v) for v in flat]
    return items[0] if array.ndim == 0 and items else "[" + ", ".join(items) + "]"


def _item_text(v: Any) -> str:
    if isinstance(v, np.floating):
        return str(v)  # numpy prints a float16/32/64 with the fewest digits that read back to it
    if isinstance(v, np.bool_):
        return str(bool(v))
    if isinstance(v, np.integer):
        return str(int(v))
    return repr(v.decode("utf-8", "replace") if isinstance(v, bytes) else v)
