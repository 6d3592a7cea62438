"""Values that are not tensors: sequences and maps (a ZipMap's list of {label: probability}, a
SplitToSequence's tensors). They are kept as JSON: plain lists, objects, numbers and strings."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

STRUCTURED_LIMIT = 1_000_000  # numbers kept of one value; a bigger one keeps its first ones and says so
TRUNCATED = "\u2026"  # the last item of a list cut at the limit


def jsonable(value: Any, budget: list[int] | None = None) -> Any:
    """``value`` (lists, tuples, dicts, arrays, numpy scalars) as JSON-ready Python; a value of more
    than :data:`STRUCTURED_LIMIT` numbers is cut (its lists end with :data:`TRUNCATED`)."""
    left = budget if budget is not None else [STRUCTURED_LIMIT]
    if isinstance(value, dict):
        return {_key(k): jsonable(v, left) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            if left[0] <= 0:
                out.append(TRUNCATED)
                break
            out.append(jsonable(item, left))
        return out
    if isinstance(value, np.ndarray):
        left[0] -= value.size
        if left[0] < 0:
            return [*jsonable(value.ravel()[: max(0, value.size + left[0])].tolist(), [STRUCTURED_LIMIT]), TRUNCATED]
        return _finite(value.tolist())
    left[0] -= 1
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float):
        return _finite(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def _key(k: Any) -> str:
    if isinstance(k, np.generic):
        k = k.item()
    return k.decode("utf-8", "replace") if isinstance(k, bytes) else str(k)


def _finite(value: Any) -> Any:
    """NaN and infinities as the strings 'NaN', 'Infinity', '-Infinity' (JSON has no such numbers)."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def is_structured(value: Any) -> bool:
    """A sequence or a map from an engine (not a tensor)."""
    return isinstance(value, (list, tuple, dict))


def describe(value: Any) -> str:
    """A JSON value (see :func:`jsonable`) in words: 'sequence of 2 maps', 'map of 3 entries', 'empty optional'."""
    if isinstance(value, dict):
        return f"map of {len(value)} {'entry' if len(value) == 1 else 'entries'}"
    if isinstance(value, list):
        items = [v for v in value if v != TRUNCATED]
        kind = "maps" if items and isinstance(items[0], dict) else "tensors"
        return f"sequence of {len(items)} {kind}" + (" (cut)" if len(items) < len(value) else "")
    if value is None:
        return "empty optional"
    return "value"
