"""A read-only, sortable table model over rows of plain values, and a compact table view."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QAction, QColor, QGuiApplication, QIcon, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from onnxviz.ui.widgets.names import name_tooltip

Index = QModelIndex | QPersistentModelIndex
T = TypeVar("T")


class RowsModel(QAbstractTableModel):
    """Rows of cells; a cell is shown with ``str`` and sorted by its raw value (numbers as numbers).

    ``payload[row]`` carries what a click on the row means (e.g. a node position). Sorting
    reorders the rows themselves (one Python sort, fast for 100k rows, unlike a sort proxy
    that calls ``data()`` for every comparison).
    """

    def __init__(self, headers: Sequence[str], parent: Any = None) -> None:
        super().__init__(parent)
        self.headers = list(headers)
        self.rows: Sequence[Sequence[Any]] = []
        self.payload: Sequence[Any] = []
        self.icons: list[QIcon | None] = []
        self.greyed: list[bool] = []
        self.numeric_columns: set[int] = set()
        self.formatters: dict[int, Callable[[Any], str]] = {}  # column -> text of a cell (default: _display)
        self.tooltip_columns: set[int] = set()   # columns whose every cell has its whole text as tooltip
        self._sorted_by: tuple[int, Qt.SortOrder] | None = None

    def set_rows(self, rows: Sequence[Sequence[Any]], payload: Sequence[Any] | None = None,
                 icons: Sequence[QIcon | None] | None = None, greyed: Sequence[bool] | None = None,
                 sorted_by: tuple[int, Qt.SortOrder] | None = None) -> None:
        """``sorted_by``: the rows are already in that order (sorted off the GUI thread with
        :func:`sort_rows`); they are sorted again only if the table is sorted otherwise."""
        self.beginResetModel()
        self.rows = list(rows)
        self.payload = list(payload) if payload is not None else [None] * len(self.rows)
        self.icons = list(icons) if icons is not None else []
        self.greyed = list(greyed) if greyed is not None else []
        self.endResetModel()
        if self._sorted_by is not None and self._sorted_by != sorted_by:
            self.sort(*self._sorted_by)

    def append_rows(self, rows: Sequence[Sequence[Any]], payload: Sequence[Any],
                    icons: Sequence[QIcon | None] | None = None) -> None:
        """Add ``rows`` after the last (a long list shown a chunk at a time); a table sorted by a header
        is sorted again (call it with the last chunk only then, or each chunk pays for the whole sort)."""
        if not rows:
            return
        first = len(self.rows)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self.rows = _extended(self.rows, rows)
        self.payload = _extended(self.payload, payload)
        if icons is not None:
            self.icons.extend(icons)
        self.endInsertRows()
        if self._sorted_by is not None:
            self.sort(*self._sorted_by)

    @property
    def sorted_by_header(self) -> bool:
        return self._sorted_by is not None

    def forget_sort(self) -> None:
        """Later rows keep the order they are given in (no header sort chosen)."""
        self._sorted_by = None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(self.headers):
            return
        self._sorted_by = (column, order)
        self.layoutAboutToBeChanged.emit()
        order_of = sorted_order(self.rows, column, order)
        self.rows = [self.rows[r] for r in order_of]
        self.payload = [self.payload[r] for r in order_of]
        if self.icons:
            self.icons = [self.icons[r] for r in order_of]
        if self.greyed:
            self.greyed = [self.greyed[r] for r in order_of]
        self.layoutChanged.emit()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        value = self.rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.formatters.get(index.column(), _display)(value)
        if role == Qt.ItemDataRole.DecorationRole and index.column() == 0 and self.icons:
            return self.icons[index.row()]
        if role == Qt.ItemDataRole.ForegroundRole and self.greyed and self.greyed[index.row()]:
            return QColor("gray")
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() in self.numeric_columns:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:  # cut and wrapped: a 100,000-character name is one cell
            text = _display(value)
            shown = len(text) > 30 or index.column() in self.formatters or index.column() in self.tooltip_columns
            return name_tooltip(text) if shown else None
        return None


def _extended(held: Sequence[T], more: Sequence[T]) -> Sequence[T]:
    """``held`` with ``more`` after it: extended in place when a list."""
    if isinstance(held, list):
        held.extend(more)
        return held
    return [*held, *more]


def sorted_order(rows: Sequence[Sequence[Any]], column: int, order: Qt.SortOrder) -> list[int]:
    """Row positions in the order a click on ``column``'s header shows them (any thread)."""
    return sorted(range(len(rows)), key=lambda r: sort_key(rows[r][column]),
                  reverse=order == Qt.SortOrder.DescendingOrder)


