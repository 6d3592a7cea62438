"""Issue 34's model layer: each transform on the repository's real exports gives a valid result (onnx's full
checker, an onnxruntime session) whose outputs stay within the documented tolerance for the lossless ones; the
figures are the tools' own; a result beyond the tolerance, a failing tool, a crash or a cancel change nothing;
the replacement is one command whose undo gives the exact bytes back (a hypothesis state machine mixes it with
edits); calibration inputs are read from files and folders."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import TEST_DATA
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from onnx import numpy_helper

from onnxviz.model.document import Document
from onnxviz.model.errors import Cancelled
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.matching import Limits, diff_models
from onnxviz.model.progress import CancelToken
from onnxviz.model.runner.compare import DEFAULT_TOLERANCE
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.inputs import input_specs
from onnxviz.model.transform import (
    Outcome,
    OutputsChanged,
    Settings,
    Transformer,
    TransformError,
    Variants,
    replacement,
)
from onnxviz.model.transform.calibration import read_samples
from onnxviz.model.transform.pipeline import FOLDER_PREFIX

EXPORTS = TEST_DATA / "exports"
LOSSLESS = [
    ("onnxslim", "bert_legacy"), ("onnxslim", "gpt2_legacy"), ("onnxslim", "resnet_float"), ("onnxslim", "lstm_tagger"),
    ("onnxscript", "bert_dynamo"), ("onnxscript", "gpt2_legacy"), ("onnxscript", "mlp_int4_matmulnbits"),
    ("ort-optimize", "bert_legacy"), ("ort-optimize", "resnet_int8_qdq"), ("ort-optimize", "vad_if"),
    ("simplify", "bert_dynamo"), ("simplify", "lstm_tagger"), ("simplify", "resnet_float"),
    ("opset", "resnet_float"), ("opset", "bert_legacy"),
]


@pytest.fixture(scope="module")
def transformer() -> Iterator[Transformer]:
    t = Transformer()
    yield t
    t.close()


def inputs_of(name: str) -> dict[str, np.ndarray]:
    with np.load(EXPORTS / "inputs" / f"{name}.npz") as data:
        return {k: data[k] for k in data.files}


def run(model: bytes | Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model if isinstance(model, bytes) else str(model),
                                   providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in feeds.items() if k in names})


def _settings(tool: str, name: str) -> Settings:
    # vad_if runs on a second of audio, not on generated inputs of size 1: its own sample input is given
    given = (str(EXPORTS / "inputs" / f"{name}.npz"),) if name == "vad_if" else ()
    if tool == "opset":
        return Settings(tool, opset=18 if name == "bert_legacy" else 19, calibration=given)
    if tool == "ort-optimize":
        return Settings(tool, level="extended", calibration=given)
    return Settings(tool, calibration=given)


def _valid(data: bytes) -> onnx.ModelProto:
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model, full_check=True)
    ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return model


@pytest.mark.parametrize(("tool", "name"), LOSSLESS)
def test_lossless_transforms_of_the_exports_are_valid_and_keep_the_outputs(transformer: Transformer, tool: str,
                                                                           name: str) -> None:
    outcome = transformer.run(EXPORTS / f"{name}.onnx", _settings(tool, name), base_dir=EXPORTS)
    model = _valid(outcome.data)
    assert outcome.verification.checked and not outcome.verification.beyond
    # the outputs on the export's own sample input, independently of the transform's own check
    feeds = inputs_of(name)
    for a, b in zip(run(EXPORTS / f"{name}.onnx", feeds), run(outcome.data, feeds), strict=True):
        np.testing.assert_allclose(b, a, rtol=DEFAULT_TOLERANCE.rtol, atol=DEFAULT_TOLERANCE.atol)
    # the figures are the model's own
    assert outcome.summary.after.nodes == len(model.graph.node)
    assert outcome.summary.after.size == len(outcome.data)
    if tool == "opset":
        assert {o.domain: o.version for o in model.opset_import}[""] == outcome.settings.opset
    if (tool, name) == ("ort-optimize", "bert_legacy"):  # "extended": onnxruntime's com.microsoft fusions
        assert {n.op_type for n in model.graph.node if n.domain == "com.microsoft"} == {"FusedMatMul"}


def test_onnxslims_own_summary_is_what_the_summary_and_the_diff_say(transformer: Transformer) -> None:
    from onnxslim.utils import summarize_model

    source = EXPORTS / "bert_legacy.onnx"
    outcome = transformer.run(source, Settings("onnxslim"), base_dir=EXPORTS)
    theirs_before = dict(summarize_model(onnx.load(source)).op_type_counts)
    theirs_after = dict(summarize_model(onnx.load_from_string(outcome.data)).op_type_counts)
    assert outcome.summary.before.op_counts == theirs_before
    assert outcome.summary.after.op_counts == theirs_after
    assert {op: (b, a) for op, b, a in outcome.summary.op_rows()} == {
        op: (theirs_before.get(op, 0), theirs_after.get(op, 0)) for op in {*theirs_before, *theirs_after}}
    # the diff's removed and added nodes account for every count onnxslim says changed
    diff = diff_models(Document.open(source).index, Document(onnx.load_from_string(outcome.data)).index)
    removed = Counter(d.details.get("op_type", "") or _op_of(diff, d) for d in diff.differences if d.kind == "node_removed")
    added = Counter(_op_of(diff, d) for d in diff.differences if d.kind == "node_added")
    for op in {*theirs_before, *theirs_after}:
        assert removed[op] - added[op] == theirs_before.get(op, 0) - theirs_after.get(op, 0), op


def _op_of(diff: object, d: object) -> str:
    alignment = diff.alignment  # type: ignore[attr-defined]
    if d.node_a >= 0:  # type: ignore[attr-defined]
        return alignment.graphs[d.scope_a].index_a.nodes[d.node_a].op_type  # type: ignore[attr-defined]
    return alignment.graphs_b[d.scope_b].index_b.nodes[d.node_b].op_type  # type: ignore[attr-defined]


def test_the_macs_and_parameters_are_the_model_panels(transformer: Transformer) -> None:
    from onnxviz.model.background.jobs import figures_job, unpack_figures

    outcome = transformer.run(EXPORTS / "resnet_float.onnx", Settings("ort-optimize", level="basic"), base_dir=EXPORTS)
    for figures, data in ((outcome.summary.before, (EXPORTS / "resnet_float.onnx").read_bytes()),
                          (outcome.summary.after, outcome.data)):
        panel = unpack_figures(figures_job(data))
        assert figures.macs == panel.costs.summary().macs > 8_000_000
        assert (figures.parameters, figures.parameter_bytes) == (panel.parameters, panel.parameter_bytes)


# -- quantization -------------------------------------------------------------------------------------------------
QUANTIZED = [
    ("quantize-dynamic", "bert_legacy", Settings("quantize-dynamic"), {"MatMulInteger", "DynamicQuantizeLinear"}),
    ("qdq", "resnet_float", Settings("quantize-static", per_channel=True), {"QuantizeLinear", "DequantizeLinear"}),
    ("qoperator", "resnet_float", Settings("quantize-static", quant_format="qoperator", activation_type="int8"),
     {"QLinearConv", "QLinearAdd"}),
    ("int4", "bert_legacy", Settings("quantize-int4", block_size=16), {"MatMulNBits"}),
]


@pytest.mark.parametrize(("label", "name", "settings", "ops"), QUANTIZED, ids=[q[0] for q in QUANTIZED])
def test_quantizations_of_the_exports_are_valid_and_measured(transformer: Transformer, label: str, name: str,
                                                           settings: Settings, ops: set[str]) -> None:
    outcome = transformer.run(EXPORTS / f"{name}.onnx", settings, base_dir=EXPORTS)
    model = _valid(outcome.data)
    assert ops <= {n.op_type for n in model.graph.node}
    v = outcome.verification
    assert v.checked and not v.beyond and v.limits.startswith("none")
    # the output error reported is the one measured independently on the transform's own first sample
    a, b = run(EXPORTS / f"{name}.onnx", outcome.sample)[0], run(outcome.data, outcome.sample)[0]
    rel = float(np.abs(a.astype(np.float64) - b).max() / np.abs(a).max())
    assert 0 < rel <= v.outputs[0].max_rel * (1 + 1e-6)
    assert 10 < v.outputs[0].sqnr_db < 80
    assert outcome.summary.after.size < outcome.summary.before.size


def test_static_quantization_calibrated_on_files_has_no_random_warning(transformer: Transformer, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    for k in range(3):
        np.savez(tmp_path / f"sample_{k}.npz", image=rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    calibrated = transformer.run(EXPORTS / "resnet_float.onnx", Settings("quantize-static", calibration=(str(tmp_path),)),
                                 base_dir=EXPORTS)
    assert calibrated.verification.samples == 3 and not calibrated.notes
    generated = transformer.run(EXPORTS / "resnet_float.onnx", Settings("quantize-static", samples=2), base_dir=EXPORTS)
    assert generated.verification.samples == 2
    assert any("meaningless" in n or "means nothing" in n for n in generated.notes)
    assert calibrated.data != generated.data  # other ranges, other scales


def test_an_excluded_layer_stays_float_and_its_added_error_drops_to_0(transformer: Transformer) -> None:
    """A Conv kept in float keeps its float weight: run alone on the quantized model's own input to it, the float
    model's node gives its output (the error it adds is 0, to float32 rounding); quantized, the same Conv adds
    error."""
    source = EXPORTS / "resnet_float.onnx"
    layer = "/layer1/conv2/Conv"
    float_model = onnx.load(source)
    f_node = next(n for n in float_model.graph.node if n.name == layer)
    added = {}
    for exclude in ((), (layer,)):
        outcome = transformer.run(source, Settings("quantize-static", exclude=exclude), base_dir=EXPORTS)
        quantized = onnx.load_from_string(outcome.data)
        q_node = next(n for n in quantized.graph.node if n.name == layer)
        weights = {t.name: t for t in quantized.graph.initializer}
        assert (q_node.input[1] in weights) == bool(exclude)  # float weight, or read through a DequantizeLinear
        added[exclude] = _added_error(outcome.data, q_node, float_model, f_node, inputs_of("resnet_float"))
    # 0 but for float32 rounding (the node run alone may sum in another order): 1.5e-7 here, against 3e-3
    assert added[()] > 1e-3 and added[(layer,)] < 1e-6, added


def _added_error(data: bytes, q_node: onnx.NodeProto, float_model: onnx.ModelProto, f_node: onnx.NodeProto,
                 feeds: dict[str, np.ndarray]) -> float:
    """Max |float node alone on the quantized run's input to it - the quantized node's own output|."""
    from onnxviz.model.runner import RunOptions, run_model

    result = run_model(data, feeds, RunOptions(capture=True))
    try:
        alone = _node_alone(float_model, f_node, result.array(q_node.input[0]))
        return float(np.abs(alone - result.array(q_node.output[0])).max())
    finally:
        result.cleanup()


def _node_alone(model: onnx.ModelProto, node: onnx.NodeProto, x: np.ndarray) -> np.ndarray:
    inits = [t for t in model.graph.initializer if t.name in node.input[1:]]
    graph = onnx.helper.make_graph([node], "alone", [onnx.helper.make_tensor_value_info(node.input[0], 1, x.shape)],
                                   [onnx.helper.make_tensor_value_info(node.output[0], 1, None)], inits)
    alone = onnx.helper.make_model(graph, opset_imports=list(model.opset_import))
    alone.ir_version = model.ir_version
    return run(alone.SerializeToString(), {node.input[0]: np.asarray(x)})[0]


# -- refusals ----------------------------------------------------------------------------------------------------
def test_outputs_beyond_the_limits_refuse_the_result(transformer: Transformer) -> None:
    with pytest.raises(OutputsChanged) as caught:
        transformer.run(EXPORTS / "resnet_float.onnx", Settings("quantize-static"), base_dir=EXPORTS,
                        limits=Limits(elementwise=None, sqnr_db=200.0))
    assert caught.value.message.startswith("Quantize static (QDQ, uint8/int8) changed output 'logits' beyond the "
                                           "tolerance (sqnr_db ")
    assert caught.value.message.endswith("so its result was not used.")
    assert caught.value.outcome.verification.beyond[0].name == "logits"
    with pytest.raises(OutputsChanged):  # a lossless one held to an impossible elementwise tolerance
        transformer.run(EXPORTS / "bert_legacy.onnx", Settings("onnxslim"), base_dir=EXPORTS,
                        limits=Limits(elementwise=DEFAULT_TOLERANCE.__class__(0.0, 0.0)))


def test_a_result_that_fails_the_checker_is_refused_in_one_sentence(transformer: Transformer) -> None:
    with pytest.raises(TransformError) as caught:
        transformer.run(EXPORTS / "sklearn_text_zipmap.onnx", Settings("onnxslim"), base_dir=EXPORTS)
    assert caught.value.message.startswith("the result fails onnx's checker: ")
    assert "\n" not in caught.value.message


@pytest.mark.parametrize(("settings", "said"), [
    (Settings("quantize-static", exclude=("no such node",)), "the model has no node named 'no such node'"),
    (Settings("opset", opset=17), "the model already uses opset 17."),
    (Settings("opset", opset=1), "onnx's version converter could not convert the model to opset 1"),
    (Settings("quantize-static", calibration=("/nonexistent/x.npz",)), "does not exist"),
])
def test_failures_are_one_sentence(transformer: Transformer, settings: Settings, said: str) -> None:
    with pytest.raises(TransformError) as caught:
        transformer.run(EXPORTS / "resnet_float.onnx", settings, base_dir=EXPORTS)
    assert said in caught.value.message and "\n" not in caught.value.message


def test_settings_are_checked_as_they_are_made() -> None:
    for kwargs, said in (({"tool": "shrink"}, "'shrink' is not a transform"), ({"tool": "opset"}, "which opset"),
                         ({"tool": "quantize-int4", "block_size": 20}, "power of 2"),
                         ({"tool": "ort-optimize", "level": "max"}, "level must be one of basic, extended, all"),
                         ({"tool": "quantize-static", "quant_format": "qoperator", "activation_type": "int16"},
                          "16-bit types need the QDQ format")):
        with pytest.raises(TransformError, match=said):
            Settings(**kwargs)  # type: ignore[arg-type]


def test_a_missing_library_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxslim" else real(name, *a))
    said = Settings("onnxslim").spec.missing()
    assert said == ("Slim with onnxslim needs onnxslim, which is not installed: pip install 'onnxviz[transform]' "
                    "(or pip install onnxslim), then restart onnxviz.")
    assert Settings("ort-optimize").spec.missing() == ""


def test_a_crash_of_the_library_process_loses_nothing_and_the_next_transform_runs(tmp_path: Path) -> None:
    """The worker killed from outside while the tool runs: one sentence, nothing written; the next runs."""
    transformer = Transformer()
    try:
        killed, done = threading.Event(), threading.Event()

        def kill_until_done() -> None:  # a process killed just before the step was sent is replaced: kill again
            while not done.wait(0.02):
                for pid in transformer.pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        killed.set()

        def progress(_fraction: float, text: str) -> None:
            if text.startswith("Quantize"):  # from the step's start, in a quantizer that never fails on its own
                threading.Thread(target=kill_until_done, daemon=True).start()

        slow = Settings("quantize-static", samples=1000, calibration_method="minmax")
        try:
            with pytest.raises(TransformError) as caught:
                transformer.run(EXPORTS / "bert_legacy.onnx", slow, base_dir=EXPORTS, progress=progress)
        finally:
            done.set()
        assert killed.is_set()
        assert caught.value.message.startswith("the transform's process ended unexpectedly during 'Quantize static "
                                               "(QDQ, uint8/int8)' (a crash in the library, or out of memory)")
        assert caught.value.message.endswith("the model is unchanged.")
        again = transformer.run(EXPORTS / "resnet_float.onnx", Settings("onnxslim"), base_dir=EXPORTS)
        assert again.verification.checked
    finally:
        transformer.close()


def test_cancel_stops_the_running_library_at_once() -> None:
    transformer = Transformer()
    token = CancelToken()
    started: list[int] = []

    def progress(_fraction: float, text: str) -> None:
        if text.startswith("Quantize") and transformer.pids and not started:
            started.extend(transformer.pids)
            token.cancel()  # at once: on an idle machine the library ends its samples within a few seconds

    try:
        with pytest.raises(Cancelled):
            transformer.run(EXPORTS / "bert_legacy.onnx", Settings("quantize-static", samples=1000,
                                                                   calibration_method="minmax"),
                            base_dir=EXPORTS, progress=progress, token=token)
        assert started and transformer.pids == []
        for pid in started:  # the process is gone, not finishing its work in the background
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        transformer.close()


def test_the_transforms_private_folders_go(transformer: Transformer) -> None:
    import tempfile

    mine = f"{FOLDER_PREFIX}{os.getpid()}-"
    before = {p.name for p in Path(tempfile.gettempdir()).glob(f"{mine}*")}
    transformer.run(EXPORTS / "resnet_float.onnx", Settings("onnxscript"), base_dir=EXPORTS)
    with pytest.raises(TransformError):
        transformer.run(EXPORTS / "resnet_float.onnx", Settings("opset", opset=17), base_dir=EXPORTS)
    assert {p.name for p in Path(tempfile.gettempdir()).glob(f"{mine}*")} == before


def test_a_model_with_external_weights_is_transformed_from_its_folder(transformer: Transformer, tmp_path: Path) -> None:
    model = onnx.load(EXPORTS / "resnet_float.onnx")
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="m.data", size_threshold=0)
    outcome = transformer.run((tmp_path / "m.onnx").read_bytes(), Settings("onnxslim"), base_dir=tmp_path)
    assert not any(t.data_location == onnx.TensorProto.EXTERNAL
                   for t in onnx.load_from_string(outcome.data).graph.initializer)
    feeds = inputs_of("resnet_float")
    np.testing.assert_allclose(run(outcome.data, feeds)[0], run(EXPORTS / "resnet_float.onnx", feeds)[0], rtol=1e-5,
                               atol=1e-6)
    (tmp_path / "m.data").rename(tmp_path / "gone.data")
    with pytest.raises(TransformError):
        transformer.run((tmp_path / "m.onnx").read_bytes(), Settings("onnxslim"), base_dir=tmp_path)


# -- one undoable command -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def results(transformer: Transformer) -> dict[str, Outcome]:
    source = EXPORTS / "resnet_float.onnx"
    return {tool: transformer.run(source, settings, base_dir=EXPORTS) for tool, settings in (
        ("slim", Settings("onnxslim")), ("ort", Settings("ort-optimize", level="basic")),
        ("qdq", Settings("quantize-static", samples=2)), ("opset", Settings("opset", opset=19)))}


def test_the_replacement_is_one_command_and_undo_gives_the_bytes_back(results: dict[str, Outcome]) -> None:
    path = EXPORTS / "resnet_float.onnx"
    doc = Document.open(path)
    original = path.read_bytes()
    outcome = results["qdq"]
    first = doc.index
    model = onnx.load_from_string(outcome.data)
    prepared = ModelIndex(model)  # as the window builds it, off the GUI thread
    doc.execute(replacement(model, outcome.settings.label()), prepared)
    assert doc.undo_stack.index == 1 and doc.undo_stack.undo_label() == "Quantize static (QDQ, uint8/int8)"
    assert doc.model.SerializeToString() == outcome.data and doc.is_dirty
    assert len(doc.node_ids) == len(doc.model.graph.node) == 49
    assert doc.built_index is prepared  # taken, not built again on the GUI thread
    doc.undo()
    assert doc.serialize() == original and doc.model.SerializeToString() == original and not doc.is_dirty
    assert doc.built_index is first  # the model before came back with its index
    doc.redo()
    assert doc.model.SerializeToString() == outcome.data and doc.built_index is prepared
    doc.edit.rename_node(0, "renamed")  # edits act on the model swapped in, and undo through it
    doc.undo()
    doc.undo()
    assert doc.serialize() == original
    # an index of another object is not taken
    other = onnx.load_from_string(outcome.data)
    doc.execute(replacement(onnx.load_from_string(outcome.data), "again"), ModelIndex(other))
    assert doc.built_index is None and doc.index.model is doc.model


class ReplaceAndEdit(RuleBasedStateMachine):
    """Transforms' replacements mixed with edits, undos and redos: the model always holds the bytes the steps say,
    and undoing everything gives the file's bytes back."""

    outcomes: dict[str, Outcome] = {}

    @initialize()
    def open_model(self) -> None:
        self.path = EXPORTS / "resnet_float.onnx"
        self.doc = Document.open(self.path)
        self.states = [self.path.read_bytes()]  # the bytes after each applied command
        self.undone: list[bytes] = []

    @rule(which=st.sampled_from(["slim", "ort", "qdq", "opset"]))
    def transform(self, which: str) -> None:
        outcome = self.outcomes[which]
        self.doc.execute(replacement(onnx.load_from_string(outcome.data), outcome.settings.label()))
        self.states.append(outcome.data)
        self.undone.clear()

    @rule(k=st.integers(0, 1000))
    def rename(self, k: int) -> None:
        steps = self.doc.undo_stack.index
        self.doc.edit.rename_node(k % len(self.doc.model.graph.node), f"renamed{k}")
        if self.doc.undo_stack.index > steps:  # a rename to the name it has is no step
            self.states.append(self.doc.model.SerializeToString())
            self.undone.clear()

    @precondition(lambda self: len(self.states) > 1)
    @rule()
    def undo(self) -> None:
        self.doc.undo()
        self.undone.append(self.states.pop())

    @precondition(lambda self: bool(self.undone))
    @rule()
    def redo(self) -> None:
        self.doc.redo()
        self.states.append(self.undone.pop())

    @invariant()
    def holds_the_expected_bytes(self) -> None:
        if hasattr(self, "doc"):
            assert self.doc.model.SerializeToString() == self.states[-1]
            assert len(self.doc.node_ids) == len(self.doc.model.graph.node)

    def teardown(self) -> None:
        if hasattr(self, "doc"):
            while self.doc.undo_stack.can_undo:
                self.doc.undo()
            assert self.doc.serialize() == self.path.read_bytes()


