"""Columns of values (one per field of 100k+ records) as a few flat objects, for passing between processes.

A list of 123k strings or ints unpickles as 123k Python objects in one ``pickle.loads``, which holds the
GIL throughout, in whichever thread receives the result: the GUI thread waited ~0.1 s per column. Packed,
a column is one string and an array of offsets, or one array of numbers; it is unpacked into a list
in Python, a bytecode at a time, where the GUI thread gets its turns.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, chain
from typing import Any, overload

INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class Texts(Sequence[str]):
    """Strings, joined, and where each ends; a string is cut out when asked (or all of them by :meth:`values`)."""

    text: str
    ends: array[int]

    def values(self) -> list[str]:
        text, ends = self.text, self.ends
        return [text[start:end] for start, end in zip(chain((0,), ends), ends, strict=False)]  # starts: one more than ends

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return self.values()[i]
        i = range(len(self.ends))[i]  # IndexError beyond the ends, like a list's
        return self.text[self.ends[i - 1] if i else 0:self.ends[i]]


@dataclass(frozen=True)
class Counts:
    """Non-negative ints up to 2**63 - 1, or None (kept as -1)."""

    numbers: array[int]

    def values(self) -> list[int | None]:
        return [None if n < 0 else n for n in self.numbers]


@dataclass(frozen=True)
class Flags:
    """Booleans, one byte each."""

    flags: bytes

    def values(self) -> list[bool]:
        return [b != 0 for b in self.flags]


def pack_column(values: list[Any]) -> Any:
    """``values`` as :class:`Texts`, :class:`Counts` or :class:`Flags` when they are all of that kind,
    else as they are."""
    kinds = set(map(type, values))  # one pass in C; bool is a kind of its own
    if kinds <= {str}:
        return Texts("".join(values), array("q", accumulate(map(len, values))))
    if kinds == {bool}:
        return Flags(bytes(values))
    if kinds <= {int, type(None)}:
        numbers = [-1 if v is None else v for v in values]
        if int not in kinds or (min(v for v in values if v is not None) >= 0 and max(numbers) <= INT64_MAX):
            return Counts(array("q", numbers))
    return values


def unpack_column(column: Any) -> list[Any]:
    """The list :func:`pack_column` was given."""
    if isinstance(column, Texts | Counts | Flags):
        return column.values()
    return list(column)
