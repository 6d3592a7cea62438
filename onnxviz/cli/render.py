"""``onnxviz render FILE -o OUT.png|OUT.svg``: the whole graph drawn headless, as the window draws it."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from onnxviz.cli.output import note, say
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.layout.options import LEFT_TO_RIGHT, TOP_TO_BOTTOM, LayoutOptions

if TYPE_CHECKING:
    from onnxviz.model.document import Document
    from onnxviz.model.graph.index import ModelIndex
    from onnxviz.model.layout.engine import GraphLayout
    from onnxviz.model.layout.scene import Scene


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = ("Lay out and draw the whole top-level graph (or --scope) to PNG or SVG. "
                          "Big graphs start with their name-scope groups collapsed; --expand-all opens them.")
    parser.add_argument("file", help="an .onnx model")
    parser.add_argument("-o", "--output", required=True, help="OUT.png or OUT.svg")
    parser.add_argument("--expand-all", action="store_true", help="draw every node (no collapsed groups)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="pixels per layout unit for PNG (default 1; reduced for huge graphs)")
    parser.add_argument("--scope", default="", help="a subgraph scope such as '12.then_branch' (default: main graph)")
    parser.add_argument("--names", action="store_true", help="show node names instead of op types (boxes widen for them)")
    parser.add_argument("--tensor-names", action="store_true", help="write each edge's tensor name before its shape")
    parser.add_argument("--left-to-right", action="store_true", help="lay the graph out left to right")
    parser.add_argument("--no-shapes", action="store_true", help="skip shape inference for edge labels")
    return run


def run(args: argparse.Namespace) -> int:
    if not args.scale > 0:
        raise OnnxvizError("--scale must be a positive number.")
    out = Path(args.output)
    if out.suffix.lower() not in (".png", ".svg", ".jpg", ".jpeg", ".bmp", ".webp"):
        raise OnnxvizError(f"{out.name}: the output must end in .png or .svg.")
    from onnxviz.model.process_tuning import building

    with building():  # a one-shot command making millions of acyclic objects: no cycle collection walks them
        return _render(args, out)


def _render(args: argparse.Namespace, out: Path) -> int:
    from onnxviz.model.document import Document

    doc = Document.open(args.file)
    inference = None
    if not args.no_shapes:  # begun first, in a child of its own: what needs no types is done meanwhile
        from onnxviz.model.background.contained import NativeCrash, inferred_types_begun

        inference = inferred_types_begun(doc.analysis_bytes())
    try:
        ensure_gui_app()  # after inference's child was forked: it must not inherit Qt's threads
        layout = _untyped_layout(doc, args)
    except BaseException:
        if inference is not None:
            with contextlib.suppress(Exception):
                inference()  # the child ends before this process does
        raise
    if inference is not None:
        try:
            layout.index.set_inferred(inference().types)
        except NativeCrash as crash:
            note(f"{crash.message.rstrip('.')}: the graph is drawn without inferred shapes")
    scene = layout.build()
    index = layout.index
    from onnxviz.model.layout.describe import enterable_boxes
    from onnxviz.model.layout.drawable import Drawable
    from onnxviz.ui.canvas.export import export_image, image_scale
    from onnxviz.ui.canvas.painting import PaintOptions

    drawable = Drawable(scene, labels_now=False)  # a big picture is drawn too far out for them
    paint = PaintOptions(show_names=args.names, enterable=enterable_boxes(index, scene))
    export_image(drawable, out, scale=args.scale, options=paint)
    scale = image_scale(drawable, args.scale)
    scaled = "" if out.suffix.lower() == ".svg" or scale >= args.scale else f" at scale {scale:.3g}"
    say(f"wrote {out} ({scene.n_boxes} boxes, {scene.n_edges} edges{scaled})")
    return 0


def _untyped_layout(doc: Document, args: argparse.Namespace) -> GraphLayout:
    """What ``render`` does while shape inference runs (besides starting Qt): the index, the layout's groups and
    each shown level's wiring (none needs types), and the drawing's modules imported."""
    index = doc.index
    if args.scope not in index.graphs:
        known = ", ".join(repr(s) for s in list(index.graphs)[:6])
        raise OnnxvizError(f"the model has no graph scope {args.scope!r} (scopes: {known}).")
    import onnxviz.ui.canvas.export  # noqa: F401  # imported meanwhile

    options = LayoutOptions(names=args.names, edge_names=args.tensor_names,
                            direction=LEFT_TO_RIGHT if args.left_to_right else TOP_TO_BOTTOM)
    layout = layout_of(index, args.scope, args.expand_all, options)
    layout.wire()
    return layout


def lay_out(index: ModelIndex, scope: str, expand_all: bool, options: LayoutOptions | None = None) -> Scene:
    return layout_of(index, scope, expand_all, options).build()


def layout_of(index: ModelIndex, scope: str, expand_all: bool, options: LayoutOptions | None = None) -> GraphLayout:
    """The layout ``render`` builds: the scope's groups as a window first opens them, or every one open."""
    from onnxviz.model.layout.engine import GraphLayout

    layout = GraphLayout(index, scope, options=options)
    if expand_all:
        layout.expand_all()
    return layout


def ensure_gui_app() -> object:
    """The application fonts and painting need (a QApplication, so widgets may follow); offscreen without a display."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) and sys.platform.startswith("linux")
        if headless:
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QApplication(sys.argv[:1])
    return app
