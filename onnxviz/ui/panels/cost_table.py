"""The Model panel's per-node cost table: 100k+ rows, whose cells are made only for the rows on screen.

The rows are the costs' columns (:class:`CostColumns`) in an order; a click on a header sorts them by ranks
(one per distinct operator, outcome or name) with one stable numpy sort, in the order a :class:`RowsModel`
of the same cells would show them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, cast, overload

import numpy as np
from PySide6.QtCore import Qt

from onnxviz.model.graph.flops import CostColumns
from onnxviz.model.text import display_name
from onnxviz.ui.panels.common import NAME_CHARS
from onnxviz.ui.panels.tables import RowsModel, sort_key

CostRow = tuple[str, str, int | None, int | None, str]  # node, op, MACs, FLOPs, output shape


@dataclass(frozen=True)
class CostTable(Sequence[CostRow]):
    """The rows of the cost table, in ``order`` (the node of each row); a row's cells are made when asked."""

    costs: CostColumns
    ops: list[str]  # the text of each of costs.op_types
    shapes: list[str]  # the text of the shape of each of costs.outcomes
    order: np.ndarray

    @classmethod
    def of(cls, costs: CostColumns) -> CostTable:
        """The rows of ``costs`` in file order."""
        return cls(costs, [display_name(op, NAME_CHARS) for op in costs.op_types],
                   [display_name(outcome[2], NAME_CHARS) for outcome in costs.outcomes], np.arange(len(costs)))

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, row: int) -> CostRow: ...
    @overload
    def __getitem__(self, row: slice) -> list[CostRow]: ...

    def __getitem__(self, row: int | slice) -> CostRow | list[CostRow]:
        if isinstance(row, slice):
            return [self[r] for r in range(*row.indices(len(self)))]
        node = int(self.order[row])
        k = self.costs.outcome_of[node]
        macs, flops, _, _ = self.costs.outcomes[k]
        return self.name(node), self.ops[self.costs.op_of[node]], macs, flops, self.shapes[k]

    def name(self, node: int) -> str:
        """The text of the node column: the node's name, else its operator and position."""
        costs = self.costs
        return display_name(costs.names[node] or f"{costs.op_types[costs.op_of[node]]}#{node}", NAME_CHARS)

    def sorted(self, column: int, order: Qt.SortOrder) -> CostTable:
        """The rows sorted by ``column`` (rows of equal cells keep their order), as :func:`sorted_order` sorts."""
        ranks = self._ranks(column)[self.order]
        moved = np.argsort(-ranks if order == Qt.SortOrder.DescendingOrder else ranks, kind="stable")
        return replace(self, order=self.order[moved])

    def _ranks(self, column: int) -> np.ndarray:
        """The rank of each node's cell in ``column``."""
        costs = self.costs
        if column == 0:
            return _ranks([self.name(node) for node in range(len(costs))])
        if column == 1:
            return _ranks(self.ops)[costs.op_of]
        shown = [outcome[column - 2] for outcome in costs.outcomes] if column in (2, 3) else self.shapes
        return _ranks(shown)[costs.outcome_of]


def _ranks(values: Sequence[Any]) -> np.ndarray:
    """Each value's rank among ``values`` by :func:`sort_key` (equal keys, equal ranks)."""
    keys = list(map(sort_key, values))
    rank = {key: r for r, key in enumerate(sorted(set(keys)))}
    return np.fromiter(map(rank.__getitem__, keys), np.int64, len(keys))


class CostRowsModel(RowsModel):
    """A :class:`RowsModel` over a :class:`CostTable`: the same cells, texts and sorting, made as they are shown."""

    def __init__(self, headers: Sequence[str], parent: Any = None) -> None:
        super().__init__(headers, parent)
        self.table: CostTable | None = None
        self.tooltip_columns = {0, 1, 4}   # the columns fit the panel's width and may cut these texts

    def set_table(self, table: CostTable, sorted_by: tuple[int, Qt.SortOrder] | None = None) -> None:
        """``sorted_by``: the order ``table`` is in; sorted again only if the table is sorted otherwise."""
        self.beginResetModel()
        self._hold(table)
        self.endResetModel()
        if self._sorted_by is not None and self._sorted_by != sorted_by:
            self.sort(*self._sorted_by)

    def _hold(self, table: CostTable) -> None:
        self.table, self.rows, self.payload = table, table, cast(Sequence[int], table.order)  # the node of each row

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(self.headers):
            return
        self._sorted_by = (column, order)
        if self.table is None:
            return
        self.layoutAboutToBeChanged.emit()
        self._hold(self.table.sorted(column, order))
        self.layoutChanged.emit()
