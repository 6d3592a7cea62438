"""No class in the package is over 500 lines (issue 36): a bigger one does several jobs, split it into parts."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

LIMIT = 500
PACKAGE = REPO / "onnxviz"


def class_sizes(root: Path) -> dict[str, int]:
    """Lines of every class (nested ones too) in the package ``root``, by "package/module.py::Name"."""
    sizes = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                sizes[f"{path.relative_to(root.parent).as_posix()}::{node.name}"] = node.end_lineno - node.lineno + 1
    return sizes


def test_no_class_is_over_500_lines() -> None:
    over = {name: n for name, n in class_sizes(PACKAGE).items() if n > LIMIT}
    assert over == {}


def test_the_count_sees_a_class_over_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "pkg" / "big.py"
    big.parent.mkdir()
    body = "".join(f"    def m{k}(self) -> int:\n        return {k}\n" for k in range(LIMIT // 2))
    big.write_text(f"class Small:\n    pass\n\n\nclass Big:\n{body}")
    sizes = {name.rsplit("::", 1)[1]: n for name, n in class_sizes(tmp_path / "pkg").items()}
    assert sizes == {"Small": 2, "Big": 1 + 2 * (LIMIT // 2)}

