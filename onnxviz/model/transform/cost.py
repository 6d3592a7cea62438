"""What a transform cost, layer by layer: the values a comparison of the two models paired
(:class:`~onnxviz.model.matching.CrossRun`), each measured with the model before the transform as the reference
(the comparison's A may be either model), worst SQNR first."""

from __future__ import annotations

import math
from dataclasses import dataclass

from onnxviz.model.matching import CrossRun
from onnxviz.model.progress import CancelToken
from onnxviz.model.runner.compare import measure_arrays


@dataclass(frozen=True)
class LayerError:
    """One paired value: its key and its node's name before and after the transform, the operator of the node
    before (a quantized model pairs its DequantizeLinear's output with the float layer's), the node that makes it
    in the comparison's model A (``scope``, ``node``) and its error against the value before."""

    before: str
    after: str
    before_node: str
    after_node: str
    op: str
    scope: str
    node: int
    sqnr_db: float
    cosine: float
    max_abs: float
    max_rel: float


def layer_errors(cross: CrossRun, before_is_a: bool, token: CancelToken | None = None) -> list[LayerError]:
    """Every pair of values made by nodes (graph inputs left out), worst SQNR first (NaN first of all)."""
    rows = []
    for d in cross.diffs:
        rec_a, rec_b = cross.result_a.values.get(d.name), cross.result_b.values.get(d.other)
        if rec_a is None or rec_b is None or rec_a.node < 0:
            continue
        if token is not None:
            token.check()
        if before_is_a:
            sqnr, cosine, max_abs, max_rel = d.sqnr_db, d.cosine, d.max_abs_error, d.rel_error
        else:  # the reference is the model before: B
            a, b = cross.result_a.array(d.name), cross.result_b.array(d.other)
            if a.shape != b.shape or a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
                sqnr, cosine, max_abs, max_rel = d.sqnr_db, d.cosine, d.max_abs_error, d.rel_error
            else:
                m = measure_arrays(b, a)
                sqnr, cosine, max_abs, max_rel = m.sqnr_db, m.cosine, m.max_abs, m.max_rel
        before, after = (rec_a, rec_b) if before_is_a else (rec_b, rec_a)
        rows.append(LayerError(before.key, after.key, before.node_name, after.node_name, before.op_type, rec_a.scope,
                               rec_a.node, sqnr, cosine, max_abs, max_rel))
    return sorted(rows, key=lambda r: (-math.inf if math.isnan(r.sqnr_db) else r.sqnr_db, r.after))
