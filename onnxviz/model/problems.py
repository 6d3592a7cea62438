"""Problems found in a model, each attached to the node or value concerned."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def word(self) -> str:
        """What people read: "error", "warning", "note" ("23 notes" rather than "23 infos")."""
        return "note" if self is Severity.INFO else self.value

    def counted(self, n: int) -> str:
        """'1 error', '2 warnings', '23 notes'."""
        return f"{n} {self.word}{'s' if n != 1 else ''}"


DATA = "data"  # the source of a tensor's problem whose data is missing, short, unusable or refused


@dataclass(frozen=True)
class Problem:
    """One finding. ``scope`` names the graph ("" for the main graph, see
    :mod:`onnxviz.model.graph.index`); ``node`` is the node's position in that
    scope (-1 if none) and ``node_name`` its name; ``value`` a value name."""

    severity: Severity
    message: str
    source: str = "index"          # "index", "checker", "shape_inference", "load", "validation", DATA
    scope: str = ""
    node: int = -1
    node_name: str = ""
    value: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "severity": self.severity.value,
            "message": self.message,
            "source": self.source,
            "scope": self.scope,
            "node": self.node_name or (f"#{self.node}" if self.node >= 0 else None),
            "value": self.value or None,
        }
