"""Every module of the model layer, and every module of its layout package, sits in a layer of its import-linter
contract (pyproject.toml): a module left out of the layers is bound by none of them."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

import pytest
from conftest import REPO

try:
    import tomllib
except ImportError:  # Python 3.10: import-linter's own reader
    import tomli as tomllib  # type: ignore[no-redef]


def contracts() -> list[dict[str, Any]]:
    with open(REPO / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["tool"]["importlinter"]["contracts"])


def layered(package: str) -> set[str]:
    """The modules named in the layers of the contract that orders ``package``'s modules (by their names in it)."""
    for contract in contracts():
        if contract["type"] != "layers":
            continue
        names = {name.strip() for layer in contract["layers"] for name in re.split(r"[|:]", layer)}
        if contract.get("containers") == [package]:
            return names
        if "containers" not in contract and all(name.startswith(f"{package}.") for name in names):
            return {name.removeprefix(f"{package}.") for name in names}
    raise AssertionError(f"no layers contract orders the modules of {package}")


@pytest.mark.parametrize("package", ["onnxviz.model", "onnxviz.model.layout"])
def test_every_module_is_in_a_layer_of_its_contract(package: str) -> None:
    modules = {info.name for info in pkgutil.iter_modules(importlib.import_module(package).__path__)}
    named = layered(package)
    assert modules - named == set(), f"modules of {package} in no layer of its contract: {sorted(modules - named)}"
    assert named - modules == set(), f"layers of {package}'s contract name no module: {sorted(named - modules)}"