def sort_key(value: Any) -> tuple[int, Any]:
    """Numbers before text, unknown (None) last; text case-insensitively."""
    if value is None:
        return (2, 0)
    if isinstance(value, (int, float)):
        return (0, value)
    return (1, str(value).lower())


def _display(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def make_table(model: RowsModel, sortable: bool = True, stretch_column: int = -1) -> QTableView:
    """A compact, read-only table view over ``model`` (through a sort proxy when sortable)."""
    view = RowsTable()
    view.setModel(model)
    if sortable:
        view.setSortingEnabled(True)  # Qt sorts by its default indicator (column 0, descending) right away
        view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        model.forget_sort()  # the rows keep the order they are given until the user clicks a header
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(stretch_column < 0)
    if stretch_column >= 0:
        header.setSectionResizeMode(stretch_column, QHeaderView.ResizeMode.Stretch)
    copy = QAction("Copy Rows", view)
    copy.triggered.connect(lambda: copy_rows(view))
    view.addAction(copy)
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
    return view


class RowsTable(QTableView):
    """Ctrl+C copies whole selected rows (Qt's own copies only the current cell)."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            copy_rows(self)
            return
        super().keyPressEvent(event)


def copy_rows(view: QTableView) -> str:
    """Put the selected rows on the clipboard as tab-separated text (and return it)."""
    model = view.model()
    rows = sorted({i.row() for i in view.selectionModel().selectedIndexes()})
    text = "\n".join("\t".join(str(model.index(r, c).data() or "") for c in range(model.columnCount()))
                     for r in rows)
    QGuiApplication.clipboard().setText(text)
    return text


def source_row(view: QTableView, index: QModelIndex) -> int:
    """The model row of an index of ``view`` (kept as a seam should a proxy be added)."""
    return index.row()


def fit_height(view: QTableView, max_rows: int = 12) -> None:
    """Make a table inside a scrolling page exactly as tall as its rows (up to ``max_rows``)."""
    rows = min(view.model().rowCount(), max_rows)
    height = view.horizontalHeader().sizeHint().height() + rows * view.verticalHeader().defaultSectionSize() + 4
    view.setFixedHeight(height)


def show_all_rows(view: QTableView) -> None:
    """Make a table inside a scrolling page as tall as all its rows: the page scrolls, not the table.

    Only the rows on screen are painted, so a few hundred rows stay cheap.
    """
    view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    fit_height(view, view.model().rowCount())


class ColumnsFit(QObject):
    """Keeps a table's columns inside its width, so it never scrolls sideways: each column at least as wide
    as its header and its sample text (``samples``: e.g. the widest count), the width left over shared by
    ``shares``; a cut cell's whole text is in its tooltip."""

    def __init__(self, view: QTableView, shares: Sequence[float], samples: dict[int, str]) -> None:
        super().__init__(view)
        self.view, self.shares, self.least = view, list(shares), [0] * len(shares)
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.horizontalHeader().setStretchLastSection(False)
        view.viewport().installEventFilter(self)
        self.set_samples(samples)

    def set_samples(self, samples: dict[int, str]) -> None:
        """The text each column must show whole (e.g. its widest count), and fit again."""
        view, header = self.view, self.view.horizontalHeader()
        text, title = view.fontMetrics(), header.fontMetrics()
        heads = [str(view.model().headerData(c, Qt.Orientation.Horizontal) or "") for c in range(len(self.shares))]
        self.least = [max(text.horizontalAdvance(samples.get(c, "")), title.horizontalAdvance(head)) + 14
                      for c, head in enumerate(heads)]
        self.fit()

    def widths(self, room: int) -> list[int]:
        """Column widths that fill ``room`` pixels: the least widths, then the rest by share (columns cut
        in proportion when even the least widths do not fit)."""
        least, total = self.least, sum(self.least)
        if total >= room:
            return [max(24, w * room // total) for w in least]
        spare, weight = room - total, sum(self.shares) or 1.0
        sizes = [w + int(spare * s / weight) for w, s in zip(least, self.shares, strict=True)]
        sizes[-1] += room - sum(sizes)
        return sizes

    def fit(self) -> None:
        for column, width in enumerate(self.widths(self.view.viewport().width())):
            self.view.setColumnWidth(column, width)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return False
