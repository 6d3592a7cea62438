"""No import cycle in the onnxviz package, imports made only for type checking included: in a cycle, what a
module means depends on which module was imported first, and neither can be read, tested or moved alone.

The model layer and the command line have none. The window still has cycles that are being removed (features
that import MainWindow, issue 36 points 1-2): they are listed below, and the list may only shrink.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGE = "onnxviz"

# Imports of the window's modules that still lie on a cycle, as (importer, imported) without "onnxviz.": remove
# each one the moment it is no longer on a cycle (test_the_known_window_cycles_are_still_there says which).
KNOWN_WINDOW_CYCLES = frozenset({
    ("ui.canvas.canvas", "ui.canvas.menus"),
    ("ui.canvas.feature", "ui.main_window"),
    ("ui.canvas.menus", "ui.canvas.canvas"),
    ("ui.diff.controller", "ui.main_window"),
    ("ui.diff.feature", "ui.diff.controller"),
    ("ui.diff.feature", "ui.main_window"),
    ("ui.edit.controller", "ui.edit.extract"),
    ("ui.edit.controller", "ui.edit.value_dialogs"),
    ("ui.edit.controller", "ui.main_window"),
    ("ui.edit.extract", "ui.edit.controller"),
    ("ui.edit.extract", "ui.main_window"),
    ("ui.edit.feature", "ui.edit.controller"),
    ("ui.edit.feature", "ui.main_window"),
    ("ui.edit.value_dialogs", "ui.edit.controller"),
    ("ui.main_window", "ui.canvas.feature"),
    ("ui.main_window", "ui.diff.feature"),
    ("ui.main_window", "ui.edit.feature"),
    ("ui.main_window", "ui.panels.feature"),
    ("ui.main_window", "ui.run.feature"),
    ("ui.main_window", "ui.saving"),
    ("ui.main_window", "ui.shortcuts"),
    ("ui.main_window", "ui.text_format"),
    ("ui.main_window", "ui.transform.controller"),
    ("ui.main_window", "ui.transform.feature"),
    ("ui.panels.feature", "ui.main_window"),
    ("ui.panels.feature", "ui.panels.navigation"),
    ("ui.panels.feature", "ui.panels.node_panel"),
    ("ui.panels.feature", "ui.panels.value_panel"),
    ("ui.panels.navigation", "ui.main_window"),
    ("ui.panels.node_panel", "ui.panels.navigation"),
    ("ui.panels.value_panel", "ui.panels.node_panel"),
    ("ui.run.controller", "ui.main_window"),
    ("ui.run.feature", "ui.main_window"),
    ("ui.run.feature", "ui.run.controller"),
    ("ui.saving", "ui.main_window"),
    ("ui.shortcuts", "ui.main_window"),
    ("ui.text_format", "ui.main_window"),
    ("ui.transform.controller", "ui.main_window"),
    ("ui.transform.controller", "ui.saving"),
    ("ui.transform.controller", "ui.transform.feature"),
    ("ui.transform.feature", "ui.main_window"),
    ("ui.transform.feature", "ui.transform.controller"),
})


def cycles(graph: grimp.ImportGraph, prefix: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """Each import (importer, imported) that lies on a cycle, with the shortest such cycle (its modules in
    import order, the importer first and last), for the imports among modules named ``prefix``...; the names
    are given without the prefix."""
    found = {}
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                name = (importer.removeprefix(prefix), imported.removeprefix(prefix))
                found[name] = tuple(m.removeprefix(prefix) for m in (importer, *back))
    return found


def described(found: dict[tuple[str, str], tuple[str, ...]]) -> str:
    """The cycles, one a line, each once (from its first module in alphabetical order)."""
    lines = set()
    for cycle in found.values():
        ring = cycle[:-1]
        start = ring.index(min(ring))
        lines.add(" -> ".join((*ring[start:], *ring[:start], ring[start])))
    return "\n".join(sorted(lines))


@pytest.fixture(scope="module")
def package_cycles() -> dict[tuple[str, str], tuple[str, ...]]:
    graph = grimp.build_graph(PACKAGE, include_external_packages=False, exclude_type_checking_imports=False,
                              cache_dir=None)
    return cycles(graph, f"{PACKAGE}.")


def test_the_model_and_the_command_line_have_no_import_cycle(package_cycles: dict) -> None:
    outside = {edge: cycle for edge, cycle in package_cycles.items()
               if any(not module.startswith("ui.") for module in cycle)}
    assert not outside, f"import cycles (type-only imports count too):\n{described(outside)}"


def test_the_window_has_no_new_import_cycle(package_cycles: dict) -> None:
    new = {edge: cycle for edge, cycle in package_cycles.items() if edge not in KNOWN_WINDOW_CYCLES}
    assert not new, f"new import cycles (type-only imports count too):\n{described(new)}"


def test_the_known_window_cycles_are_still_there(package_cycles: dict) -> None:
    gone = sorted(KNOWN_WINDOW_CYCLES - package_cycles.keys())
    assert not gone, ("these imports are no longer on a cycle (or no longer made): remove them from "
                      f"KNOWN_WINDOW_CYCLES, which may only shrink: {gone}")


def test_a_cycle_is_named_module_by_module() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.d", "p.e")):
        graph.add_import(importer=importer, imported=imported)
    found = cycles(graph, "p.")
    assert found.keys() == {("a", "b"), ("b", "c"), ("c", "a")}
    assert found[("a", "b")] == ("a", "b", "c", "a")
    assert described(found) == "a -> b -> c -> a"
