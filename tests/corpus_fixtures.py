"""The ONNX conformance corpus (tests/onnx_data.py), each model opened and laid out once per session for all
the checks that need it (a pytest plugin named in conftest).

``corpus_model`` is a session-scoped fixture parametrized over the ~2,030 models: pytest runs every check of
one model (open, save, info and check in tests/corpus/test_corpus.py, the layout's boxes and edges in
tests/model/layout/test_layout.py, the render in tests/cli/test_render.py, the labels in
tests/corpus/test_label_overlaps.py) one after the other on the same opened document and scenes, then drops
them before the next model: one model is held at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from onnx_data import corpus_models, model_id

from onnxviz.model.document import Document
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.scene import Scene

CORPUS = corpus_models()


@dataclass
class CorpusModel:
    """One model of the corpus, opened once; its scenes are laid out on first use."""

    path: Path
    doc: Document
    _scenes: list[Scene] | None = field(default=None, repr=False)
    _labelled: list[Scene] | None = field(default=None, repr=False)

    @property
    def scenes(self) -> list[Scene]:
        """Every graph laid out as the window first draws it, before shape inference (``onnxviz render``'s)."""
        if self._scenes is None:
            self._scenes = [GraphLayout(self.doc.index, scope).build() for scope in self.doc.index.graphs]
        return self._scenes

    @property
    def labelled_scenes(self) -> list[Scene]:
        """Every graph laid out with the types shape inference gives its edges' labels (an index of its own: the
        document's stays as it was opened)."""
        if self._labelled is None:
            index = ModelIndex(self.doc.model)
            index.set_inferred(infer_types(self.path.read_bytes()).types)
            self._labelled = [GraphLayout(index, scope).build() for scope in index.graphs]
        return self._labelled


@pytest.fixture(scope="session", params=CORPUS, ids=[model_id(p) for p in CORPUS])
def corpus_model(request: pytest.FixtureRequest) -> CorpusModel:
    path: Path = request.param
    return CorpusModel(path, Document.open(path))