def test_replacements_edits_and_undo_state_machine(results: dict[str, Outcome]) -> None:
    ReplaceAndEdit.outcomes = results
    machine = ReplaceAndEdit.TestCase
    machine.settings = settings(max_examples=25, stateful_step_count=12, deadline=None,
                                suppress_health_check=[HealthCheck.too_slow])
    machine().runTest()


# -- variants ------------------------------------------------------------------------------------------------------
def test_variants_keep_files_find_duplicates_and_go(results: dict[str, Outcome]) -> None:
    variants = Variants()
    original = variants.add((EXPORTS / "resnet_float.onnx").read_bytes(), "resnet_float (original)")
    q = variants.add(results["qdq"].data, "Quantize static", results["qdq"].settings, original.key,
                     file_name="resnet_float (quantize-static)")
    assert q.path.name == "resnet_float (quantize-static).onnx" and q.path.read_bytes() == results["qdq"].data
    assert variants.add(results["qdq"].data, "again") is q and len(variants.items) == 2
    assert "/layer1/conv1/Conv" in variants.node_names(original.key)
    assert q.options_text().startswith("quant_format qdq, activation_type uint8")
    folder = q.path.parent.parent
    variants.cleanup()
    assert not folder.exists() and variants.items == []


# -- calibration inputs ------------------------------------------------------------------------------------------------
def _specs(name: str) -> list:
    return input_specs(onnx.load(EXPORTS / f"{name}.onnx"))


