"""Every file onnxviz writes besides a model's (tests/model/io/test_save_faults.py has those) with a faulty disk
under it (tests/faulty_disk.py), a fault at every chunk: a run's values (a --dump folder, the packed file of
a run in the window), the run's own scratch files, a model handed to the background worker, an exported
tensor, a picture of the graph (PNG and SVG), saved run inputs, and the log. Each either fails with one
sentence and leaves nothing half-written (what was there before is as it was, no temporary file), or, after
a short count the disk then takes, writes every byte."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import faulty_disk
import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.runner.capture import Captured
from onnxviz.model.runner.store import RunResult, write_result

CHUNK = 4096
FAULTS = [*faulty_disk.ERRNOS, "zero", "short+full", "short"]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _captured() -> tuple[Captured, object]:
    values = {"x": np.arange(3000, dtype=np.float32).reshape(30, 100), "y": np.linspace(0, 1, 2000),
              "words": np.array(["a", "bc", "d"]), "z": np.ones((7,), np.int64)}
    captured = Captured(values=values, engines=dict.fromkeys(values, "onnxruntime"),
                        producers=dict.fromkeys(values, -1), outputs=["y"], engine="onnxruntime",
                        structured={"seq": [[1.0, 2.0], [3.0]]})
    graph = helper.make_graph([], "g", [], [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    return captured, helper.make_model(graph)


def _every_chunk(monkeypatch: pytest.MonkeyPatch, root: Path, write: Callable[[Path], object],
                 check: Callable[[Path], None], failed: Callable[[OnnxvizError, Path], None] | None = None) -> int:
    """``write(folder)`` with each fault of :data:`FAULTS` at every chunk it writes, each in a fresh folder that
    holds a file of the user's: a failure is one sentence and leaves the folder as it was; a success passes
    ``check``. Returns how many chunks it writes."""
    faulty_disk.small_chunks(monkeypatch, CHUNK)
    counting = root / "count"
    counting.mkdir()
    chunks = faulty_disk.count_calls(monkeypatch, lambda: write(counting))["chunk"]
    check(counting)
    assert chunks >= 3
    errors, shorts = list(faulty_disk.ERRNOS), ["zero", "short+full", "short"]
    for at in range(chunks):  # every chunk gets an error and a short count, each kind in turn
        for fault in (errors[at % len(errors)], shorts[at % len(shorts)]):
            folder = root / f"{at}-{fault}"
            folder.mkdir()
            (folder / "the users own.txt").write_bytes(b"keep me")
            before = _files(folder)
            with faulty_disk.faulty(monkeypatch, at=at, fault=fault.split("+")[0],
                                    then_full=fault.endswith("full")) as double:
                try:
                    write(folder)
                except OnnxvizError as exc:
                    assert double.struck and fault != "short"
                    faulty_disk.one_sentence(exc.message.replace(str(folder), "FOLDER"))
                    assert _files(folder) == before, f"{at} {fault}: a failed write left {sorted(_files(folder))}"
                    if failed is not None:
                        failed(exc, folder)
                else:
                    assert fault in ("short", "zero"), f"{at} {fault}: no error although the disk failed"
                    check(folder)
            assert faulty_disk.temporary_files(folder) == []
    return chunks


@pytest.mark.parametrize("packed", [False, True], ids=["--dump folder", "packed run"])
def test_a_runs_values_are_written_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      packed: bool) -> None:
    captured, model = _captured()

    def write(folder: Path) -> None:
        write_result(captured, model, folder, folder if packed else None)  # type: ignore[arg-type]

    def check(folder: Path) -> None:
        result = RunResult.load(folder)
        for name, array in captured.values.items():
            np.testing.assert_array_equal(np.asarray(result.array(name)), array)

    def failed(exc: OnnxvizError, folder: Path) -> None:
        where = f"the values to {folder}" if not packed else "the run's values"
        assert exc.message.startswith(f"could not write {where}: ") and exc.message.endswith("none of them were kept.")

    _every_chunk(monkeypatch, tmp_path, write, check, failed)


def test_a_runs_scratch_files_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.runner.worker import WorkerRun

    _, model = _captured()
    feeds = {"a": np.arange(5000, dtype=np.float32)}
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    def write(folder: Path) -> None:
        monkeypatch.setattr("tempfile.tempdir", str(folder))
        run = WorkerRun(model.SerializeToString(), feeds)  # type: ignore[attr-defined]
        run.request.model_path.rename(folder / "model.onnx")
        run.request.feeds_path.rename(folder / "inputs.npz")
        run.work_dir.rmdir()

    def check(folder: Path) -> None:
        assert (folder / "model.onnx").read_bytes() == model.SerializeToString()  # type: ignore[attr-defined]
        with np.load(folder / "inputs.npz") as saved:
            np.testing.assert_array_equal(saved["arr_0"], feeds["a"])
        for name in ("model.onnx", "inputs.npz"):
            (folder / name).unlink()

    def failed(exc: OnnxvizError, folder: Path) -> None:
        assert exc.message.startswith("the run could not start: ")

    _every_chunk(monkeypatch, tmp_path, write, check, failed)


def test_a_model_handed_to_the_background_worker_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.background import jobs

    monkeypatch.setattr(jobs, "INLINE_BYTES", 16384)  # smaller models travel in the pickle
    data = os.urandom(40000)

    def write(folder: Path) -> None:
        monkeypatch.setattr("tempfile.tempdir", str(folder))
        handed = jobs.hand_over(data, b"digest")
        assert isinstance(handed, jobs.ModelFile)
        Path(handed.path).rename(folder / "handed.onnx")

    def check(folder: Path) -> None:
        assert (folder / "handed.onnx").read_bytes() == data
        (folder / "handed.onnx").unlink()

    _every_chunk(monkeypatch, tmp_path, write, check)


def test_saved_run_inputs_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.runner.inputs import save_inputs_file

    feeds = {"image": np.random.default_rng(0).random((3, 40, 40), dtype=np.float32)}

    def check(folder: Path) -> None:
        with np.load(folder / "inputs.npz") as saved:
            np.testing.assert_array_equal(saved["image"], feeds["image"])

    _every_chunk(monkeypatch, tmp_path, lambda folder: save_inputs_file(folder / "inputs.npz", feeds), check,
                 lambda exc, folder: exc.message.startswith("could not save inputs.npz: "))


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_a_picture_of_the_graph_is_written_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              example_path: Path, suffix: str) -> None:
    from onnxviz.cli.render import lay_out
    from onnxviz.model.document import Document
    from onnxviz.model.layout.drawable import Drawable
    from onnxviz.ui.app import ensure_app
    from onnxviz.ui.canvas.export import export_image

    ensure_app()
    drawable = Drawable(lay_out(Document.open(example_path).index, "", expand_all=False))
    monkeypatch.setattr("onnxviz.model.io.disk._CHUNK", CHUNK)
    reference = tmp_path / f"reference.{suffix}"
    export_image(drawable, reference)

    def check(folder: Path) -> None:
        assert (folder / f"graph.{suffix}").read_bytes() == reference.read_bytes()

    def failed(exc: OnnxvizError, folder: Path) -> None:
        assert exc.message.startswith(f"could not write graph.{suffix}: ")

    runs = tmp_path / "runs"
    runs.mkdir()
    _every_chunk(monkeypatch, runs, lambda folder: export_image(drawable, folder / f"graph.{suffix}"), check, failed)


def test_the_log_is_appended_checked_and_a_failure_never_stops_the_app(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.ui.applog import append_log

    log = tmp_path / "onnxviz.log"
    append_log("first line", log)
    for fault in FAULTS:
        with faulty_disk.faulty(monkeypatch, at=0, fault=fault.split("+")[0], then_full=fault.endswith("full")):
            append_log("x" * 100, log)  # no exception: a log that cannot be written is no reason to stop
    append_log("last line", log)
    lines = log.read_text().splitlines()
    assert lines[0] == "first line" and lines[-1] == "last line"


@pytest.mark.parametrize("code", [faulty_disk.ERRNOS["ENOSPC"], faulty_disk.ERRNOS["EIO"]])
def test_a_transforms_working_files_that_cannot_be_written_are_one_sentence(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            code: int) -> None:
    """The transform's steps write the model and the tool's result with onnx.save (in its worker, a folder of
    its own in TMPDIR): a failure there is said in words naming that place, not 'OSError: [Errno 28] ...'."""
    import onnx

    from onnxviz.model.io.disk import reason
    from onnxviz.model.transform import stages

    def failing(*_args: object, **_kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    folder = tmp_path / "onnxviz-transform-1-abc"
    folder.mkdir()
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                                [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                                                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]))
    monkeypatch.setattr(onnx, "save", failing)
    reply = stages.run_step("prepare", str(folder), model.SerializeToString(), None)
    assert reply.error == (f"the transform could not write its working files in {tmp_path}: "
                           f"{reason(OSError(code, ''))}; the model is unchanged.")
    assert "Errno" not in reply.error


def test_a_transforms_variant_is_written_whole_or_not_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variant of the session (the model before a transform, each result) is a file the diff and Open in New
    Window read: a fault at any chunk is one sentence, and no part of it is left to be read."""
    from onnxviz.model.transform.variants import Variants

    faulty_disk.small_chunks(monkeypatch, 64)
    data = bytes(range(256)) * 3
    variants = Variants()
    try:
        calls = faulty_disk.count_calls(monkeypatch, lambda: variants.stage(data, "m (before onnxslim)"))
        assert calls["chunk"] >= 4, calls  # written through the checked writer, in chunks
        for at in range(calls["chunk"]):
            with faulty_disk.faulty(monkeypatch, at=at, fault="ENOSPC"), \
                    pytest.raises(OnnxvizError, match=r"^could not write m \(before onnxslim\)\.onnx: the disk is full\.$"):
                variants.stage(data, "m (before onnxslim)")
        staged = [p for p in Path(variants.stage(data, "m").path).parent.parent.rglob("*") if p.is_file()]
        assert all(p.read_bytes() == data for p in staged) and len(staged) == 2  # the counted one and the last
    finally:
        variants.cleanup()
