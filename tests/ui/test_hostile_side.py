"""Hostile text and side files (tests/hostile_side.py): a doc string never makes the window open a file,
a device, a pipe or an address; a huge one never holds up the graph; and nothing in the settings file
stops the app from starting or slows it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType

import hostile_side
import onnx
import pytest
from conftest import REPO
from hostile_side import (
    ALT_TEXT,
    DOC_CASES,
    SECRET_COLOUR,
    SETTINGS_CASES,
    TRAP_THREAD,
    FifoTrap,
    documented_model,
)
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent, QImage
from PySide6.QtWidgets import QApplication, QToolTip
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

from onnxviz.model.text import display_prose
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.panels.common import Page
from onnxviz.ui.widgets.markdown import (
    DISPLAY_CHARS,
    QUICK_CHARS,
    FullTextDialog,
    InertDocument,
    MarkdownBlock,
)

# -- audit: Python-level opens and connections while a flag is on ------------------------------------
WATCHED = ("open", "os.open", "io.open", "socket.connect", "socket.getaddrinfo", "socket.gethostbyname",
           "urllib.Request", "http.client.connect", "subprocess.Popen", "os.system")


class _Audit:
    """Audit hooks cannot be removed: one hook for the session, recording only while switched on."""

    def __init__(self) -> None:
        self.on = False
        self.events: list[tuple[str, str]] = []
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[object, ...]) -> None:
        if self.on and event in WATCHED and threading.current_thread().name != TRAP_THREAD:  # the trap's own
            self.events.append((event, repr(args[:1])[:200]))

    def __enter__(self) -> _Audit:
        self.events = []
        self.on = True
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.on = False


AUDIT = _Audit()
IMAGE_CASES = ["dev_zero_image", "dev_zero_file_uri", "fifo_image", "fifo_reference_image", "fifo_linked_image",
               "local_image", "local_image_uri", "relative_image", "http_image", "raw_html_img",
               "html_img_in_link_title"]


@pytest.fixture
def trap(tmp_path: Path) -> Iterator[FifoTrap]:
    with FifoTrap(tmp_path) as t:
        yield t


def _magenta_pixels(image: QImage) -> int:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    return sum(1 for y in range(0, image.height(), 2) for x in range(0, image.width(), 2)
               if image.pixelColor(x, y) == SECRET_COLOUR)


@pytest.mark.parametrize("case", IMAGE_CASES)
def test_rendering_a_doc_string_opens_no_file_and_no_socket(qtbot: QtBot, tmp_path: Path, trap: FifoTrap,
                                                           case: str) -> None:
    """'![z](/dev/zero)' grew the window by ~1 GB/s, '![f](fifo)' blocked it for ever, a local image was shown."""
    text = DOC_CASES[case](tmp_path)
    with AUDIT as audit:
        block = MarkdownBlock(text)
        qtbot.addWidget(block)
        block.resize(400, 200)
        block.show()
        qtbot.waitExposed(block)
        picture = block.grab().toImage()
        QApplication.processEvents()
    assert audit.events == [] and trap.opened == 0
    assert isinstance(block.document(), InertDocument) and block.document().refused == 0  # no image left to load
    assert _magenta_pixels(picture) == 0
    shown = block.toPlainText()
    assert "\ufffc" not in shown  # no image object: alt text, or the HTML as written
    if case in ALT_TEXT:
        assert ALT_TEXT[case] in shown
    if case == "raw_html_img":
        assert shown.startswith('<img src="')


def test_the_inert_document_is_asked_for_images_and_gives_none(qtbot: QtBot, tmp_path: Path, trap: FifoTrap) -> None:
    """The second wall: an image left in the document (as Qt's parser makes it) is asked of the document
    as it is laid out, which answers a blank image; Qt loads the path itself after an empty answer."""
    document = InertDocument()
    document.setMarkdown(f"![f]({trap.path}) ![z](/dev/zero) ![s]({hostile_side.secret_image(tmp_path)})")
    document.setTextWidth(300)
    assert document.size().height() > 0
    image = QImage(300, 100, QImage.Format.Format_RGB32)
    image.fill(0)
    from PySide6.QtGui import QPainter

    painter = QPainter(image)
    document.drawContents(painter)
    painter.end()
    assert document.refused >= 3 and trap.opened == 0  # each image, once or more and _magenta_pixels(image) == 0
    assert MarkdownBlock("x").loadResource(2, document.baseUrl()).size().width() == 1  # the browser's own answer


def test_a_link_title_with_markup_is_a_tooltip_shown_as_written(qtbot: QtBot, tmp_path: Path, trap: FifoTrap) -> None:
    block = MarkdownBlock(DOC_CASES["html_img_in_link_title"](tmp_path))
    qtbot.addWidget(block)
    block.resize(400, 120)
    block.show()
    qtbot.waitExposed(block)
    pos = block.cursorRect(block.document().find("docs")).center() - QPoint(4, 0)
    assert block.anchorAt(pos) == "https://onnx.ai"
    tip = block.document().find("docs").charFormat().toolTip()
    assert "&lt;img src=" in tip and "<img" not in tip
    QApplication.sendEvent(block.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, block.viewport().mapToGlobal(pos)))
    QApplication.processEvents()
    assert QToolTip.text() == tip and trap.opened == 0
    QToolTip.hideText()


def _blocks(page: Page) -> dict[str, MarkdownBlock]:
    settle()
    return {title: b for title, section in page.sections.items() for b in section.findChildren(MarkdownBlock)
            if b.toPlainText()}


def _seen(page: Page, prefix: str) -> dict[str, tuple[str, QImage]]:
    """The text and picture of each Markdown block of ``page`` now (the panel is rebuilt on each selection)."""
    return {f"{prefix} {title}": (b.toPlainText(), b.grab().toImage()) for title, b in _blocks(page).items()}


@pytest.mark.parametrize("case", ["fifo_image", "dev_zero_image", "local_image", "http_image"])
def test_every_panel_shows_an_image_as_its_alt_text(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                    tmp_path: Path, trap: FifoTrap, case: str) -> None:
    """Model (model, main graph, current function) and Node (node, function) panels, through the window."""
    path = tmp_path / "documented.onnx"
    onnx.save(documented_model(DOC_CASES[case](tmp_path)), path)
    w = make_window()
    open_and_wait(qtbot, w, path)
    doc, panels = w.doc, w.panels  # type: ignore[attr-defined]
    assert doc is not None
    targets = (str(trap.path), "/dev/zero", "secret.png", "127.0.0.1", "example.invalid")
    with AUDIT as audit:
        shown = _seen(panels.model_panel, "model")
        doc.selection.select_node("", 0)
        shown |= _seen(panels.node_panel, "node")
        doc.selection.select_node("", 1)
        shown |= _seen(panels.node_panel, "call")
        doc.selection.clear("fn:local:F:")
        shown |= _seen(panels.model_panel, "function")
    assert {"model Description", "model Main graph description", "node Node doc_string", "call F documentation",
            "function Current graph"} <= set(shown)
    assert [e for e in audit.events if any(t in e[1] for t in targets)] == [] and trap.opened == 0
    for title, (text, picture) in shown.items():
        if title.split()[1] != "Relu":  # the operator's own documentation is not the file's
            assert ALT_TEXT[case] in text, title
        assert _magenta_pixels(picture) == 0


@pytest.mark.parametrize("case", ["huge", "one_huge_line", "big_table", "deep_lists", "deep_quotes", "many_images"])
def test_a_huge_doc_string_is_cut_with_a_way_to_see_it_all(qtbot: QtBot, tmp_path: Path, trap: FifoTrap,
                                                           case: str) -> None:
    text = DOC_CASES[case](tmp_path)
    block = MarkdownBlock(text)
    assert block.pending == (len(text) > QUICK_CHARS)  # rendered after what is being built
    qtbot.addWidget(block)
    block.resize(500, 260)
    block.show()
    qtbot.waitUntil(lambda: not block.pending)
    shown = block.toPlainText()
    assert trap.opened == 0
    if len(text) <= DISPLAY_CHARS:
        assert "Show all" not in shown
        return
    assert len(shown) < DISPLAY_CHARS + 200 and shown.endswith(f"of {len(text):,} characters. Show all")
    block.verticalScrollBar().setValue(block.verticalScrollBar().maximum())  # the link ends the text
    inside = block.document().find("Show all")
    inside.setPosition(inside.selectionStart() + 3)
    pos = block.cursorRect(inside).center()
    assert block.anchorAt(pos) == "onnxviz:show-all"
    from PySide6.QtCore import Qt

    qtbot.mouseClick(block.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    [dialog] = block.findChildren(FullTextDialog)
    assert dialog.isVisible() and dialog.view.toPlainText() == display_prose(text)
    dialog.close()


def test_a_huge_model_description_does_not_hold_up_the_graph(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                             tmp_path: Path) -> None:
    """A 5 MB doc string was never drawn (minutes of Markdown layout on the GUI thread); the figures are in
    bench/bench_hostile_side.py. Here: the graph is drawn and every block holds the cut text."""
    path = tmp_path / "huge.onnx"
    onnx.save(documented_model(DOC_CASES["huge"](tmp_path)), path)
    w = make_window()
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=60000):  # type: ignore[attr-defined]
        w.open_path(path)
    blocks = _blocks(w.panels.model_panel)  # type: ignore[attr-defined]
    assert all(len(b.toPlainText()) < DISPLAY_CHARS + 200 for b in blocks.values())
    assert blocks["Description"].toPlainText().endswith("Show all")


# -- settings -------------------------------------------------------------------------------------
def _settings_folder() -> Path:
    from onnxviz.ui.settings import settings_file

    return settings_file().parent.parent


def _log_text() -> str:
    from onnxviz.ui.applog import log_path

    return log_path().read_text() if log_path().exists() else ""


BAD_SETTINGS = {  # case: a fragment of the log line saying what was dropped
    "long_path_component": "longer than 255 bytes", "long_path": "longer than 4096 bytes",
    "nul_in_path": "a NUL character", "many_recent": "past the first 12", "recent_not_a_list": "not a list",
    "recent_list_of_lists": "not text", "theme_garbage": "appearance/theme", "theme_huge": "appearance/theme",
    "watch_garbage": "file/watch", "geometry_huge": "not a saved window layout",
    "geometry_not_bytes": "not a saved window layout", "huge_file": "moved to", "fifo_instead": "not a regular file",
    "dev_zero_instead": "not a regular file", "folder_instead": "not a regular file",
}


def test_the_settings_file_is_where_open_settings_looks() -> None:
    from onnxviz.ui.settings import open_settings, settings_file

    assert Path(open_settings().fileName()) == settings_file() == hostile_side.settings_file(_settings_folder())


@pytest.mark.parametrize("case", sorted(SETTINGS_CASES))
def test_nothing_in_the_settings_file_stops_the_window(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                       example_copy: Path, case: str) -> None:
    """'recent/files' holding a path with a 300-character folder name made the app refuse to start
    (OSError from Path.exists); 100,000 entries held the first frame back for more than 90 s."""
    folder = _settings_folder()
    SETTINGS_CASES[case](folder)
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    assert w.doc is not None and w.doc.path == example_copy
    paths = w.recent.paths()
    assert paths[0] == str(example_copy) and len(paths) <= 12
    w.recent_menu.aboutToShow.emit()
    assert len([a for a in w.recent_menu.actions() if a.data()]) == len(paths)
    if case in BAD_SETTINGS:
        assert BAD_SETTINGS[case] in _log_text()
    if case == "many_recent":
        assert len(hostile_side.recent_entries(folder)) <= 12  # dropped from the file: the next start is quick


def test_the_app_starts_from_the_command_line_despite_its_settings(tmp_path: Path, example_copy: Path) -> None:
    """The reported case, as the user met it: `onnxviz MODEL` with a damaged ~/.config/onnxviz/onnxviz.ini."""
    config, data = tmp_path / "config", tmp_path / "data"
    SETTINGS_CASES["long_path_component"](config)
    SETTINGS_CASES["many_recent"](config)  # the same file: both keys
    out = tmp_path / "shot.png"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "XDG_DATA_HOME": str(data), "QT_QPA_PLATFORM": "offscreen",
           "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "onnxviz", str(example_copy), "--screenshot", str(out)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not QImage(str(out)).isNull()
    assert "Traceback" not in done.stderr and "past the first 12" in done.stderr


def test_settings_that_are_fine_are_kept_and_say_nothing(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                         example_copy: Path) -> None:
    from onnxviz.ui.theme import Theme

    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    w.theme.set_choice(Theme.DARK)
    w.watch_action.trigger()
    w.close()
    again = make_window()
    assert again.theme.choice is Theme.DARK and again.watch_action.isChecked()
    assert again.recent.paths() == [str(example_copy)]
    assert _log_text() == ""
