"""The canvas's house: modules that import each other one way only (type-only imports included), classes of
a readable size."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

import onnxviz.ui.canvas

PACKAGE = "onnxviz.ui.canvas"
FOLDER = Path(onnxviz.ui.canvas.__file__).parent


def test_no_import_cycle_inside_the_canvas_package() -> None:
    graph = grimp.build_graph("onnxviz", exclude_type_checking_imports=False)
    inside = {m for m in graph.modules if m.startswith(PACKAGE + ".")}
    assert f"{PACKAGE}.canvas" in inside and f"{PACKAGE}.menus" in inside
    cycles = []
    for module in sorted(inside):
        for imported in sorted(graph.find_modules_directly_imported_by(module) & inside):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None and set(back) <= inside:
                cycles.append((module, *back))
    assert cycles == []


def test_no_class_of_the_canvas_over_500_lines() -> None:
    sizes = {f"{path.name}:{node.name}": (node.end_lineno or node.lineno) - node.lineno + 1
             for path in sorted(FOLDER.glob("*.py")) for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.ClassDef)}
    assert "canvas.py:GraphCanvas" in sizes
    assert {name: size for name, size in sizes.items() if size > 500} == {}
