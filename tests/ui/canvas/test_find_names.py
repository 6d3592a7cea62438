"""Find results keep the part of a long name that tells one result from another: a layer's index."""

from __future__ import annotations

from onnxviz.ui.canvas.search import NAME_CHARS, SearchHit, short_path

NAMES = [f"/model/encoder/layer.{k}/attention/self/query/MatMul_Q4" for k in (3, 11)]


def test_a_long_path_keeps_its_numbered_parts_and_its_end() -> None:
    assert short_path(NAMES[0]) == "/model/\u2026/layer.3/\u2026/query/MatMul_Q4"
    assert short_path("/a/b/MatMul") == "/a/b/MatMul"                       # short: as it is
    assert len(short_path("/x" * 500)) <= NAME_CHARS


def test_find_results_of_two_layers_read_apart() -> None:
    shown = [SearchHit("", k, "", "op", "MatMul", name).display() for k, name in enumerate(NAMES)]
    assert "layer.3" in shown[0] and "layer.11" in shown[1]
    assert len(shown[0]) < len(f"MatMul    ({NAMES[0]})")                  # shorter than the whole name
    value = SearchHit("", -1, NAMES[1], "value", NAMES[1]).display()
    assert value.startswith("/model/\u2026/layer.11/")
