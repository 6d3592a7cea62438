"""The Problems panel: every problem of the document in a table; a click selects what it concerns."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QTimer, Signal
from PySide6.QtGui import QIcon, QResizeEvent
from PySide6.QtWidgets import QApplication, QLabel, QStyle, QVBoxLayout, QWidget

from onnxviz.model.document import Document
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.text import display_name
from onnxviz.ui.panels.tables import RowsModel, make_table, source_row

HEADERS = ["Severity", "Message", "Source", "Node", "Value", "Graph"]
_FITTED = (0, 2, 3, 4, 5)  # every column but Message, which takes the rest of the width
_MAX_FITTED = 180  # px: a long node or value name is cut (its tooltip has it) rather than the message
_MEASURED_ROWS = 250  # rows a column's width is fitted to (Qt's default, 1000, took 0.1 s on a long list)
NAME_CHARS = 300
CHUNK = 4000  # rows listed per turn of the event loop (each problem's texts are cut and escaped: ~6 ms per 1000)
MESSAGE_CHARS = 1000
_COLOURS = {Severity.ERROR: "#c01c28", Severity.WARNING: "#b5730a", Severity.INFO: "#1a5fb4"}
_ICONS = {Severity.ERROR: QStyle.StandardPixmap.SP_MessageBoxCritical,
          Severity.WARNING: QStyle.StandardPixmap.SP_MessageBoxWarning,
          Severity.INFO: QStyle.StandardPixmap.SP_MessageBoxInformation}


def severity_html(p: Problem) -> str:
    return f'<b style="color:{_COLOURS[p.severity]}">{p.severity.word}</b>'


_icon_cache: dict[Severity, QIcon] = {}


def severity_icon(severity: Severity) -> QIcon:
    if severity not in _icon_cache:  # one icon per severity, shared by every row
        _icon_cache[severity] = QApplication.style().standardIcon(_ICONS[severity])
    return _icon_cache[severity]


class ProblemsPanel(QWidget):
    """Refreshed by :meth:`show_problems` on open, edits and validation results."""

    listed = Signal(int)   # how many problems the list now has

    def __init__(self, select_node: Callable[[str, int], None], select_value: Callable[[str, str], None]) -> None:
        super().__init__()
        self.select_node = select_node
        self.select_value = select_value
        self.problems: list[Problem] = []
        self._wanted: dict[int, int] = {}  # column -> width of its contents (at most _MAX_FITTED)
        self._listing = 0  # which show_problems the chunks still to come belong to
        self.summary = QLabel()
        self.model = RowsModel(HEADERS, self)
        self.view = make_table(self.model, stretch_column=1)
        self.view.horizontalHeader().setResizeContentsPrecision(_MEASURED_ROWS)
        self.view.clicked.connect(self._on_clicked)
        self.view.activated.connect(self._on_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.summary)
        layout.addWidget(self.view)
        self.show_problems(None)

    def show_problems(self, doc: Document | None) -> None:
        """List ``doc``'s problems, errors first: the first :data:`CHUNK` now, the rest a chunk per turn of
        the event loop (120k problems took 0.8 s at once), so the window never waits for the whole list."""
        found = doc.problems if doc is not None else []
        by_severity = {s: [p for p in found if p.severity == s] for s in Severity}  # a sort by severity, stable
        self.problems = by_severity[Severity.ERROR] + by_severity[Severity.WARNING] + by_severity[Severity.INFO]
        self._listing += 1
        first = self.problems[:CHUNK]
        self.model.set_rows(_rows(first), payload=first, icons=[severity_icon(p.severity) for p in first])
        self._measure_columns()
        if len(self.problems) > CHUNK:
            self._list_from(CHUNK, self._listing)
        counts = {s: len(of_s) for s, of_s in by_severity.items()}
        if doc is None:
            self.summary.setText("No model open.")
        elif not self.problems:
            self.summary.setText("No problems found.")
        else:
            self.summary.setText(", ".join(s.counted(counts[s]) for s in Severity if counts[s])
                                 + " - click one to select what it concerns.")
        self.listed.emit(len(self.problems))

    @property
    def filling(self) -> bool:
        """Some problems are still to be listed."""
        return self.model.rowCount() < len(self.problems)

    def _list_from(self, start: int, listing: int, held: list[Problem] | None = None) -> None:
        """The problems from ``start`` on, a chunk per turn. A table sorted by a header holds the chunks
        back and takes them with the last one: it is sorted once, not once per chunk."""
        def more() -> None:
            if listing != self._listing:  # a newer list replaced this one
                return
            end = min(start + CHUNK, len(self.problems))
            chunk = (held or []) + self.problems[start:end]
            if end < len(self.problems) and self.model.sorted_by_header:
                self._list_from(end, listing, chunk)
                return
            self.model.append_rows(_rows(chunk), chunk, [severity_icon(p.severity) for p in chunk])
            if end < len(self.problems):
                self._list_from(end, listing)

        QTimer.singleShot(0, self, more)

    def _measure_columns(self) -> None:
        header = self.view.horizontalHeader()
        self._wanted = {c: min(max(self.view.sizeHintForColumn(c), header.sectionSizeHint(c)), _MAX_FITTED)
                        for c in _FITTED}
        self._fit_columns()

    def _fit_columns(self) -> None:
        """The other columns fit their contents but together take at most half the width."""
        room = self.view.contentsRect().width() // 2
        total = sum(self._wanted.values())
        scale = min(1.0, room / total) if total and room > 0 else 1.0
        for column, width in self._wanted.items():
            self.view.setColumnWidth(column, max(int(width * scale), 24))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_columns()

    def _on_clicked(self, index: QModelIndex) -> None:
        row = source_row(self.view, index)
        if not 0 <= row < len(self.problems):
            return
        p = self.problems[row]
        if p.node >= 0:
            self.select_node(p.scope, p.node)
        elif p.value:
            self.select_value(p.scope, p.value)


def _rows(problems: list[Problem]) -> list[tuple[str, str, str, str, str, str]]:
    """The table's cells: messages quote names from the file, shown escaped and cut like the names."""
    return [(p.severity.word, display_name(p.message, MESSAGE_CHARS), p.source,
             display_name(p.node_name, NAME_CHARS) or (f"#{p.node}" if p.node >= 0 else ""),
             display_name(p.value, NAME_CHARS), display_name(p.scope, NAME_CHARS)
             or ("main" if p.node >= 0 or p.value else "")) for p in problems]
