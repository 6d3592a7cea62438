"""The background analysis split across processes gives what one fresh, whole analysis gives.

As a file opens, one worker infers the types while the other finds the first problems and the figures' parts
that need no types, then the figures with the types the first sent (packed: each distinct type once). These
tests run those jobs, in this process, on real exports and on models with problems, and compare every problem,
inferred type and figure with :func:`validate` and :func:`model_figures` of the freshly parsed model.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
import pytest
from conftest import REPO, TEST_DATA
from hostile import HOSTILE_TENSORS
from onnx import TensorProto, helper
from onnx.external_data_helper import _get_all_tensors

from onnxviz.model.background import jobs
from onnxviz.model.graph.index import ModelIndex, index_escaping_text
from onnxviz.model.graph.summary import ModelFigures, model_figures
from onnxviz.model.graph.validation import ValidationResult, pack, unpack, validate
from onnxviz.model.io.external import iter_all_tensors

DATA = TEST_DATA
REAL = sorted((DATA / "exports").glob("*.onnx"))
EXAMPLE = REPO / "onnxviz" / "resources" / "examples" / "example.onnx"


def _broken(tmp: Path) -> Path:
    """Repeated layers with problems of every stage: a Cast without ``to`` (schema and checker), a MatMul of
    mismatched widths (shape inference), an If with a branch of its own (a subgraph scope)."""
    nodes, x = [], "x"
    for i in range(30):
        nodes.append(helper.make_node("MatMul", [x, "w"], [f"m{i}"], name=f"layers.{i}/mm"))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"r{i}"], name=f"layers.{i}/relu"))
        x = f"r{i}"
    nodes.append(helper.make_node("MatMul", [x, "narrow"], ["bad"], name="mismatch"))
    nodes.append(helper.make_node("Cast", ["bad"], ["cast"], name="cast"))
    branch = helper.make_graph([helper.make_node("Neg", ["cast"], ["neg"], name="neg")], "then", [],
                               [helper.make_tensor_value_info("neg", TensorProto.FLOAT, None)])
    nodes.append(helper.make_node("If", ["cond"], ["y"], name="if", then_branch=branch, else_branch=branch))
    weights = [helper.make_tensor("w", TensorProto.FLOAT, [8, 8], [0.5] * 64),
               helper.make_tensor("narrow", TensorProto.FLOAT, [3, 2], [1.0] * 6)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8]),
                                           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], weights)
    path = tmp / "broken.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), path)
    return path


@pytest.fixture(autouse=True)
def fresh_worker_state() -> Iterator[None]:
    """The jobs remember states in module globals (one worker process each): every test starts afresh."""
    jobs._states.clear()
    jobs._files.clear()
    jobs._parsed = None
    yield
    jobs._states.clear()
    jobs._files.clear()
    jobs._parsed = None


def _types(result: ValidationResult) -> dict[str, dict[str, bytes]]:
    return {scope: {name: t.SerializeToString() for name, t in table.items()}
            for scope, table in result.inference.types.items()}


def _fresh(path: Path) -> tuple[ValidationResult, ModelFigures]:
    """One whole analysis in this process, of a model parsed once for it."""
    model = onnx.load(path)
    result = validate(model.SerializeToString(), None, 0, runtime=False)
    index = ModelIndex(model, checks=False)
    index.set_inferred(result.inference.types)
    return result, model_figures(model, index)


def _as_received(value: object) -> object:
    """What another process gets."""
    return pickle.loads(pickle.dumps(value))


def _early(path: Path) -> tuple[list[object], ValidationResult, ModelFigures]:
    """The early analysis's jobs in their order, each result passed as between processes."""
    digest, packed = _as_received(jobs.early_inference_job(str(path)))  # type: ignore[misc]
    jobs._parsed = None  # the second process parses on its own
    first_digest, first = _as_received(jobs.early_first_job(str(path)))  # type: ignore[misc]
    assert first_digest == digest
    assert jobs.early_structure_job(str(path)) == digest
    figures = jobs.unpack_figures(_as_received(jobs.early_figures_job(str(path), digest, packed.types)))  # type: ignore[arg-type]
    return first, unpack(packed), figures


@pytest.mark.parametrize("path", [*REAL, EXAMPLE], ids=lambda p: p.stem)
def test_the_split_analysis_of_a_real_model_is_a_fresh_whole_one(path: Path) -> None:
    first, inferred, figures = _early(path)
    fresh, fresh_figures = _fresh(path)
    assert first + inferred.problems == fresh.problems
    assert _types(inferred) == _types(fresh)
    assert figures == fresh_figures
    assert figures.costs and figures.op_counts


