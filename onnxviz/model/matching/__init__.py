"""Two models side by side: node alignment, value pairing, structural diff and run comparison.

* :func:`align_models` aligns two models node to node (by structure, names settling ties), main graph,
  bodies and functions: an :class:`Alignment` of :class:`GraphAlignment` per graph pair;
* :func:`pair_values` says which value of A to compare with which value of B (through
  DequantizeLinear outputs, past fused or removed nodes), and which have no partner;
* :func:`diff_models` lists every structural difference (:class:`ModelDiff`, :class:`Difference`);
* :func:`compare_models` runs both on the same inputs and measures every pair, and the error each layer of
  B adds on its own (:class:`CrossRun`); :func:`compare_deployed` the same of the graphs onnxruntime's
  optimized sessions run;
* :func:`match_weights` measures quantized weights against their partners (:class:`WeightPair`).

This package sits above the runner (it runs models and uses :mod:`onnxviz.model.runner.compare`'s
measures) and below editing and the document.
"""

from __future__ import annotations

from onnxviz.model.matching.align import HOW_NAME, HOW_STRUCTURE, Alignment, GraphAlignment, align_models
from onnxviz.model.matching.crossrun import (
    CrossRun,
    Limits,
    compare_deployed,
    compare_models,
    feeds_for_b,
    run_pair,
)
from onnxviz.model.matching.diff import KINDS, Difference, ModelDiff, diff_models
from onnxviz.model.matching.values import (
    HOW_DEQUANTIZED,
    HOW_FOLLOWED,
    HOW_SAME,
    ValuePair,
    ValuePairing,
    pair_values,
)
from onnxviz.model.matching.weights import WeightPair, match_weights

__all__ = ["HOW_DEQUANTIZED", "HOW_FOLLOWED", "HOW_NAME", "HOW_SAME", "HOW_STRUCTURE", "KINDS", "Alignment",
           "CrossRun", "Difference", "GraphAlignment", "Limits", "ModelDiff", "ValuePair", "ValuePairing",
           "WeightPair", "align_models", "compare_deployed", "compare_models", "diff_models", "feeds_for_b", "match_weights", "pair_values",
           "run_pair"]
