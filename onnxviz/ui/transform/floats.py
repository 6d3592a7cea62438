"""Nodes kept in float at the next quantization (from the canvas's selection or the cost table's rows, named in
the model the quantization starts from), and the last quantization done again without them."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from onnxviz.model.document import Document
    from onnxviz.model.transform import Variant
    from onnxviz.ui.tasks import Task
    from onnxviz.ui.transform.host import TransformHost


class KeptInFloat:
    """Chooses the nodes kept in float (the host's ``excluded``) and quantizes again."""

    def __init__(self, host: TransformHost) -> None:
        self.host = host

    def keep_in_float(self, nodes: list[int] | None = None) -> list[str]:
        """Keep the canvas's selected nodes (or ``nodes``, positions in the main graph) in float at the next
        quantization; returns the names added (of the model the quantization starts from)."""
        doc = self.host.document.doc
        if doc is None:
            return []
        if nodes is None:
            if self.host.canvas.scope != "" or not self.host.document.shows_own:
                self.host.say("Select nodes of this model's main graph to keep them in float.")
                return []
            nodes = self.host.canvas.selected_nodes()
        if not nodes:
            self.host.say("Select a node or a group on the graph first, then Keep in Float.")
            return []
        names, unknown = self._base_names(doc, nodes)
        return self._exclude(names, unknown)

    def keep_layers_in_float(self, rows: list[int]) -> list[str]:
        """The cost table's rows kept in float: their nodes of the model before (what is quantized again)."""
        layers = [self.host.dock.layers[r] for r in rows if 0 <= r < len(self.host.dock.layers)]
        if not layers:
            self.host.say("Select the layers to keep in float in the table first.")
            return []
        return self._exclude([layer.before_node for layer in layers if layer.before_node],
                             [layer.after for layer in layers if not layer.before_node])

    def _exclude(self, names: list[str], unknown: list[str]) -> list[str]:
        added = [n for n in dict.fromkeys(names) if n not in self.host.excluded]
        self.host.excluded = tuple(dict.fromkeys([*self.host.excluded, *names]))
        count = len(self.host.excluded)
        said = f"{count} node{'s' if count != 1 else ''} kept in float at the next quantization"
        if unknown:
            said += f"; {len(unknown)} could not be matched with a node of the model before it"
        hint = " (Transform > Quantize Again)." if self.host.quantization is not None else "."
        self.host.say(said + hint)
        self.host.update_actions()
        return added

    def _base_names(self, doc: Document, nodes: list[int]) -> tuple[list[str], list[str]]:
        """Names in the model a quantization starts from of the window's main-graph ``nodes``: the same nodes
        when the window shows that model, else through the diff's pairing, or the same name (onnxruntime's
        ``_quant`` suffix dropped)."""
        graph = doc.index.main
        shown = [graph.nodes[i].name for i in nodes if 0 <= i < len(graph.nodes)]
        base = self.host.variants.get(self.host.base_key) if self.host.base_key is not None else None
        if base is None or self.host.shown_key == base.key:
            return [n for n in shown if n], [n for n in shown if not n]
        base_names = self.host.variants.node_names(base.key)
        paired = self._paired_in_base(nodes, base)
        names: list[str] = []
        unknown: list[str] = []
        for i, name in zip(nodes, shown, strict=False):
            found = paired.get(i) or _float_name(name, base_names)
            (names if found else unknown).append(found or name)
        return names, unknown

    def _paired_in_base(self, nodes: list[int], base: Variant) -> dict[int, str]:
        diff = self.host.diff()
        if diff.diff is None or diff.doc_b is None or diff.doc_b.path != base.path:
            return {}
        main = diff.diff.alignment.graphs.get("")
        if main is None:
            return {}
        out = {}
        for i in nodes:
            j = main.node_b(i)
            if j is not None and main.index_b.nodes[j].name:
                out[i] = main.index_b.nodes[j].name
        return out

    def clear_float(self) -> None:
        self.host.excluded = ()
        self.host.say("No node is kept in float at the next quantization.")
        self.host.update_actions()

    def quantize_again(self) -> Task | None:
        """The last quantization again, from the model it started from, with the nodes kept in float excluded."""
        if self.host.quantization is None or self.host.base_key is None:
            self.host.say("Quantize the model first (Transform > Quantize...), then quantize it again.")
            return None
        request = self.host.quantization
        settings = request.settings.excluding(self.host.excluded)
        return self.host.start(replace(request, settings=settings), source=self.host.base_key)


def _float_name(name: str, float_names: set[str]) -> str:
    """The float node a quantizer's node came from, by name: the longest of ``float_names`` that ``name`` is or
    starts with followed by '_' (onnxruntime names its nodes '<float node>_quant', '<float node>_quant_scales_mul',
    '<float node>_output_0_bias_add'...); '' when none is."""
    if name in float_names:
        return name
    cut = name
    while "_" in cut:
        cut = cut.rsplit("_", 1)[0]
        if cut in float_names:
            return cut
    return ""
