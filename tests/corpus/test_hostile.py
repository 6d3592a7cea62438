"""Hostile, broken and extreme files: a specific one-sentence answer, never a crash or a leak."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import hostile
import onnx
import pytest
from conftest import REPO

from onnxviz.model.document import Document
from onnxviz.model.errors import LoadError, OnnxvizError
from onnxviz.model.io.loading import TextFormatError, read_model_file, read_text_model_file
from onnxviz.model.text import display_name


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[hostile.Case, Path]]:
    return hostile.build_all(tmp_path_factory.mktemp("hostile"))


def _is_one_sentence(message: str) -> bool:
    return "\n" not in message and message.endswith(".") and "Traceback" not in message and len(message) < 400


@pytest.mark.parametrize("case", hostile.REFUSED, ids=lambda c: c.name)
def test_refused_with_a_specific_sentence(case: hostile.Case, cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    _, path = cases[case.name]
    with pytest.raises(LoadError) as info:
        Document.open(path)
    assert case.refused in info.value.message.lower()
    assert _is_one_sentence(info.value.message)
    assert isinstance(info.value, TextFormatError) == case.text_format


@pytest.mark.parametrize("case", hostile.OPENS, ids=lambda c: c.name)
def test_broken_model_opens_and_shows_its_problem(case: hostile.Case,
                                                  cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    _, path = cases[case.name]
    doc = Document.open(path)
    messages = [p.message.lower() for p in doc.problems]
    if case.problem:
        assert any(case.problem in m for m in messages), messages
    else:
        assert not [p for p in doc.problems if p.source in ("index", "load", "data")], messages
    for p in doc.problems:  # every problem says where: a node, a value, or the model itself
        assert p.node >= 0 or p.value or p.scope or p.source == "index"


def test_text_formats_open_as_text(cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    for name in ("onnx_text", "protobuf_text"):
        model = read_text_model_file(cases[name][1])
        assert [n.op_type for n in model.graph.node] == ["Add", "Relu"]
        onnx.checker.check_model(model)


def test_document_opens_text_format_on_request(cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    doc = Document.open(cases["onnx_text"][1], text_format=True)
    assert len(doc.model.graph.node) == 2 and doc.path is None  # saving will not overwrite the text file
    assert [p for p in doc.problems if p.severity == "error"] == []


def test_text_format_that_does_not_parse_says_why(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("<ir_version: 8, opset_import: [\"\" : 18]>\ng (float[1] x) => (float[1] y) { y = Relu(x ")
    with pytest.raises(TextFormatError):
        read_model_file(path)
    with pytest.raises(LoadError, match="could not be parsed as a text-format model"):
        read_text_model_file(path)


def test_truncation_anywhere_is_a_clear_error(tmp_path: Path) -> None:
    data = hostile.valid_model().SerializeToString()
    path = tmp_path / "cut.onnx"
    for cut in range(1, len(data), 37):
        path.write_bytes(data[:cut])
        try:
            model, _ = read_model_file(path)
        except LoadError as exc:
            assert _is_one_sentence(exc.message)
        else:  # cut at a field boundary: parses, and the index copes with what is left
            Document(model).problems  # noqa: B018


def test_size_limit_uses_stat_not_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.onnx"
    path.write_bytes(hostile.valid_model().SerializeToString())
    monkeypatch.setattr("onnxviz.model.io.loading.MAX_PROTO_BYTES", 100)
    with pytest.raises(LoadError, match=r"is 4,201 bytes, more than the 100 bytes a single protobuf"):
        read_model_file(path)


def test_unreadable_file_says_permission(tmp_path: Path) -> None:
    import os

    if os.geteuid() == 0:
        path = tmp_path / "dir.onnx"
        path.mkdir()
        with pytest.raises(LoadError, match="folder"):
            read_model_file(path)
        return
    path = tmp_path / "locked.onnx"
    path.write_bytes(b"x")
    path.chmod(0)
    with pytest.raises(LoadError, match="cannot be read"):
        read_model_file(path)


# -- names ----------------------------------------------------------------------------------------

def test_display_name_makes_hostile_names_visible() -> None:
    assert display_name("evil\u202etxt.exe") == "evil\\u202etxt.exe"
    assert display_name("a\nb\x00c") == "a\\x0ab\\x00c"
    assert display_name(b"host\xffle") == "host\\xffle"
    long = display_name("n" * 100_000)
    assert len(long) < 300 and "+99,800 characters" in long
    assert display_name("conv1/weight") == "conv1/weight"
    assert display_name("日本語") == "日本語"


def test_invalid_utf8_name_is_flagged_and_model_still_serializes(cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    doc = Document.open(cases["invalid_utf8_name"][1])
    [problem] = [p for p in doc.problems if "utf-8" in p.message.lower()]
    assert problem.value == "host\\xffle"
    assert doc.model.graph.node[0].output[0] == "host\\xffle"  # every name downstream is a str
    assert doc.serialize() == cases["invalid_utf8_name"][1].read_bytes()  # saved unedited: byte-identical
    doc = Document.open(cases["invalid_utf8_op_and_node"][1])
    assert doc.index.problems
    assert [(n.name, n.op_type) for n in doc.model.graph.node] == [("a\\xfed", "Add"), ("relu", "Re\\xffu")]
    assert any("unknown operator 're\\xffu'" in p.message.lower() for p in doc.problems)


def test_node_with_100k_inputs_indexes(cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    doc = Document.open(cases["node_100k_inputs"][1])
    assert set(doc.index.main.consumers_of("x")) == {0}
    assert doc.index.problems == []


# -- external data: nothing outside the model's folder is ever opened ---------------------------------

_touched: list[str] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _touched is not None and event in ("open", "os.open", "mmap.__new__", "os.listdir", "os.scandir"):
        if args and isinstance(args[0], str | bytes | Path):
            _touched.append(str(args[0]))


@pytest.fixture
def touched_paths() -> Iterator[list[str]]:
    """Every path opened while the fixture is active (a Python audit hook, like strace)."""
    global _touched
    if not getattr(sys, "_onnxviz_audit_installed", False):
        sys.addaudithook(_audit)
        sys._onnxviz_audit_installed = True  # type: ignore[attr-defined]
    _touched = []
    try:
        yield _touched
    finally:
        _touched = None


@pytest.mark.parametrize("case", [c for c in hostile.EXTERNAL], ids=lambda c: c.name)
def test_external_data_never_reads_outside_the_model_folder(
        case: hostile.Case, cases: dict[str, tuple[hostile.Case, Path]], touched_paths: list[str]) -> None:
    from onnxviz.model.graph.tensors import tensor_array, tensor_stats

    _, path = cases[case.name]
    doc = Document.open(path)
    [problem] = doc.load_problems
    assert problem.value == "w" and case.problem in problem.message.lower()
    assert len(doc.model.graph.node) == 2  # the rest of the model is there
    tensor = doc.model.graph.initializer[0]
    for read in (tensor_array, tensor_stats):
        with pytest.raises(OnnxvizError):
            read(tensor, doc.base_dir)
    model_dir = path.parent.resolve()
    allowed = [model_dir, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), REPO]
    outside = [p for p in touched_paths if not any(Path(p).resolve().is_relative_to(r) for r in allowed)]
    assert str(path) in touched_paths  # the hook does see file opens
    assert outside == []


@pytest.mark.parametrize("case", hostile.OPENS, ids=lambda c: c.name)
def test_layout_terminates_on_every_scope_of_broken_models(
        case: hostile.Case, cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    from onnxviz.model.layout.engine import GraphLayout

    doc = Document.open(cases[case.name][1])
    for scope, g in list(doc.index.graphs.items())[:40]:
        scene = GraphLayout(doc.index, scope).build()
        assert len(g.nodes) == 0 or scene.n_boxes > 0
        assert all(isinstance(t, str) for t in scene.box_title + scene.box_name)


def test_cli_offers_text_mode_and_escapes_hostile_names(
        cases: dict[str, tuple[hostile.Case, Path]], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from conftest import run_cli

    def run(*args: str) -> tuple[int, str, str]:
        return run_cli(capsys, *args)

    code, _, err = run("check", str(cases["onnx_text"][1]))
    assert code == 2 and err.strip().endswith("with --text")
    code, out, _ = run("check", "--text", str(cases["onnx_text"][1]))
    assert code == 0 and out.strip().endswith("valid")
    code, out, _ = run("check", str(cases["wrong_attr_type"][1]))
    assert code == 1 and "attribute 'axis' is STRING, but Softmax expects INT [node soft]" in out
    bidi = tmp_path / "bidi.onnx"
    bidi.write_bytes(hostile.model_of([onnx.helper.make_node("Relu", ["gpj.\u202eexe"], ["y"])]).SerializeToString())
    code, out, _ = run("check", str(bidi))
    assert code == 1 and "input 'gpj.\\u202eexe' of Relu#0 is not defined" in out and "\u202e" not in out
    code, out, _ = run("check", str(cases["long_name"][1]))
    assert max(len(line) for line in out.splitlines()) < 2100


def test_hostile_file_names_stay_on_one_visible_line(tmp_path: Path) -> None:
    for content in (b"", b"\x1f\x8b junk", hostile.valid_model().SerializeToString()[:50]):
        path = tmp_path / "evil\n\u202egpj.onnx"
        path.write_bytes(content)
        with pytest.raises(LoadError) as info:
            read_model_file(path)
        assert "\n" not in info.value.message and "\u202e" not in info.value.message
        assert "evil\\x0a\\u202egpj.onnx" in info.value.message


def test_runner_refuses_broken_models_before_starting_a_worker(
        cases: dict[str, tuple[hostile.Case, Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from onnxviz.model import runner

    started: list[object] = []
    monkeypatch.setattr(runner, "run_in_worker", lambda *a, **k: started.append(a))
    feeds = {"x": np.zeros(1024, np.float32)}
    refused = ["cycle", "undefined_input", "unknown_op", "raw_data_short", "negative_dims", "wrong_attr_type",
               *[c.name for c in hostile.EXTERNAL]]
    for name in refused:
        _, path = cases[name]
        with pytest.raises(runner.RunError) as info:
            runner.run_model(path, feeds)
        assert info.value.message.startswith("the model cannot run: "), name
        assert "\n" not in info.value.message
    assert started == []
    runner.run_model(cases["if_nested_31"][1], {"x": np.zeros(1, np.float32), "c": np.array(True)})
    assert len(started) == 1  # a sound model does get to the worker


def test_canvas_boxes_show_hostile_names_escaped_and_clipped(cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    from onnxviz.model.layout.engine import GraphLayout

    scene = GraphLayout(Document.open(cases["bidi_name"][1]).index, "").build()
    assert "evil\\u202etxt.exe" in scene.box_name
    assert not any("\u202e" in t for t in scene.box_title + scene.box_name + sum(scene.box_lines, []))
    scene = GraphLayout(Document.open(cases["long_name"][1]).index, "").build()
    assert max(len(t) for t in scene.box_title + scene.box_name) < 200


def test_info_keeps_each_field_on_its_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A producer, output name or metadata key with a newline started a line of its own in `onnxviz info`."""
    from conftest import run_cli

    model = hostile.model_of([onnx.helper.make_node("Relu", ["x"], ["y\nfake: line"])], outputs=["y\nfake: line"])
    model.producer_name = "me\nnodes:       0"
    onnx.helper.set_model_props(model, {"key\nfake": "v\u202e"})
    del model.opset_import[:]
    path = tmp_path / "newlines.onnx"
    onnx.save(model, path)
    code, out, _ = run_cli(capsys, "info", str(path))
    assert code == 0
    lines = out.splitlines()
    assert "producer:    me\\x0anodes:       0" in lines and "  y\\x0afake: line: float32 [1]" in lines
    assert "  key\\x0afake: v\\u202e" in lines and "opsets:      (none)" in lines
    assert not [line for line in lines if line.startswith(("nodes:       0", "fake"))]