def test_calibration_reads_npz_npy_pb_and_folders(tmp_path: Path) -> None:
    specs = _specs("resnet_float")
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "a.npy", x)
    np.savez(tmp_path / "b.npz", image=x + 1)
    (tmp_path / "c.pb").write_bytes(numpy_helper.from_array(x + 2, "image").SerializeToString())
    samples = read_samples([str(tmp_path)], specs)
    assert [float(s["image"][0, 0, 0, 0] - x[0, 0, 0, 0]) for s in samples] == [0.0, 1.0, 2.0]
    sets = tmp_path / "sets"
    for k in (10, 2):  # onnx's test_data_set_N layout, in natural order
        (sets / f"test_data_set_{k}").mkdir(parents=True)
        (sets / f"test_data_set_{k}" / "input_0.pb").write_bytes(
            numpy_helper.from_array(x * k, "image").SerializeToString())
    found = read_samples([sets], specs)
    assert [float(s["image"][0, 0, 0, 1] / x[0, 0, 0, 1]) for s in found] == pytest.approx([2.0, 10.0])


def test_calibration_files_are_refused_in_one_sentence(tmp_path: Path) -> None:
    bert = _specs("bert_legacy")
    np.save(tmp_path / "one.npy", np.zeros((1, 4), np.int64))
    (tmp_path / "empty").mkdir()
    np.savez(tmp_path / "partial.npz", input_ids=np.zeros((1, 4), np.int64))
    for paths, said in (([tmp_path / "one.npy"], "holds one array but the model has 3 inputs"),
                        ([tmp_path / "empty"], "holds no .npz, .npy or .pb input file"),
                        ([tmp_path / "partial.npz"], "has no array for input 'token_type_ids'")):
        with pytest.raises(RunError, match=said):
            read_samples(paths, bert)


