"""No import cycle in the onnxviz package, imports made only for type checking included: in a cycle, what a
module means depends on which module was imported first, and neither can be read, tested or moved alone.
import-linter's contracts do not count type-only imports; this test does, over grimp's graph of the package.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGE = "onnxviz"


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


def test_the_package_has_no_import_cycle(package_cycles: dict) -> None:
    assert not package_cycles, f"import cycles (type-only imports count too):\n{described(package_cycles)}"


def test_a_cycle_is_named_module_by_module() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.d", "p.e")):
        graph.add_import(importer=importer, imported=imported)
    found = cycles(graph, "p.")
    assert found.keys() == {("a", "b"), ("b", "c"), ("c", "a")}
    assert found[("a", "b")] == ("a", "b", "c", "a")
    assert described(found) == "a -> b -> c -> a"
