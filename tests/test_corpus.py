"""Every model of the ONNX conformance data opens, indexes, infos, checks and round-trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import LIGHT_MODELS, NODE_TESTS, corpus_models

from onnxviz.cli.check import collect_problems
from onnxviz.model.document import Document
from onnxviz.model.summary import model_info

MODELS = corpus_models() + sorted(LIGHT_MODELS.glob("*.onnx"))


def _id(p: Path) -> str:
    return str(p.relative_to(NODE_TESTS)) if p.is_relative_to(NODE_TESTS) else p.name


@pytest.mark.parametrize("path", MODELS, ids=[_id(p) for p in MODELS])
def test_model_opens_indexes_checks_and_round_trips(path: Path, tmp_path: Path) -> None:
    doc = Document.open(path)
    info = model_info(doc.model, doc.index)
    assert info["nodes_total"] >= info["nodes"]
    collect_problems(doc)
    out = tmp_path / "out.onnx"
    doc.save(out)
    assert out.read_bytes() == path.read_bytes()
    assert doc.model.SerializeToString() == path.read_bytes()


def test_corpus_is_present() -> None:
    assert len(corpus_models()) > 1000, f"the conformance data was not found under {NODE_TESTS}"
