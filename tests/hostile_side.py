"""Hostile text and side files: doc strings that point at devices, FIFOs, local and remote images or are
huge, and settings files that are damaged or huge (nothing big is committed; everything is built here).

``DOC_CASES`` maps a name to a builder ``folder -> doc string`` (it may make a FIFO or an image in the
folder); :func:`documented_model` puts one doc string on every documented part of a small model.
``SETTINGS_CASES`` maps a name to a builder ``settings folder -> None`` that writes the settings file the
window reads (``<folder>/onnxviz/onnxviz.ini``, as ``use_settings_dir`` arranges) or puts something else
where it should be.
"""

from __future__ import annotations

import errno
import os
import random
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import onnx
from onnx import TensorProto, helper
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QImage

DocBuild = Callable[[Path], str]
SettingsBuild = Callable[[Path], None]
SECRET_COLOUR = QColor(255, 0, 255)  # the local image a doc string points at is all this colour
HUGE_CHARS = 5_000_000
DEEP = 5_000  # nesting levels


# -- side files a doc string points at -------------------------------------------------------------

def fifo(folder: Path) -> Path:
    """A named pipe: whoever opens it for reading waits until someone writes (nobody will)."""
    path = folder / "pipe"
    if not path.exists():
        os.mkfifo(path)
    return path


TRAP_THREAD = "fifo-trap"


class FifoTrap:
    """Counts the times anything opened ``folder/pipe`` for reading while the trap was set.

    A reader blocks in open() until a writer comes: a thread keeps trying a non-blocking open for
    writing, which fails while nobody reads and succeeds (and so releases the reader, who then reads
    an empty file) once someone does. A test that renders text pointing at the pipe therefore
    finishes either way, and a count above 0 says something (Python or Qt's C++) opened it.
    """

    def __init__(self, folder: Path) -> None:
        self.path = fifo(folder)
        self.opened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=TRAP_THREAD, daemon=True)

    def __enter__(self) -> FifoTrap:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: no reader
                    raise
                continue
            self.opened += 1
            os.close(fd)


def secret_image(folder: Path) -> Path:
    """A 64x64 magenta PNG: a 'private' picture that must never be shown."""
    path = folder / "secret.png"
    image = QImage(64, 64, QImage.Format.Format_RGB32)
    image.fill(SECRET_COLOUR)
    image.save(str(path))
    return path


def huge_markdown(chars: int = HUGE_CHARS) -> str:
    section = ("## Section {i}\n\nSome *emphasis*, `code`, a [link](https://onnx.ai/{i}) and a table:\n\n"
               "| a | b |\n|---|---|\n| {i} | x |\n\n- item\n  - nested item\n\n")
    parts: list[str] = []
    size = 0
    i = 0
    while size < chars:
        parts.append(section.format(i=i))
        size += len(parts[-1])
        i += 1
    return "".join(parts)[:chars]


DOC_CASES: dict[str, DocBuild] = {
    "dev_zero_image": lambda f: "![z](/dev/zero)",
    "dev_zero_file_uri": lambda f: "![z](file:///dev/zero)",
    "fifo_image": lambda f: f"![f]({fifo(f)})",
    "fifo_reference_image": lambda f: f"see ![f][pipe]\n\n[pipe]: {fifo(f)}",
    "fifo_linked_image": lambda f: f"[![logo]({fifo(f)})](https://onnx.ai)",
    "local_image": lambda f: f"![secret]({secret_image(f)})",
    "local_image_uri": lambda f: f"![secret]({secret_image(f).as_uri()})",
    "relative_image": lambda f: "![secret](secret.png)",
    "http_image": lambda f: "![remote](http://127.0.0.1:9/x.png) ![remote](https://example.invalid/y.png)",
    "raw_html_img": lambda f: f'<img src="{fifo(f)}"> <img src="/dev/zero">',
    "html_img_in_link_title": lambda f: f"[docs](https://onnx.ai \"<img src='{fifo(f)}'>\")",
    "huge": lambda f: huge_markdown(),
    "one_huge_line": lambda f: "word " * (HUGE_CHARS // 5),
    "deep_quotes": lambda f: ">" * DEEP + " deep",
    "deep_lists": lambda f: "".join("  " * i + "- x\n" for i in range(DEEP)),
    "many_images": lambda f: f"![f]({fifo(f)}) " * 20_000,
    "big_table": lambda f: "| a | b |\n|---|---|\n" + "| x | y |\n" * 200_000,
}
ALT_TEXT = {"dev_zero_image": "[image: z]", "fifo_image": "[image: f]", "fifo_linked_image": "[image: logo]",
            "local_image": "[image: secret]", "http_image": "[image: remote]"}


def documented_model(doc: str) -> onnx.ModelProto:
    """x -> Relu -> call a local function F -> y, with ``doc`` on the model, its graph, the Relu node and F."""
    fn = helper.make_function("local", "F", ["a"], ["b"], [helper.make_node("Neg", ["a"], ["b"])],
                              [helper.make_opsetid("", 18)])
    fn.doc_string = doc
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu", doc_string=doc),
             helper.make_node("F", ["r"], ["y"], name="call", domain="local")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], doc_string=doc)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
                              functions=[fn], doc_string=doc)
    model.ir_version = 9
    return model


