"""The digest that names a model state's bytes (background results are remembered by it)."""

from __future__ import annotations

import hashlib


def digest_of(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()  # releases the GIL for big inputs
