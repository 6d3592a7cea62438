"""Every model of the ONNX conformance data opens, indexes, infos, checks and round-trips."""

from __future__ import annotations

from pathlib import Path

from corpus_fixtures import CorpusModel
from onnx_data import corpus_models, model_id

from onnxviz.cli.check import collect_problems
from onnxviz.model.graph.summary import model_info

MODELS = corpus_models()


def test_model_opens_indexes_checks_and_round_trips(corpus_model: CorpusModel, tmp_path: Path) -> None:
    doc, path = corpus_model.doc, corpus_model.path
    info = model_info(doc.model, doc.index)
    assert info["nodes_total"] >= info["nodes"]
    collect_problems(doc)
    out = tmp_path / "out.onnx"
    doc.save(out)
    assert out.read_bytes() == path.read_bytes()
    assert doc.model.SerializeToString() == path.read_bytes()


def test_corpus_is_present() -> None:
    """The operator cases of the installed onnx (1,884 in onnx 1.23) and the wheel's 149 models."""
    suites = {model_id(p).split("/")[0] for p in MODELS}
    assert len(MODELS) > 1900 and suites == {"node", "light", "simple", "pytorch-converted", "pytorch-operator"}
