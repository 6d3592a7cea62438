"""The capture design onnxviz does not use, measured: every value a graph output, written by
onnxruntime straight into buffers allocated before the run.

onnxviz packs small values into a few Concat outputs (see onnxviz.model.runner.packing). The
alternative here makes the run itself faster than packing (synth300, first run of a fresh session:
1.3-1.5x a plain run on a quiet machine, against 1.9-2.2x packed): weights become graph inputs (else
onnxruntime compares every initializer with every fetched value at each run), every value gets a
slice of one preallocated buffer, bound with ``run_with_ortvaluevector``, so no value is
allocated, joined or copied after the run. What it costs is the session: onnxruntime's session
creation grows with the number of graph outputs (quadratically: 123k values take 36 s instead of
10.7 s packed), and a window runs a model once per session.

    .venv/bin/python bench/bench_run_bound.py [--repeat 5] [MODEL.onnx ...]

Prints, per model, the run alone (session created, buffers bound) and one whole run (shape
inference, model copy, session, binding, run) against a plain onnxruntime run; graph outputs of
both must be equal.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

import numpy as np
import onnx
from bench_run import _session  # the plain run's session, as bench_run makes it
from onnx import numpy_helper
from onnxruntime.capi import _pybind_state as C  # noqa: N812 - onnxruntime's own name for it
from synth import synth_file

from onnxviz.model.runner.capture import prepare_model
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.model.runner.packing import static_shapes

CPU = C.OrtDevice(C.OrtDevice.cpu(), C.OrtDevice.default_memory(), 0)
ALIGN = 64


def _slices(specs: list[tuple[np.dtype, tuple[int, ...]]]) -> list[np.ndarray]:
    """Arrays of these dtypes and shapes, each an aligned slice of one new buffer."""
    sizes = [math.prod(shape) * dtype.itemsize for dtype, shape in specs]
    starts = np.cumsum([0, *[-(-size // ALIGN) * ALIGN for size in sizes]]).tolist()
    buffer = np.empty(starts[-1] + ALIGN, np.uint8)
    pad = (-buffer.ctypes.data) % ALIGN
    return [buffer[pad + start:pad + start + size].view(dtype).reshape(shape)
            for (dtype, shape), start, size in zip(specs, starts, sizes, strict=False)]


def _vector(arrays: list[np.ndarray]) -> C.OrtValueVector:
    """OrtValues over the arrays' memory (no copy): onnxruntime reads or writes them in place."""
    vector = C.OrtValueVector()
    vector.reserve(len(arrays))
    vector.push_back_batch(arrays, [a.ctypes.data for a in arrays], [a.dtype for a in arrays],
                           [list(a.shape) for a in arrays], [CPU] * len(arrays))
    return vector


def bound_capture(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """One capture the bound way: seconds per step, and every value."""
    t = [time.perf_counter()]
    shapes = static_shapes(model, feeds)
    prepared = prepare_model(model, True).model
    graph = prepared.graph
    inputs = {i.name for i in graph.input}
    weights = {w.name: numpy_helper.to_array(w) for w in graph.initializer}
    graph.input.extend(onnx.helper.make_tensor_value_info(w.name, w.data_type, list(w.dims))
                       for w in graph.initializer if w.name not in inputs)
    del graph.initializer[:]
    t.append(time.perf_counter())
    session = _session(prepared.SerializeToString(), optimized=False)
    t.append(time.perf_counter())
    fed = {**weights, **feeds}
    inputs_bound = _slices([(a.dtype, a.shape) for a in fed.values()])
    for slot, array in zip(inputs_bound, fed.values(), strict=True):
        slot[...] = array
    names = [o.name for o in session.get_outputs()]
    outputs = _slices([(onnx.helper.tensor_dtype_to_np_dtype(shapes[n][0]), shapes[n][1]) for n in names])
    feed_vector, fetch_vector = _vector(inputs_bound), _vector(outputs)
    t.append(time.perf_counter())
    session._sess.run_with_ortvaluevector(C.RunOptions(), list(fed), feed_vector, names, fetch_vector, [CPU] * len(names))
    t.append(time.perf_counter())
    times = {"plan": t[1] - t[0], "session": t[2] - t[1], "bind": t[3] - t[2], "run": t[4] - t[3]}
    return times, dict(zip(names, outputs, strict=True))


def plain_run(model_bytes: bytes, feeds: dict[str, np.ndarray]) -> tuple[dict[str, float], list[np.ndarray]]:
    t0 = time.perf_counter()
    session = _session(model_bytes, optimized=False)
    t1 = time.perf_counter()
    outputs = session.run(None, feeds)
    return {"session": t1 - t0, "run": time.perf_counter() - t1}, outputs


def bench(path: Path, repeat: int) -> None:
    model = onnx.load(str(path))
    feeds = build_feeds(input_specs(model), {}, {}, seed=0)
    data = model.SerializeToString()
    plain: list[dict[str, float]] = []
    bound: list[dict[str, float]] = []
    for _ in range(repeat):
        plain_times, expected = plain_run(data, feeds)
        bound_times, values = bound_capture(model, feeds)
        plain.append(plain_times)
        bound.append(bound_times)
    for out, want in zip(model.graph.output, expected, strict=True):
        if not np.array_equal(values[out.name], want, equal_nan=True):
            print(f"  ! graph output {out.name} differs between the plain and the bound run")
    p = {k: statistics.median(x[k] for x in plain) for k in plain[0]}
    b = {k: statistics.median(x[k] for x in bound) for k in bound[0]}
    print(f"{path.name:<24} run alone: plain {1000 * p['run']:6.1f} ms, bound {1000 * b['run']:6.1f} ms, "
          f"{b['run'] / p['run']:4.2f}x | one run: plain {sum(p.values()):5.2f} s, bound {sum(b.values()):5.2f} s, "
          f"{sum(b.values()) / sum(p.values()):4.2f}x (plan {b['plan']:.2f}, session {b['session']:.2f} vs "
          f"{p['session']:.2f}, bind {b['bind']:.3f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for path in args.models or [synth_file(300)]:
        bench(path, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
