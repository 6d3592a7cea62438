"""Read-only Markdown blocks for documentation text: operator docs, doc_strings, summaries."""

from __future__ import annotations

import re
import unicodedata

from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QPalette,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QFrame, QTextBrowser

from onnxviz.model.index import display_prose, hidden_in_prose

_FEATURES = QTextDocument.MarkdownFeature(QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
                                          | QTextDocument.MarkdownFeature.MarkdownNoHTML.value)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


class MarkdownBlock(QTextBrowser):
    """A borderless read-only Markdown block that grows to fit its text (up to ``max_height``).

    Raw HTML in the text is shown as text, never interpreted: operator docs write ``Tensor<T>``,
    and a model's doc_string is the file's to choose. Only ``<br>`` (in the ai.onnx.ml docs) breaks a line.
    Only http(s) links open (in the browser): a model's ``[docs](file:///etc/passwd)`` would otherwise
    replace the block with that file, and ``javascript:`` or ``smb:`` links go to whatever handles them.
    Bidi controls, zero-width and control characters are shown as escapes (``\\u202e``, in the theme's
    alert colour, named in a tooltip) instead of acting on the text: a doc_string's right-to-left
    override would make 'exe.txt' read 'txt.exe'.
    """

    def __init__(self, markdown: str, max_height: int = 260) -> None:
        super().__init__()
        self.max_height = max_height
        self.setOpenLinks(False)
        self.anchorClicked.connect(_open_web_link)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setStyleSheet("QTextBrowser { background: transparent; }")
        self.set_markdown(markdown)

    def set_markdown(self, markdown: str) -> None:
        """Show ``markdown`` instead (hidden while empty)."""
        self.document().setMarkdown(_BREAK.sub("  \n", markdown), _FEATURES)
        _tone_down_headings(self.document())
        _show_hidden_characters(self.document(), self.palette().color(QPalette.ColorRole.BrightText))
        self.document().setDocumentMargin(2)
        empty = not markdown.strip()
        if empty or self.parentWidget() is not None:  # showing a block with no parent would open a window
            self.setVisible(not empty)
        self._fit(self.viewport().width() if self.isVisible() else 300)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit(self.viewport().width())

    def _fit(self, width: int) -> None:
        self.document().setTextWidth(max(width, 100))
        height = int(min(self.document().size().height() + 6, self.max_height))
        if height != self.height():
            self.setFixedHeight(height)


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


def _show_hidden_characters(document: QTextDocument, colour: QColor) -> None:
    """Replace each character :func:`~onnxviz.model.index.display_prose` escapes with its escape, after
    parsing: Markdown turns ``&#x202e;`` into the character itself, so escaping the source is not enough."""
    found: list[tuple[int, str, QTextCharFormat]] = []  # position, character, its format
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            text = fragment.text()
            found += [(fragment.position() + _utf16_length(text[:offset]), c, fragment.charFormat())
                      for offset, c in hidden_in_prose(text)]
            fragments += 1
        block = block.next()
    cursor = QTextCursor(document)
    for position, c, base in reversed(found):  # from the end: earlier positions stay valid
        cursor.setPosition(position)
        cursor.setPosition(position + _utf16_length(c), QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextCharFormat(base)
        fmt.setForeground(colour)
        fmt.setToolTip(f"U+{ord(c):04X} {unicodedata.name(c, 'control character')}: "
                       "an invisible character in the file, shown escaped")
        cursor.insertText(display_prose(c), fmt)


def _utf16_length(text: str) -> int:
    """Qt counts positions in UTF-16 units: a character beyond U+FFFF takes two."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF) if not text.isascii() else len(text)


def markdown_view(markdown: str, max_height: int = 260) -> MarkdownBlock:
    return MarkdownBlock(markdown, max_height)
