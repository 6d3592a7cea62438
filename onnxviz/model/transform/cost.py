"""What a transform cost, layer by layer: the two models run on the same inputs (the model before as A, the
reference; the result as B), the values the comparison pairs (:func:`~onnxviz.model.matching.compare_models`),
worst SQNR first; and both models' onnxruntime timing (:meth:`.pipeline.Transformer.time`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from onnxviz.model.document import Document
from onnxviz.model.matching import CrossRun, compare_models
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.transform.calibration import Sample

Place = tuple[str, int]  # (scope, node position) of a node in one of the two models; node -1: none


@dataclass(frozen=True)
class LayerError:
    """One paired value: its key and its node's name in the model before (A) and after (B), the operator of the
    node before (a quantized model pairs its DequantizeLinear's output with the float layer's), where each node
    is, and the value's error against the value before."""

    before: str
    after: str
    before_node: str
    after_node: str
    op: str
    at_before: Place
    at_after: Place
    sqnr_db: float
    cosine: float
    max_abs: float
    max_rel: float


def layer_errors(cross: CrossRun) -> list[LayerError]:
    """Every pair of values made by nodes (graph inputs left out) of a comparison whose A is the model before,
    worst SQNR first (NaN first of all)."""
    rows = []
    for d in cross.diffs:
        a, b = cross.result_a.values.get(d.name), cross.result_b.values.get(d.other)
        if a is None or b is None or a.node < 0:
            continue
        rows.append(LayerError(a.key, b.key, a.node_name, b.node_name, a.op_type, (a.scope, a.node), (b.scope, b.node),
                               d.sqnr_db, d.cosine, d.max_abs_error, d.rel_error))
    return sorted(rows, key=lambda r: (-math.inf if math.isnan(r.sqnr_db) else r.sqnr_db, r.after))


def compare_files(before: Path, after: Path, sample: Sample, *, progress: ProgressFn = no_progress,
                  token: CancelToken | None = None) -> CrossRun:
    """Both models (self-contained files) run on ``sample`` in the runner's worker processes, every value
    captured, paired and measured, the model before as the reference (the caller cleans the runs up)."""
    doc_a, doc_b = Document.open(before), Document.open(after)
    inputs = {v.name for v in doc_a.model.graph.input}
    feeds = {k: v for k, v in sample.items() if k in inputs} or None
    return compare_models(doc_a.index, doc_b.index, feeds, base_dir_a=before.parent, base_dir_b=after.parent,
                          progress=progress, token=token)