def test_the_split_analysis_of_a_broken_model_is_a_fresh_whole_one(tmp_path: Path) -> None:
    path = _broken(tmp_path)
    first, inferred, figures = _early(path)
    fresh, fresh_figures = _fresh(path)
    assert {p.source for p in first} == {"checker", "validation"} and inferred.problems
    assert first + inferred.problems == fresh.problems
    assert _types(inferred) == _types(fresh)
    assert figures == fresh_figures
    assert {c.name: c.macs for c in figures.costs}["layers.0/mm"] == 8 * 8  # batch counts as 1


@pytest.mark.parametrize("path", [*REAL, EXAMPLE], ids=lambda p: p.stem)
def test_one_worker_validating_then_counting_matches_the_early_split(path: Path) -> None:
    """After an edit, one process validates, then counts with its own types: the same as the split."""
    data = path.read_bytes()
    packed = _as_received(jobs.validate_job(data, 4))
    figures = jobs.unpack_figures(_as_received(jobs.figures_job(data)))  # type: ignore[arg-type]
    fresh, fresh_figures = _fresh(path)
    assert unpack(packed).problems == fresh.problems  # type: ignore[arg-type]
    assert _types(unpack(packed)) == _types(fresh)  # type: ignore[arg-type]
    assert figures == fresh_figures


def test_packed_types_hold_each_distinct_type_once_and_read_back_per_name(tmp_path: Path) -> None:
    result = validate(_broken(tmp_path).read_bytes(), None, 0, runtime=False)
    packed = pack(result).types[""]
    assert len(packed.names) == len(result.inference.types[""]) > 30
    assert len(packed.ends) < 10  # 30 layers of the same shapes
    back = unpack(_as_received(pack(result))).inference.types  # type: ignore[arg-type]
    assert _types(ValidationResult(0, type(result.inference)(back), [])) == _types(result)
    assert back[""].get("no such value") is None and "m0" in back[""]


@pytest.mark.parametrize("path", [*sorted(DATA.rglob("*.onnx")), EXAMPLE], ids=lambda p: p.stem)
def test_every_tensor_is_found_in_onnxs_order(path: Path) -> None:
    """The document's external-data scan and saving walk tensors in the order onnx does."""
    model = onnx.load(path, load_external_data=False)
    assert [(t.name, t.data_type, list(t.dims)) for t in iter_all_tensors(model)] == \
        [(t.name, t.data_type, list(t.dims)) for t in _get_all_tensors(model)]