# -- settings files ----------------------------------------------------------------------------

def settings_file(folder: Path) -> Path:
    path = folder / "onnxviz" / "onnxviz.ini"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _with_values(values: dict[str, object]) -> SettingsBuild:
    def build(folder: Path) -> None:
        s = QSettings(str(settings_file(folder)), QSettings.Format.IniFormat)
        for key, value in values.items():
            s.setValue(key, value)
        s.sync()
    return build


def _text(text: str | bytes) -> SettingsBuild:
    def build(folder: Path) -> None:
        path = settings_file(folder)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
    return build


def _instead(make: Callable[[Path], None]) -> SettingsBuild:
    def build(folder: Path) -> None:
        make(settings_file(folder))
    return build


def _random_bytes(size: int) -> bytes:
    return random.Random(15).randbytes(size)


LONG_COMPONENT = "/tmp/" + "a" * 300 + "/model.onnx"
SETTINGS_CASES: dict[str, SettingsBuild] = {
    "long_path_component": _with_values({"recent/files": [LONG_COMPONENT]}),
    "long_path": _with_values({"recent/files": ["/" + "/".join(["d" * 200] * 40) + "/m.onnx"]}),
    "nul_in_path": _with_values({"recent/files": ["/tmp/a\x00b.onnx", "relative.onnx", ""]}),
    "many_recent": _with_values({"recent/files": [f"/tmp/many/model{i}.onnx" for i in range(100_000)]}),
    "recent_not_a_list": _with_values({"recent/files": 42}),
    "recent_list_of_lists": _with_values({"recent/files": [["/tmp/a.onnx"], {"x": 1}, 3.5]}),
    "theme_garbage": _with_values({"appearance/theme": ["dark", "light"]}),
    "theme_huge": _with_values({"appearance/theme": "d" * 1_000_000}),
    "watch_garbage": _with_values({"file/watch": [1, 2]}),
    "geometry_garbage": _with_values({"window/geometry": _random_bytes(4096), "window/state": _random_bytes(4096)}),
    "geometry_huge": _with_values({"window/geometry": b"\x01" * 300_000, "window/state": b"\x00" * 300_000}),
    "geometry_not_bytes": _with_values({"window/geometry": "not bytes", "window/state": 12}),
    "dims_garbage": _with_values({"run/dims": '{"N": 1e400, "M": [1], "K": -3, "L": 123456789012345678901234}'}),
    "binary_junk": _text(_random_bytes(64_000)),
    "hand_edited": _text("[window]\ngeometry=not bytes\nstate=@Variant(\\0\\0)\n[recent]\nfiles=@Invalid()\n"
                         "[appearance]\ntheme=purple\n[file]\nwatch=maybe\n\x00\xff garbage\n"),
    "huge_file": _text("[other]\n" + "".join(f"k{i}={'v' * 100}\n" for i in range(200_000))),
    "fifo_instead": _instead(lambda path: os.mkfifo(path)),
    "dev_zero_instead": _instead(lambda path: path.symlink_to("/dev/zero")),
    "folder_instead": _instead(lambda path: path.mkdir()),
}


