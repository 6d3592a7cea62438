"""A minimal plain-Python signal, so the model layer can notify without Qt."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Signal(Generic[T]):
    """Callbacks called with one argument. Bound methods are held weakly,
    so a closed widget does not keep a document alive or get called."""

    def __init__(self) -> None:
        self._slots: list[Any] = []

    def connect(self, slot: Callable[[T], Any]) -> None:
        ref: Any
        if hasattr(slot, "__self__") and hasattr(slot, "__func__"):
            ref = weakref.WeakMethod(slot)
        else:
            ref = lambda s=slot: s  # noqa: E731 - a strong reference for plain functions
        self._slots.append(ref)

    def disconnect(self, slot: Callable[[T], Any]) -> None:
        self._slots = [r for r in self._slots if r() not in (None, slot)]

    def emit(self, value: T) -> None:
        alive = []
        for ref in list(self._slots):
            fn = ref()
            if fn is None:
                continue
            alive.append(ref)
            fn(value)
        self._slots = alive
