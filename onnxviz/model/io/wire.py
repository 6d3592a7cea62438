"""The one reader (and writer) of protobuf's wire format: varints and the fields of a message, read from
bytes without parsing them into messages (to explain a broken file, or to find a tensor's bytes in place),
and the keys and lengths that writing a message a piece at a time needs."""

from __future__ import annotations

from collections.abc import Iterator

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """The bytes are not well-formed protobuf. ``where`` names the place (set by the caller that knows
    it), ``truncated`` tells whether they merely end early, ``offset`` where reading stopped and
    ``needed`` how far a field claimed to reach."""

    def __init__(self, where: str, truncated: bool, offset: int, needed: int = 0) -> None:
        super().__init__(where)
        self.where = where
        self.truncated = truncated
        self.offset = offset
        self.needed = needed


def read_varint(data: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos`` (read no further than ``end``) and the position after it."""
    value = shift = 0
    while True:
        if pos >= end:
            raise WireError("", end >= len(data), pos)
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise WireError("", False, pos)


def fields(data: bytes | memoryview, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, start, end) of each field of the message in ``data[start:end]``: for a
    length-delimited field its payload, for the others its value's bytes."""
    pos = start
    while pos < end:
        tag, pos = read_varint(data, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise WireError("", False, pos)
        if wire == VARINT:
            _, after = read_varint(data, pos, end)
        elif wire in (FIXED64, FIXED32):
            after = pos + (8 if wire == FIXED64 else 4)
        elif wire == LENGTH_DELIMITED:
            length, pos = read_varint(data, pos, end)
            after = pos + length
        else:
            raise WireError("", False, pos)
        if after > end:
            raise WireError("", after > len(data), pos, after)
        yield number, wire, pos, after
        pos = after


def varint(n: int) -> bytes:
    """The varint encoding of ``n`` (not negative)."""
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def length_prefix(number: int, length: int) -> bytes:
    """The key and length that start length-delimited field ``number`` of ``length`` bytes."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(length)
