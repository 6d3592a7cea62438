"""Dump every layout result of a set of models, to prove a change of the layout code draws the same.

    python bench/layout_snapshot.py dump OUT_DIR [--synth 300=PATH --synth 3000=PATH] [--node-models DIR]
    python bench/layout_snapshot.py compare DIR_A DIR_B

``dump`` lays out, as the canvas does (``InlineLayout``, then a ``Drawable`` for the label spots), the
real exports in tests/data/exports, onnx's light models, bench/synth.py models, models with If/Loop
bodies (drawn inline and drilled into), the same synth model without node names (runs of nodes), and
onnx's node test models (``--node-models``: their ``test_*/model.onnx``): top to bottom and left to
right (and with names and tensor names), collapsed, with one group expanded and collapsed again, fully
expanded, and relabelled after inferred shapes arrived. Each result (every box's position, size, texts
and ref, every edge's route points and label, the group frames, the bodies drawn inside nodes, the label
spots) is written byte for byte. ``compare`` reports each result that differs between two dumps (run
``dump`` once with the main branch on PYTHONPATH, once with yours).
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))   # after PYTHONPATH: the onnxviz it names is the one dumped
sys.path.append(str(REPO / "tests"))
sys.path.append(str(REPO / "tests" / "model" / "layout"))  # test_nested_inline_bodies: its model

from onnxviz.model.graph.index import ModelIndex  # noqa: E402
from onnxviz.model.graph.validation import infer_types  # noqa: E402
from onnxviz.model.layout.drawable import Drawable  # noqa: E402
from onnxviz.model.layout.inline import InlineLayout  # noqa: E402
from onnxviz.model.layout.options import LEFT_TO_RIGHT, LayoutOptions  # noqa: E402
from onnxviz.model.layout.scene import Scene  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
OPTIONS = {"TB": LayoutOptions(), "LR": LayoutOptions(direction=LEFT_TO_RIGHT),
           "TB-names": LayoutOptions(names=True, edge_names=True)}
BIG = 20000   # nodes above which a model gets the cheaper set of layouts


def _value(v: Any) -> Any:
    """A comparable, picklable form: arrays as (dtype, shape, bytes), nested lists and dataclasses as tuples."""
    if isinstance(v, np.ndarray):
        return ("array", str(v.dtype), v.shape, v.tobytes())
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__, tuple((f.name, _value(getattr(v, f.name))) for f in dataclasses.fields(v)))
    if isinstance(v, list | tuple):
        return tuple(_value(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((_value(k), _value(x)) for k, x in v.items()))
    if isinstance(v, np.generic):
        return v.item()
    return v


def record(layout: InlineLayout, scene: Scene) -> Any:
    """Everything drawn of one layout: the scene, the bodies inside nodes, the label spots."""
    drawable = Drawable(scene)
    return _value({"scene": scene, "embedded": layout.embedded, "frame_holders": layout.frame_holders,
                   "expanded": sorted(layout.expanded), "labels": drawable.labels, "label_row": drawable.label_row,
                   "bounds": drawable.bounds, "box_node": drawable.box_node})


def _holders(index: ModelIndex) -> list[tuple[str, int]]:
    return sorted({(scope, node) for scope, g in index.graphs.items() for node, _, _ in g.children
                   if not scope.startswith("fn:")})


def layouts(index: ModelIndex, model: onnx.ModelProto, big: bool) -> Iterator[tuple[str, Any]]:
    """(name, record) of each layout of one model."""
    inferred = infer_types(model).types
    for opt_name, options in OPTIONS.items():
        if big and opt_name == "TB-names":
            continue
        index.set_inferred({})
        lay = InlineLayout(index, "", None, options=options)
        yield f"{opt_name}/collapsed", record(lay, lay.build())
        groups = lay.tree.paths
        if groups:
            target = groups[len(groups) // 2]
            yield f"{opt_name}/expand-one", record(lay, lay.expand(target))
            yield f"{opt_name}/collapse-one", record(lay, lay.collapse(target))
            ctor = InlineLayout(index, "", [target], options=options)
            yield f"{opt_name}/expanded-arg", record(ctor, ctor.build())
        index.set_inferred(inferred)
        yield f"{opt_name}/relabel", record(lay, lay.relabel())
        if not big:
            full = InlineLayout(index, "", groups, options=options)
            yield f"{opt_name}/all-expanded", record(full, full.build())
        holders = _holders(index)
        if holders:
            inline = InlineLayout(index, "", None, holders, options=options)
            yield f"{opt_name}/inline", record(inline, inline.build())
            yield f"{opt_name}/inline-relabel", record(inline, inline.relabel())
        for scope in sorted(s for s in index.graphs if s and not s.startswith("fn:")):
            drilled = InlineLayout(index, scope, None, holders, options=options)
            yield f"{opt_name}/drill:{scope}", record(drilled, drilled.build())


def models(args: argparse.Namespace) -> Iterator[tuple[str, onnx.ModelProto]]:
    from content_models import branches_model, contrib_model, small_values_model
    from test_nested_inline_bodies import nested_model

    for path in sorted((REPO / "tests" / "data" / "exports").glob("*.onnx")):
        yield f"exports/{path.stem}", onnx.load(str(path), load_external_data=False)
    for name in ("light_resnet50", "light_inception_v2", "light_densenet121"):
        if (LIGHT / f"{name}.onnx").is_file():
            yield f"light/{name}", onnx.load(str(LIGHT / f"{name}.onnx"))
    yield "made/nested", nested_model()
    yield "made/branches", branches_model()
    yield "made/contrib", contrib_model()
    yield "made/small_values", small_values_model()
    for spec in args.synth:
        layers, path = spec.split("=", 1)
        model = onnx.load(path, load_external_data=False)
        yield f"synth/{layers}", model
        if int(layers) <= 300:
            flat = onnx.ModelProto()
            flat.CopyFrom(model)
            for node in flat.graph.node:
                node.name = ""
            yield f"synth/{layers}-flat", flat
    if args.node_models:
        for path in sorted(Path(args.node_models).glob("test_*/model.onnx")):
            yield f"node/{path.parent.name}", onnx.load(str(path), load_external_data=False)


def dump(args: argparse.Namespace) -> None:
    import onnxviz

    print(f"dumping the layouts of {Path(onnxviz.__file__).parent}", flush=True)   # PYTHONPATH chooses it
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, model in models(args):
        index = ModelIndex(model)
        big = len(model.graph.node) > BIG
        results = dict(layouts(index, model, big))
        (out / f"{name.replace('/', '__')}.pickle").write_bytes(pickle.dumps(results))
        print(f"{name}: {len(results)} layouts", flush=True)


def compare(args: argparse.Namespace) -> int:
    a, b = Path(args.a), Path(args.b)
    names = sorted({p.name for p in a.glob("*.pickle")} | {p.name for p in b.glob("*.pickle")})
    bad = total = 0
    for name in names:
        if not (a / name).is_file() or not (b / name).is_file():
            print(f"{name}: only in one dump")
            bad += 1
            continue
        ra, rb = pickle.loads((a / name).read_bytes()), pickle.loads((b / name).read_bytes())
        for key in sorted(set(ra) | set(rb)):
            total += 1
            if ra.get(key) != rb.get(key):
                bad += 1
                print(f"{name} {key}: DIFFERS {_first_difference(ra.get(key), rb.get(key))}")
    print(f"{len(names)} models, {total} layouts, {bad} different")
    return 1 if bad else 0


def _first_difference(x: Any, y: Any, path: str = "") -> str:
    if isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
        for k, (u, v) in enumerate(zip(x, y, strict=True)):
            if u != v:
                label = u[0] if isinstance(u, tuple) and len(u) == 2 and isinstance(u[0], str) else k
                return _first_difference(u, v, f"{path}/{label}")
    return f"at {path}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("--synth", action="append", default=[], help="LAYERS=PATH of a bench/synth.py model")
    d.add_argument("--node-models", help="a folder of onnx node test cases (test_*/model.onnx)")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = parser.parse_args()
    if args.cmd == "dump":
        dump(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