def test_output_checks_compare_a_zipmaps_maps(transformer: Transformer) -> None:
    outcome = transformer.run(EXPORTS / "sklearn_text_zipmap.onnx", Settings("ort-optimize"), base_dir=EXPORTS)
    by_name = {o.name: o for o in outcome.verification.outputs}
    assert by_name["output_label"].note == "compared as values"
    assert by_name["output_probability"].max_abs == 0.0 and math.isfinite(by_name["output_probability"].cosine)


# -- what it cost ------------------------------------------------------------------------------------------------
def test_each_layers_sqnr_is_onnxruntimes_qdq_loss_debug_figure(transformer: Transformer, tmp_path: Path) -> None:
    """The cost table's SQNR of each quantized layer against the float model is the one onnxruntime's own
    qdq_loss_debug computes (float activation against the QDQ model's dequantized one), on the same input."""
    from onnxruntime.quantization import qdq_loss_debug as debug

    from onnxviz.model.transform.cost import compare_files, layer_errors

    source = EXPORTS / "resnet_float.onnx"
    outcome = transformer.run(source, Settings("quantize-static"), base_dir=EXPORTS)
    quantized = tmp_path / "qdq.onnx"
    quantized.write_bytes(outcome.data)
    cross = compare_files(source, quantized, outcome.sample)
    try:
        layers = layer_errors(cross)
    finally:
        cross.cleanup()
    assert [x.sqnr_db for x in layers] == sorted(x.sqnr_db for x in layers)

    class Once(debug.CalibrationDataReader):
        def __init__(self) -> None:
            self.given = [outcome.sample]

        def get_next(self) -> dict[str, np.ndarray] | None:
            return self.given.pop() if self.given else None

    activations = {}
    for name, path in (("float", source), ("qdq", quantized)):
        augmented = tmp_path / f"{name}_augmented.onnx"
        debug.modify_model_output_intermediate_tensors(str(path), str(augmented))
        activations[name] = debug.collect_activations(str(augmented), Once())
    theirs = debug.compute_activation_error(debug.create_activation_matching(activations["qdq"], activations["float"]))
    convs = {x.before: x for x in layers if x.op == "Conv"}
    assert len(convs) == 6  # every quantized Conv paired
    checked = 0
    for name, errors in theirs.items():
        if name in convs and "xmodel_err" in errors:
            assert convs[name].sqnr_db == pytest.approx(errors["xmodel_err"], abs=1e-3), name
            checked += 1
    assert checked >= 3


def test_a_histogram_calibration_that_onnxruntime_cannot_make_says_what_works(transformer: Transformer) -> None:
    """BERT's attention mask holds float32's lowest number: onnxruntime's entropy calibration fails inside numpy's
    histogram; the sentence says why and that MinMax works, and MinMax does."""
    entropy = Settings("quantize-static", samples=2, calibration_method="entropy")
    with pytest.raises(TransformError) as caught:
        transformer.run(EXPORTS / "bert_legacy.onnx", entropy, base_dir=EXPORTS)
    assert caught.value.message == (
        "Quantize static (QDQ, uint8/int8) failed (ValueError: Too many bins for data range. Cannot create 128 "
        "finite-sized bins): onnxruntime's entropy calibration cannot make a histogram of a value that holds "
        "float32's extreme numbers (an attention mask's -3.4e38, for one); MinMax calibration works on such a model.")
    minmax = Settings("quantize-static", samples=2, calibration_method="minmax")
    assert transformer.run(EXPORTS / "bert_legacy.onnx", minmax, base_dir=EXPORTS).verification.checked
