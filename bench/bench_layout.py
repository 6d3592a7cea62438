"""Layout benchmark: index time, layout time (default/collapsed and fully expanded), expand-one-group
time, box count, edge crossings and main-path straightness.

    python bench/bench_layout.py          # bench/synth.py's 300/1500/3000 layers (made if missing) + light models
    python bench/bench_layout.py MODEL.onnx --repeat 5 --no-expanded
    python bench/bench_layout.py --flat           # the same graphs without node names

Times are medians of ``--repeat`` runs of wall-clock time, with the process CPU time in
brackets (the machine is shared: when others run, wall time grows, CPU time much less).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synth import synth_file  # noqa: E402

from onnxviz.model.graph.index import ModelIndex  # noqa: E402
from onnxviz.model.layout.engine import GraphLayout  # noqa: E402
from onnxviz.model.layout.scene import BoxKind, Scene  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
SYNTH_LAYERS = (300, 1500, 3000)
LIGHT_MODELS = ["light_resnet50", "light_inception_v2", "light_densenet121"]


class Timing:
    def __init__(self, wall: float, cpu: float) -> None:
        self.wall, self.cpu = wall, cpu

    def __format__(self, spec: str) -> str:
        return f"{self.wall:6.3f}s [{self.cpu:5.3f}]"


def median_time(fn: Callable[[], object], repeat: int) -> tuple[Timing, object]:
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return Timing(statistics.median(walls), statistics.median(cpus)), result


def crossings(scene: Scene) -> int:
    """Edge segments that cross each other (estimate: pairs sharing an end point are not counted)."""
    segs = []
    for e in range(scene.n_edges):
        pts = scene.edge_polyline(e).astype(float)
        for a, b in zip(pts[:-1], pts[1:], strict=True):
            if not np.allclose(a, b):
                segs.append((a[0], a[1], b[0], b[1], e))
    if not segs:
        return 0
    s = np.array(segs)
    bucket = 200.0
    lo = np.floor(np.minimum(s[:, 1], s[:, 3]) / bucket).astype(int)
    hi = np.floor(np.maximum(s[:, 1], s[:, 3]) / bucket).astype(int)
    rows = np.repeat(np.arange(len(s)), hi - lo + 1)
    keys = np.concatenate([np.arange(a, b + 1) for a, b in zip(lo, hi, strict=True)])
    order = np.argsort(keys, kind="stable")
    rows, keys = rows[order], keys[order]
    pairs: set[tuple[int, int]] = set()
    for chunk in np.split(rows, np.flatnonzero(np.diff(keys)) + 1):
        if len(chunk) < 2:
            continue
        pairs |= _crossing_pairs(s[chunk], chunk)
    return len(pairs)


def _crossing_pairs(s: np.ndarray, ids: np.ndarray) -> set[tuple[int, int]]:
    x1, y1, x2, y2, edge = (s[:, k] for k in range(5))

    def orient(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray,
               cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
        return np.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))

    i, j = np.triu_indices(len(s), 1)
    o1 = orient(x1[i], y1[i], x2[i], y2[i], x1[j], y1[j])
    o2 = orient(x1[i], y1[i], x2[i], y2[i], x2[j], y2[j])
    o3 = orient(x1[j], y1[j], x2[j], y2[j], x1[i], y1[i])
    o4 = orient(x1[j], y1[j], x2[j], y2[j], x2[i], y2[i])
    hit = (o1 * o2 < 0) & (o3 * o4 < 0) & (edge[i] != edge[j])
    return {(int(ids[a]), int(ids[b])) for a, b in zip(i[hit], j[hit], strict=True)}


def straightness(scene: Scene) -> float:
    """Share of 1:1 links (one successor, one predecessor) drawn exactly vertical."""
    if scene.n_edges == 0:
        return 1.0
    centre = scene.box_x + scene.box_w / 2
    fan_in = np.bincount(scene.edge_dst, minlength=scene.n_boxes)
    fan_out = np.bincount(scene.edge_src, minlength=scene.n_boxes)
    chain = (fan_out[scene.edge_src] == 1) & (fan_in[scene.edge_dst] == 1)
    straight = np.abs(centre[scene.edge_src] - centre[scene.edge_dst]) < 0.5
    return float(straight[chain].mean()) if chain.any() else 1.0


def bench(path: Path, repeat: int, expanded: bool, flat: bool) -> None:
    model = onnx.load(str(path), load_external_data=False)
    if flat:
        for node in model.graph.node:
            node.name = ""  # as exported without name scopes
    t_index, index = median_time(lambda: ModelIndex(model), repeat)
    assert isinstance(index, ModelIndex)
    t_layout, scene = median_time(lambda: GraphLayout(index).build(), repeat)
    assert isinstance(scene, Scene)
    layout = GraphLayout(index)
    layout.build()
    groups = [r.group for r in scene.box_ref if r.kind == BoxKind.GROUP]
    t_expand = "     -          "
    if groups:
        target = groups[len(groups) // 2]

        def expand_one() -> None:
            fresh = GraphLayout(index)
            fresh.build()
            t0, c0 = time.perf_counter(), time.process_time()
            fresh.expand(target)  # lays out the group, pushes the rest
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        walls: list[float] = []
        cpus: list[float] = []
        for _ in range(repeat):
            expand_one()
        t_expand = format(Timing(statistics.median(walls), statistics.median(cpus)))
    line = (f"{path.stem:19s} nodes {len(model.graph.node):6d}  index {t_index}  layout {t_layout}  "
            f"boxes {scene.n_boxes:6d}  edges {scene.n_edges:6d}  expand-one {t_expand}")
    if scene.n_edges <= 20000:
        line += f"  crossings {crossings(scene):5d}  straight {straightness(scene):.2f}"
    print(line, flush=True)
    if expanded and layout.tree.n_groups:
        t_full, full = median_time(lambda: GraphLayout(index, expanded=layout.tree.paths).build(),
                                   max(1, repeat // 3))
        assert isinstance(full, Scene)
        print(f"{'':19s} fully expanded: layout {t_full}  boxes {full.n_boxes:6d}  "
              f"edges {full.n_edges:6d}  frames {len(full.group_path):6d}", flush=True)


def default_models() -> list[Path]:
    return [synth_file(n) for n in SYNTH_LAYERS] + [LIGHT / f"{m}.onnx" for m in LIGHT_MODELS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-expanded", action="store_true", help="skip the fully expanded layouts")
    parser.add_argument("--flat", action="store_true", help="clear node names first (no name-scope groups)")
    args = parser.parse_args()
    for path in args.models or default_models():
        bench(path, args.repeat, not args.no_expanded, args.flat)


if __name__ == "__main__":
    main()
