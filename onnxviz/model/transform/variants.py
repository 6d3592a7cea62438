"""The variants tried in a session: the model a transform started from and each result made from it, kept
as files in a private folder (so any of them can be shown, compared, used or saved later), with what was
measured of each: size, the outputs' error against the model it was made from, the worst layer's SQNR and
the onnxruntime timing once they are measured."""

from __future__ import annotations

import math
import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx

from onnxviz.model.io.digest import digest_of
from onnxviz.model.io.disk import atomic_write
from onnxviz.model.transform.catalog import Settings
from onnxviz.model.transform.pipeline import private_folder

MAX_VARIANTS = 24  # the oldest results go beyond this (the original stays)


@dataclass
class Variant:
    """One model of the session. ``source``: the key of the variant it was made from (None for an original)."""

    key: int
    name: str
    path: Path
    size: int
    digest: bytes
    settings: Settings | None = None
    source: int | None = None
    output_rel: float = math.nan    # the outputs' largest relative error against ``source``'s
    output_sqnr: float = math.nan   # the outputs' lowest SQNR (dB) against ``source``'s
    worst_sqnr: float = math.nan    # the lowest SQNR of a layer's value against ``source``'s, once compared
    worst_layer: str = ""
    speed_ms: float = math.nan      # onnxruntime's median run time, once timed
    notes: list[str] = field(default_factory=list)

    @property
    def is_original(self) -> bool:
        return self.settings is None

    def options_text(self) -> str:
        if self.settings is None:
            return "as opened"
        return ", ".join(f"{k} {_value(v)}" for k, v in self.settings.options().items()) or self.settings.tool

    def to_json(self) -> dict[str, Any]:
        def number(x: float) -> float | None:
            return x if math.isfinite(x) else None
        return {"name": self.name, "transform": self.settings.tool if self.settings else None,
                "settings": self.settings.options() if self.settings else {}, "size": self.size,
                "output_rel": number(self.output_rel), "output_sqnr_db": number(self.output_sqnr),
                "worst_sqnr_db": number(self.worst_sqnr), "worst_layer": self.worst_layer,
                "speed_ms": number(self.speed_ms)}


def _value(v: object) -> str:
    if isinstance(v, list):
        return f"[{len(v)}]" if len(v) > 3 else "[" + ", ".join(map(str, v)) + "]"
    return str(v)


@dataclass(frozen=True)
class Staged:
    """A variant's file written and hashed, not listed yet."""

    path: Path
    digest: bytes
    size: int


_UNSAFE = re.compile(r"[^\w .,()+=-]+")


def _file_name(name: str) -> str:
    """``name`` as a file name: no separators or control characters, at most 100 characters."""
    return (_UNSAFE.sub("_", name).strip(" .") or "model")[:100]


class Variants:
    """The session's variants, in the order they were made; files in a private folder, removed by
    :meth:`cleanup`."""

    def __init__(self) -> None:
        self.items: list[Variant] = []
        self._folder: Path | None = None
        self._next = 0
        self._staged = 0
        self._lock = threading.Lock()
        self._names: dict[int, set[str]] = {}

    def stage(self, data: bytes, file_name: str) -> Staged:
        """Write ``data`` (self-contained bytes: no external data) as a file named ``file_name`` (the diff shows
        it) in a new place of the session's folder, and hash it: in a background thread, before :meth:`adopt`."""
        with self._lock:
            if self._folder is None:
                self._folder = private_folder()
            place = self._folder / f"staged-{self._staged}"
            self._staged += 1
        place.mkdir()
        path = place / (_file_name(file_name) + ".onnx")
        atomic_write(path, data, durable=False, verb="write", shown=path.name)  # every byte checked
        return Staged(path, digest_of(data), len(data))

    def adopt(self, staged: Staged, name: str, settings: Settings | None = None, source: int | None = None) -> Variant:
        """The staged file as a variant (on the thread that owns the list); the same bytes as a variant already
        listed: that one (the staged file goes)."""
        known = self.find(staged.digest)
        if known is not None:
            if staged.path != known.path:
                shutil.rmtree(staged.path.parent, ignore_errors=True)
            return known
        variant = Variant(self._next, name, staged.path, staged.size, staged.digest, settings, source)
        self._next += 1
        self.items.append(variant)
        self._trim()
        return variant

    def add(self, data: bytes, name: str, settings: Settings | None = None, source: int | None = None,
            file_name: str = "") -> Variant:
        """:meth:`stage` and :meth:`adopt` at once."""
        return self.adopt(self.stage(data, file_name or name), name, settings, source)

    def find(self, digest: bytes) -> Variant | None:
        return next((v for v in self.items if v.digest == digest), None)

    def find_bytes(self, data: bytes) -> Variant | None:
        return self.find(digest_of(data))

    def node_names(self, key: int) -> set[str]:
        """The names of the variant's main-graph nodes."""
        if key not in self._names:
            model = onnx.load(str(self.data_path(key)), load_external_data=False)
            self._names[key] = {n.name for n in model.graph.node}
        return self._names[key]

    def data_path(self, key: int) -> Path:
        variant = self.get(key)
        if variant is None:
            raise KeyError(key)
        return variant.path

    def get(self, key: int) -> Variant | None:
        return next((v for v in self.items if v.key == key), None)

    def remove(self, key: int) -> None:
        variant = self.get(key)
        if variant is not None:
            self.items.remove(variant)
            shutil.rmtree(variant.path.parent, ignore_errors=True)

    def data(self, key: int) -> bytes:
        variant = self.get(key)
        if variant is None:
            raise KeyError(key)
        return variant.path.read_bytes()

    def cleanup(self) -> None:
        self.items.clear()
        self._names.clear()
        with self._lock:
            folder, self._folder = self._folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def _trim(self) -> None:
        made = [v for v in self.items if not v.is_original]
        for old in made[:max(0, len(made) - MAX_VARIANTS)]:
            self.remove(old.key)
