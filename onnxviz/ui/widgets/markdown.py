"""Read-only Markdown blocks for documentation text: operator docs, doc_strings, summaries."""

from __future__ import annotations

import re

from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QDesktopServices,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QFrame, QTextBrowser

_FEATURES = QTextDocument.MarkdownFeature(QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
                                          | QTextDocument.MarkdownFeature.MarkdownNoHTML.value)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


class MarkdownBlock(QTextBrowser):
    """A borderless read-only Markdown block that grows to fit its text (up to ``max_height``).

    Raw HTML in the text is shown as text, never interpreted: operator docs write ``Tensor<T>``,
    and a model's doc_string is the file's to choose. Only ``<br>`` (in the ai.onnx.ml docs) breaks a line.
    Only http(s) links open (in the browser): a model's ``[docs](file:///etc/passwd)`` would otherwise
    replace the block with that file, and ``javascript:`` or ``smb:`` links go to whatever handles them.
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


def markdown_view(markdown: str, max_height: int = 260) -> MarkdownBlock:
    return MarkdownBlock(markdown, max_height)
