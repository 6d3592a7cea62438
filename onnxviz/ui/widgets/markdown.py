"""Read-only Markdown blocks for documentation text: operator docs, doc_strings, summaries.

A doc_string is the file's to choose, and rendering it must never touch anything outside it: every
Markdown block in the window is a :class:`MarkdownBlock`, whose text lives in an :class:`InertDocument`
(it never reads a file, a device, a pipe or an address), with images replaced by their alt text, raw
HTML shown as text, tooltips shown as written and only http(s) links opened, on the user's click.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QImage,
    QPalette,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QPlainTextEdit,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.text import display_name, display_prose, hidden_in_prose
from onnxviz.ui.widgets.names import name_tooltip

_FEATURES = QTextDocument.MarkdownFeature(QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
                                          | QTextDocument.MarkdownFeature.MarkdownNoHTML.value)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
# What of a text is rendered as Markdown; the rest is behind "Show all". A 5 MB doc_string was never drawn, and
# Qt's tables cost ~0.5 ms a cell (300 rows of 2 cells: 0.3 s; 40 rows of 100: 1.9 s).
DISPLAY_CHARS = 10_000
DISPLAY_LINES = 300
DISPLAY_PIPES = 200  # '|': about the cells of a table
QUICK_CHARS = 2_000  # a longer text is rendered on the next turn of the event loop, after what is being built
SHOW_ALL = QUrl("onnxviz:show-all")  # the link after a cut text
SOURCE_CHARS = 200  # of an image's address in the tooltip of its alt text


class InertDocument(QTextDocument):
    """A text document that never loads a resource. Qt asks :meth:`loadResource` for each image of a
    document as it lays it out; the default reads the file (``/dev/zero`` filled memory at 1 GB/s, a
    FIFO blocked the GUI thread forever, ``/home/user/secret.png`` was shown) and an empty answer makes
    Qt load the path itself, so it answers a blank 1x1 image. :class:`MarkdownBlock` removes images
    before layout; this is the second wall, and :attr:`refused` counts what it was asked."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.refused = 0

    def loadResource(self, kind: int, name: QUrl | str) -> object:  # noqa: N802 - Qt's name
        self.refused += 1
        return blank_image()


def blank_image() -> QImage:
    image = QImage(1, 1, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    return image


class MarkdownBlock(QTextBrowser):
    """A borderless read-only Markdown block that grows to fit its text (up to ``max_height``).

    Raw HTML in the text is shown as text, never interpreted: operator docs write ``Tensor<T>``,
    and a model's doc_string is the file's to choose. Only ``<br>`` (in the ai.onnx.ml docs) breaks a line.
    Only http(s) links open (in the browser): a model's ``[docs](file:///etc/passwd)`` would otherwise
    replace the block with that file, and ``javascript:`` or ``smb:`` links go to whatever handles them.
    Bidi controls, zero-width and control characters are shown as escapes (``\\u202e``, in the theme's
    alert colour, named in a tooltip) instead of acting on the text: a doc_string's right-to-left
    override would make 'exe.txt' read 'txt.exe'. Images are shown as ``[image: alt text]`` and never
    loaded (:class:`InertDocument`). Only the start of a long text is rendered (:func:`cut_text`); a
    "Show all" link at the end opens the whole text, as plain text.
    """

    def __init__(self, markdown: str, max_height: int = 260) -> None:
        super().__init__()
        self.max_height = max_height
        self.full_text = ""
        self.pending = False  # a long text waits for the next turn of the event loop
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_link)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setStyleSheet("QTextBrowser { background: transparent; }")
        self.set_markdown(markdown)

    def set_markdown(self, markdown: str) -> None:
        """Show ``markdown`` instead (hidden while empty). A text over :data:`QUICK_CHARS` characters is
        rendered on the next turn of the event loop (:attr:`pending` until then): a panel being built
        and the graph being drawn come first."""
        self.full_text = markdown
        empty = not markdown.strip()
        if empty or self.parentWidget() is not None:  # showing a block with no parent would open a window
            self.setVisible(not empty)
        if len(markdown) <= QUICK_CHARS:
            self._render()
        elif not self.pending:
            self.pending = True
            self._use(InertDocument(self), "...")
            QTimer.singleShot(0, self, self._render)

    def _render(self) -> None:
        self.pending = False
        palette = self.palette()
        colours = Colours(palette.color(QPalette.ColorRole.BrightText), palette.color(QPalette.ColorRole.PlaceholderText),
                          palette.color(QPalette.ColorRole.Link))
        self._use(render_markdown(self.full_text, colours, self))

    def _use(self, document: InertDocument, text: str = "") -> None:
        if text:
            document.setPlainText(text)
        old = self.document()  # Qt deletes the document it made; the ones made here are deleted here
        self.setDocument(document)
        if isinstance(old, InertDocument):
            old.deleteLater()
        self._fit(self.viewport().width() if self.isVisible() else 300)

    def loadResource(self, kind: int, name: QUrl | str) -> object:  # noqa: N802 - Qt's name
        """Never asked while the document is an :class:`InertDocument`; a wall all the same."""
        return blank_image()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit(self.viewport().width())

    def _fit(self, width: int) -> None:
        self.document().setTextWidth(max(width, 100))
        height = int(min(self.document().size().height() + 6, self.max_height))
        if height != self.height():
            self.setFixedHeight(height)

    def _on_link(self, url: QUrl) -> None:
        if url == SHOW_ALL:
            FullTextDialog(self.full_text, self).show()
        else:
            _open_web_link(url)