def test_tensors_in_nested_bodies_and_functions_are_found_in_onnxs_order(tmp_path: Path) -> None:
    inner = helper.make_graph([helper.make_node("Constant", [], ["c2"], name="c2",
                                                value=helper.make_tensor("inner_value", TensorProto.FLOAT, [1], [2.0]))],
                              "inner", [], [helper.make_tensor_value_info("c2", TensorProto.FLOAT, [1])],
                              [helper.make_tensor("inner_init", TensorProto.FLOAT, [1], [3.0])])
    outer = helper.make_graph([helper.make_node("If", ["cond"], ["o"], name="if_in", then_branch=inner,
                                                else_branch=inner)],
                              "outer", [], [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1])],
                              [helper.make_tensor("outer_init", TensorProto.FLOAT, [1], [4.0])])
    nodes = [helper.make_node("Constant", [], ["k"], name="k",
                              value=helper.make_tensor("main_value", TensorProto.FLOAT, [1], [1.0])),
             helper.make_node("If", ["cond"], ["y"], name="if", then_branch=outer, else_branch=inner),
             helper.make_node("Relu", ["k"], ["r"], name="relu")]
    function = helper.make_function("local", "F", ["a"], ["b"], [
        helper.make_node("Constant", [], ["b"], value=helper.make_tensor("fn_value", TensorProto.FLOAT, [1], [5.0]))],
        opset_imports=[helper.make_opsetid("", 18)])
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                              [helper.make_tensor("main_init", TensorProto.FLOAT, [1], [0.0])])
    model = helper.make_model(graph, functions=[function],
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    names = [t.name for t in iter_all_tensors(model)]
    assert names == [t.name for t in _get_all_tensors(model)]
    # else_branch comes first (make_node sorts the attributes); the inner graph is in three places
    assert names == ["main_init", "inner_init", "outer_init", "inner_init", "inner_init", "main_value", "inner_value",
                     "inner_value", "inner_value", "fn_value"]


def test_an_edited_big_models_bytes_are_written_once_per_state_for_the_worker(
        tmp_path: Path, example_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation, then the figures, of one edited state: one temporary file; a worker that let the state go
    (here: replaced) gets the bytes again; a new state gets a file of its own."""
    import tempfile

    from onnxviz.model.background.procpool import WorkerProcess

    monkeypatch.setattr(jobs, "INLINE_BYTES", 0)  # the example counts as big
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    written: list[bytes] = []
    real_hand_over = jobs.hand_over

    def counted(data: bytes, digest: bytes, source: Path | None = None) -> jobs.ModelData:
        handed = real_hand_over(data, digest, source)
        if isinstance(handed, jobs.ModelFile) and handed.temporary:
            written.append(digest)
        return handed

    monkeypatch.setattr(jobs, "hand_over", counted)
    worker = WorkerProcess()
    try:
        data = example_path.read_bytes()
        digest = jobs.digest_of(data)
        packed = jobs.run_on_model(worker, jobs.validate_job, data, digest, None, 1, "doc")
        figures = jobs.run_on_model(worker, jobs.figures_job, data, digest, None, "doc")
        assert written == [digest]
        fresh, fresh_figures = _fresh(example_path)
        assert unpack(packed).problems == fresh.problems and jobs.unpack_figures(figures) == fresh_figures
        worker.shutdown()  # the next process knows nothing of that state
        assert jobs.unpack_figures(jobs.run_on_model(worker, jobs.figures_job, data, digest, None, "doc")) \
            == fresh_figures
        assert written == [digest, digest]
        edited = onnx.load_from_string(data)
        edited.graph.node[0].name = "edited"
        other = edited.SerializeToString()
        jobs.run_on_model(worker, jobs.validate_job, other, jobs.digest_of(other), None, 2, "doc")
        assert written == [digest, digest, jobs.digest_of(other)]
    finally:
        worker.shutdown()
    assert list(tmp_path.iterdir()) == []  # every temporary file is gone


def _figures_of(model: onnx.ModelProto, types: dict[str, Any], structure_only: bool) -> tuple[object, ...]:
    index, escaped = index_escaping_text(model, checks=False, structure_only=structure_only)
    index.set_inferred(types)
    return model_figures(model, index), escaped, list(index.graphs)


@pytest.mark.parametrize("path", [*REAL, EXAMPLE], ids=lambda p: p.stem)
def test_the_figures_index_gives_the_figures_of_a_full_index(path: Path) -> None:
    """The second worker builds only what the figures read (no consumers, no checks): the same figures."""
    types = validate(path.read_bytes(), None, 0, runtime=False).inference.types
    light = _figures_of(onnx.load(path), types, structure_only=True)
    assert light == _figures_of(onnx.load(path), types, structure_only=False)


@pytest.mark.parametrize("case", [c for c in HOSTILE_TENSORS if "utf8" in c.name or "raw" in c.name], ids=str)
def test_the_figures_index_escapes_text_as_a_full_index_does(case: Any, tmp_path: Path) -> None:
    data = case.build(tmp_path).read_bytes()
    types = validate(data, None, 0, runtime=False).inference.types
    light = _figures_of(onnx.ModelProto.FromString(data), types, structure_only=True)
    full = _figures_of(onnx.ModelProto.FromString(data), types, structure_only=False)
    assert light == full
    assert bool(light[1]) == ("utf8" in case.name)  # the invalid text was escaped


@pytest.mark.parametrize("where", ["output", "input"])
def test_the_figures_index_escapes_a_value_name_as_a_full_index_does(where: str) -> None:
    """Only a value's name is not valid UTF-8 (as a node's output and the next one's input, or as the
    graph's input): both indexes escape it."""
    first = helper.make_node("Relu", ["INPUTNAME"], ["MIDDLE"], name="first")
    second = helper.make_node("Neg", ["MIDDLE"], ["y"], name="second")
    graph = helper.make_graph([first, second], "g", [helper.make_tensor_value_info("INPUTNAME", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    token = b"MIDDLE" if where == "output" else b"INPUTNAME"
    data = helper.make_model(graph).SerializeToString().replace(token, token[:3] + b"\xff" + token[4:])
    types = validate(data, None, 0, runtime=False).inference.types
    light = _figures_of(onnx.ModelProto.FromString(data), types, structure_only=True)
    assert light == _figures_of(onnx.ModelProto.FromString(data), types, structure_only=False)
    assert light[1]
