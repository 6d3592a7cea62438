"""Stored results: batched statistics equal the one-by-one ones, and every dtype reads back."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxviz.model.graph.tensors import stats_of_array
from onnxviz.model.runner import RunError
from onnxviz.model.runner.capture import Captured
from onnxviz.model.runner.stats import summarize
from onnxviz.model.runner.store import RunResult, write_result


def _values() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    with_nan = rng.standard_normal((4, 5)).astype(np.float32)
    with_nan[0, 0], with_nan[1, 1], with_nan[2, 2] = np.nan, np.inf, -np.inf
    return {
        "normal": rng.standard_normal((3, 7, 5)).astype(np.float32),
        "with_nan": with_nan,
        "constant": np.full((6,), 8.31e20, np.float32),
        "all_nan": np.full((3,), np.nan),
        "ints": rng.integers(-5, 5, (10,)).astype(np.int64),
        "bools": np.array([True, False, True]),
        "scalar": np.array(2.5, np.float32),
        "big": rng.random(70_000).astype(np.float32),
        "big_offset": (rng.standard_normal((3, 1_100_000)) * 2 + 1000).astype(np.float32),
        "big_nan": np.where(rng.random(80_000) < 0.01, np.nan, rng.standard_normal(80_000)),
        "big_huge": np.full(70_000, 3.9e27, np.float32),
        "big_ints": rng.integers(0, 100, 70_000),
        "empty": np.zeros((0, 3), np.float32),
        "half": rng.standard_normal((2, 3)).astype(np.float16),
        "bf16": rng.standard_normal((2, 3)).astype(ml_dtypes.bfloat16),
        "strings": np.array(["a", "bc"], dtype=object),
    }


def test_batched_statistics_equal_one_by_one() -> None:
    values = _values()
    batched = summarize(values)
    for name, array in values.items():
        one = stats_of_array(array, name)
        got = batched[name]
        assert (got.dtype, got.shape, got.numel, got.nan_count, got.inf_count) == \
            (one.dtype, one.shape, one.numel, one.nan_count, one.inf_count), name
        for field in ("minimum", "maximum", "mean", "std", "zero_fraction"):
            a, b = getattr(got, field), getattr(one, field)
            assert (a is None) == (b is None), (name, field)
            if a is not None:  # float32 sums and dots of a million elements: close, not identical
                assert a == pytest.approx(b, rel=1e-5, abs=1e-9), (name, field)
        assert got.hist_counts.sum() == one.hist_counts.sum(), name
        np.testing.assert_allclose(got.hist_edges, one.hist_edges, rtol=1e-12)
        assert np.abs(got.hist_counts - one.hist_counts).sum() <= max(2, one.numel // 10_000), name


@pytest.mark.parametrize("packed", [True, False])
def test_every_dtype_reads_back(tmp_path: Path, packed: bool) -> None:
    values = _values()
    captured = Captured(values=values, engines={n: "onnxruntime" for n in values},
                        producers={n: -1 for n in values}, outputs=["normal"], engine="onnxruntime")
    graph = helper.make_graph([], "g", [], [helper.make_tensor_value_info("normal", TensorProto.FLOAT, None)])
    write_result(captured, helper.make_model(graph), tmp_path, tmp_path if packed else None)
    files = {p.name for p in tmp_path.iterdir()}
    # the values (strings always as a .npy), the table (run.json, columns.npz), a dump's index.json
    assert ("values.bin" in files) == packed and len(files) == (4 if packed else len(values) + 3)
    assert ("index.json" in files) != packed
    result = RunResult.load(tmp_path)
    for name, array in values.items():
        back = np.asarray(result.array(name))
        assert back.shape == array.shape, name
        if name == "strings":
            assert back.dtype.kind == "U" and back.tolist() == ["a", "bc"]
        else:
            assert back.dtype == array.dtype, name
            np.testing.assert_array_equal(back, array)
    assert result.values["with_nan"].nonfinite and result.values["with_nan"].stats.nan_count == 1
    expected = summarize(values)
    for name in values:  # the table keeps every statistic exactly
        got, want = result.values[name].stats, expected[name]
        for field in dataclasses.fields(want):
            a, b = getattr(got, field.name), getattr(want, field.name)
            if isinstance(b, np.ndarray):
                np.testing.assert_array_equal(a, b, err_msg=f"{name}.{field.name}")
            else:
                assert a == b, (name, field.name)
    assert result.values["constant"].stats.maximum == pytest.approx(8.31e20, rel=1e-6)


def test_damaged_result_folder_is_one_message(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(RunError, match="does not hold a readable run"):
        RunResult.load(tmp_path)


@pytest.mark.parametrize("damage", ["cut", "codes", "no columns"])
def test_a_damaged_table_is_one_message(tmp_path: Path, damage: str) -> None:
    _write(tmp_path, {f"v{k}": np.full((2,), k, np.float32) for k in range(5000)})
    assert len(RunResult.load(tmp_path).values) == 5000
    run = tmp_path / "run.json"
    if damage == "cut":  # the names of the last values are gone
        run.write_text(run.read_text(encoding="utf-8").rsplit("\n", 1)[0], encoding="utf-8")
    elif damage == "codes":
        with np.load(tmp_path / "columns.npz") as saved:
            arrays = {k: saved[k] for k in saved.files}
        arrays["code_name"][7] = 10**6
        np.savez(tmp_path / "columns.npz", **arrays)
    else:
        (tmp_path / "columns.npz").unlink()
    with pytest.raises(RunError, match="missing or damaged"):
        RunResult.load(tmp_path)


def _write(folder: Path, values: dict[str, np.ndarray], packed: bool = True) -> None:
    captured = Captured(values=values, engines=dict.fromkeys(values, "onnxruntime"),
                        producers=dict.fromkeys(values, -1), outputs=[], engine="onnxruntime")
    write_result(captured, helper.make_model(helper.make_graph([], "g", [], [])), folder, folder if packed else None)


def test_a_dump_index_is_plain_json_with_every_value(tmp_path: Path) -> None:
    values = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b\nc": np.array([np.nan, 1.0])}
    _write(tmp_path, values, packed=False)
    index = json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))
    assert list(index["values"]) == ["a", "b\nc"]
    a = index["values"]["a"]
    assert (a["shape"], a["numpy_dtype"], a["engine"], a["node"]) == ([2, 3], "float32", "onnxruntime", -1)
    assert a["stats"]["maximum"] == 5.0 and index["values"]["b\nc"]["stats"]["nan_count"] == 1
    assert (tmp_path / a["file"]).is_file()


def test_run_times_read_in_units_people_use() -> None:
    """The overlay's key read "9.211e+05 us" for vgg19's slowest node."""
    from onnxviz.model.runner import MEASURE_KINDS
    from onnxviz.model.text import duration_text

    assert [duration_text(us) for us in (0.0, 120.0, 999.7, 3400.0, 120_000.0, 921_100.0, 12_500_000.0)] == \
        ["0 us", "120 us", "1 ms", "3.4 ms", "120 ms", "0.921 s", "12.5 s"]
    assert MEASURE_KINDS["time_us"] == "duration" and MEASURE_KINDS["nonfinite"] == "flag"
    assert MEASURE_KINDS["mean"] == "signed" and "max_abs" not in MEASURE_KINDS  # max |x| is never signed