def recent_entries(folder: Path) -> list[str]:
    """What the settings file in ``folder`` holds as recent files now."""
    value = QSettings(str(settings_file(folder)), QSettings.Format.IniFormat).value("recent/files", [])
    return [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []


# -- fuzzing the settings file ------------------------------------------------------------------
KEYS = ("recent/files", "appearance/theme", "file/watch", "window/geometry", "window/state", "run/dims")
_ODD_VALUES = ("@Invalid()", "@Variant(\\0\\0\\0\\x7f\\0\\0)", "@ByteArray(\\0\\xff)", "@Rect(1 2 3)", "@Size(-1 -1)",
               "true", "maybe", "dark", "system", "\"a, b\"", "1e400", "{\"N\": 1e400}", "/dev/zero", "\\0",
               "@Variant(\\0\\0\\0\\t\\0\\0\\0\\x1)")


def settings_mutant(rng: random.Random) -> bytes:
    """An INI text for the settings file: each known key (or a stray one) with a value that is odd in
    type, size or syntax; sometimes random bytes or a cut line."""
    lines: list[str] = []
    for _ in range(rng.randint(1, 8)):
        key = rng.choice(KEYS) if rng.random() < 0.85 else "".join(rng.choice("ab/[]=\\%") for _ in range(5))
        section, _, name = key.partition("/")
        lines.append(f"[{section}]")
        lines.append(f"{name}={_odd_value(rng)}")
    text = "\n".join(lines).encode("utf-8", "surrogateescape")
    if rng.random() < 0.2:
        at = rng.randrange(len(text) + 1)
        text = text[:at] + rng.randbytes(rng.randrange(1, 64)) + text[at:]
    return text


def _odd_value(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(_ODD_VALUES)
    if kind == 1:  # a list of paths, some hostile
        paths = [rng.choice(["/tmp/m.onnx", "/" + "a" * rng.randint(200, 300), "rel.onnx", "/x/\\0y", "/" * 5000,
                             "/tmp/\u202egnp.onnx"]) for _ in range(rng.randint(0, 30))]
        return ", ".join(paths)
    if kind == 2:  # long text
        return rng.choice("ab/\\@(") * rng.randint(1, 200_000)
    if kind == 3:
        return str(rng.randint(-2**70, 2**70))
    if kind == 4:
        return "@ByteArray(" + "".join(rng.choice("\\0x1ab") for _ in range(rng.randint(0, 3000))) + ")"
    return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randint(0, 40)))


def exercise_settings(folder: Path, data: bytes) -> str:
    """Write ``data`` as the settings file in ``folder`` (the one ``use_settings_dir`` set) and read it
    the way the window does as it starts: recent files (menu and welcome page), theme, watch, window
    geometry and state, remembered run dims. Says how many recent files were kept."""
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QMainWindow, QMenu

    from onnxviz.ui.recent import RecentFiles
    from onnxviz.ui.run.input_sources import remembered_dims
    from onnxviz.ui.settings import open_settings, read_bool, read_bytes
    from onnxviz.ui.theme import read_theme
    from onnxviz.ui.welcome import WelcomeWidget

    settings_file(folder).write_bytes(data)
    settings = open_settings()
    menu = QMenu()
    recent = RecentFiles(settings, menu, lambda _: None)
    paths = recent.paths()
    assert len(paths) <= 12 and all(isinstance(p, str) and p.startswith("/") for p in paths), paths
    WelcomeWidget(QIcon()).set_recent(paths)
    read_theme(settings)
    read_bool(settings, "file/watch", False)
    window = QMainWindow()
    for key, restore in (("window/geometry", window.restoreGeometry), ("window/state", window.restoreState)):
        value = read_bytes(settings, key)
        if value is not None:
            restore(value)
    remembered_dims(settings)
    settings.sync()
    menu.deleteLater()
    window.deleteLater()
    return f"{len(paths)} recent"