class FullTextDialog(QDialog):
    """The whole of a cut text, as plain text (hidden characters escaped), selectable."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle(f"The whole text ({len(text):,} characters)")
        self.resize(760, 560)
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setPlainText(display_prose(text))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)


@dataclass(frozen=True)
class Colours:
    alert: QColor   # escaped hidden characters
    muted: QColor   # what stands in for something not shown: an image, the rest of a cut text
    link: QColor


def render_markdown(markdown: str, colours: Colours, parent: QObject | None = None) -> InertDocument:
    """``markdown`` (its start, :func:`cut_text`) as an inert document, made safe to show."""
    shown = cut_text(markdown)
    document = InertDocument(parent)
    document.setMarkdown(_BREAK.sub("  \n", shown), _FEATURES)
    _tone_down_headings(document)
    _defuse(document, colours)
    if len(shown) < len(markdown):
        _add_show_all(document, len(shown), len(markdown), colours)
    document.setDocumentMargin(2)
    return document


def cut_text(text: str) -> str:
    """``text`` if it is within :data:`DISPLAY_CHARS` characters, :data:`DISPLAY_LINES` lines and
    :data:`DISPLAY_PIPES` '|' (table cells); else its start up to a paragraph's (or a line's) end in the
    second half of the first limit it reaches, or that limit itself."""
    limit = min(len(text), DISPLAY_CHARS, _nth(text, "\n", DISPLAY_LINES), _nth(text, "|", DISPLAY_PIPES))
    if limit == len(text):
        return text
    head = text[:limit]
    for boundary in ("\n\n", "\n"):
        end = head.rfind(boundary)
        if end >= limit // 2:
            return head[:end]
    return head


def _nth(text: str, char: str, n: int) -> int:
    """Where the ``n``-th ``char`` of ``text`` is (``len(text)`` if it has fewer)."""
    at = -1
    for _ in range(n):
        at = text.find(char, at + 1)
        if at < 0:
            return len(text)
    return at


def _open_web_link(url: QUrl) -> None:
    if url.scheme().lower() in ("http", "https"):
        QDesktopServices.openUrl(url)


def _tone_down_headings(document: QTextDocument) -> None:
    """Markdown headings inside a side panel: a little larger than the text, not poster-sized."""
    block = document.begin()
    while block.isValid():
        level = block.blockFormat().headingLevel()
        if level:
            cursor = QTextCursor(block)
            cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
            fmt = QTextCharFormat()
            fmt.setProperty(QTextFormat.Property.FontSizeAdjustment, 1 if level <= 2 else 0)
            cursor.mergeCharFormat(fmt)
        block = block.next()


@dataclass
class _Replacement:
    start: int  # in Qt's UTF-16 positions
    end: int
    text: str
    format: QTextCharFormat
    source: str = ""  # for an image: its address (text is its alt text so far)


def _defuse(document: QTextDocument, colours: Colours) -> None:
    """After parsing, before anything lays the document out: each image becomes its alt text, each
    character :func:`~onnxviz.model.graph.index.display_prose` escapes becomes its escape (Markdown turns
    ``&#x202e;`` into the character itself, so escaping the source is not enough), and each tooltip
    (a link's title) is shown as written: Qt would take '<img src=/dev/zero>' in one as rich text."""
    found: list[_Replacement] = []
    tooltips: list[tuple[int, int, str]] = []  # start, end, tooltip
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            base = fragment.charFormat()
            if base.toolTip():
                tooltips.append((fragment.position(), fragment.position() + fragment.length(), base.toolTip()))
            if base.isImageFormat():
                _add_image(found, fragment.position(), fragment.length(), base, colours.muted)
            else:
                found += [_hidden_character(fragment.position() + _utf16_length(fragment.text()[:offset]), c, base,
                                            colours.alert) for offset, c in hidden_in_prose(fragment.text())]
            fragments += 1
        block = block.next()
    cursor = QTextCursor(document)
    for start, end, tooltip in tooltips:  # a format changes, no position moves
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextCharFormat()
        fmt.setToolTip(name_tooltip(tooltip))
        cursor.mergeCharFormat(fmt)
    for r in reversed(found):  # from the end: earlier positions stay valid
        cursor.setPosition(r.start)
        cursor.setPosition(r.end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(_image_text(r.text) if r.source else r.text, r.format)


def _add_image(found: list[_Replacement], start: int, length: int, base: QTextCharFormat, colour: QColor) -> None:
    """An image as ``[image: alt text]``; the parser splits '![a *b*](x)' into one image per styled run
    of its alt text, which become one placeholder again."""
    image = base.toImageFormat()
    alt = str(image.property(QTextFormat.Property.ImageAltText) or "")
    last = found[-1] if found else None
    if last is not None and last.end == start and last.source and last.source == image.name():
        found[-1] = _Replacement(last.start, start + length, last.text + alt, last.format, last.source)
        return
    fmt = QTextCharFormat()
    fmt.setForeground(colour)
    fmt.setFontItalic(True)
    if base.isAnchor():  # [![logo](x.png)](https://...) stays a link
        fmt.setAnchor(True)
        fmt.setAnchorHref(base.anchorHref())
    fmt.setToolTip(name_tooltip(f"An image the file points to, not shown: {display_name(image.name(), SOURCE_CHARS)}"))
    found.append(_Replacement(start, start + length, alt, fmt, image.name() or " "))


def _image_text(alt: str) -> str:
    return f"[image: {display_prose(alt)}]" if alt.strip() else "[image]"


def _hidden_character(position: int, c: str, base: QTextCharFormat, colour: QColor) -> _Replacement:
    fmt = QTextCharFormat(base)
    fmt.setForeground(colour)
    fmt.setToolTip(f"U+{ord(c):04X} {unicodedata.name(c, 'control character')}: "
                   "an invisible character in the file, shown escaped")
    return _Replacement(position, position + _utf16_length(c), display_prose(c), fmt)


def _add_show_all(document: QTextDocument, shown: int, total: int, colours: Colours) -> None:
    cursor = QTextCursor(document)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.insertBlock()
    note = QTextCharFormat()
    note.setForeground(colours.muted)
    cursor.insertText(f"Shown: the first {shown:,} of {total:,} characters. ", note)
    link = QTextCharFormat()
    link.setAnchor(True)
    link.setAnchorHref(SHOW_ALL.toString())
    link.setFontUnderline(True)
    link.setForeground(colours.link)
    cursor.insertText("Show all", link)


def _utf16_length(text: str) -> int:
    """Qt counts positions in UTF-16 units: a character beyond U+FFFF takes two."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF) if not text.isascii() else len(text)


def markdown_view(markdown: str, max_height: int = 260) -> MarkdownBlock:
    return MarkdownBlock(markdown, max_height)
