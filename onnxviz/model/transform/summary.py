"""What a transform changed, in figures: operators counted before and after (like onnxslim's table), nodes,
parameters, file size and multiply-accumulates, each from the Model panel's own counts
(:mod:`onnxviz.model.graph.summary`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from onnxviz.model.graph.summary import human_bytes


@dataclass(frozen=True)
class Figures:
    """One model's figures. ``op_counts`` counts every graph's nodes (If/Loop bodies and functions too);
    ``macs`` are the main graph's plus one run of each body, over the nodes whose shapes are known
    (``macs_unknown`` nodes of a MAC-counting kind are not)."""

    nodes: int
    op_counts: dict[str, int]
    parameters: int
    parameter_bytes: int
    size: int
    macs: int
    macs_unknown: int = 0


@dataclass(frozen=True)
class Summary:
    """The figures of the model before and after a transform."""

    before: Figures
    after: Figures

    def op_rows(self) -> list[tuple[str, int, int]]:
        """(operator, count before, count after) of every operator either has: changed ones first, the biggest
        change first, then the unchanged ones, most common first."""
        ops = dict.fromkeys([*self.before.op_counts, *self.after.op_counts])
        rows = [(op, self.before.op_counts.get(op, 0), self.after.op_counts.get(op, 0)) for op in ops]
        return sorted(rows, key=lambda r: (r[1] == r[2], -abs(r[2] - r[1]), -r[1], r[0]))

    def headline(self) -> str:
        """One line: nodes, file size, parameters and MACs, before -> after."""
        b, a = self.before, self.after
        return (f"nodes {b.nodes:,} -> {a.nodes:,} ({_signed(a.nodes - b.nodes)}), "
                f"size {human_bytes(b.size)} -> {human_bytes(a.size)} ({_percent(b.size, a.size)}), "
                f"parameters {b.parameters:,} -> {a.parameters:,}, MACs {_count(b.macs)} -> {_count(a.macs)}")

    def text_lines(self) -> list[str]:
        """The headline, then a row per operator whose count changed (onnxslim's table, changes only)."""
        rows = [r for r in self.op_rows() if r[1] != r[2]]
        width = max([len(r[0]) for r in rows] + [8])
        lines = [self.headline()]
        if rows:
            lines.append(f"  {'operator'.ljust(width)}  before  after")
            lines += [f"  {op.ljust(width)}  {b:>6}  {a:>5}" for op, b, a in rows]
        else:
            lines.append("  no operator count changed")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {"before": asdict(self.before), "after": asdict(self.after),
                "op_counts": [{"op": op, "before": b, "after": a} for op, b, a in self.op_rows()]}


def _signed(n: int) -> str:
    return f"{n:+,}" if n else "same"


def _percent(before: int, after: int) -> str:
    if before == after:
        return "same"
    return f"{100.0 * (after - before) / before:+.1f}%" if before else "new"


def _count(n: int) -> str:
    """2,400,000 -> '2.40 M'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return str(n)
