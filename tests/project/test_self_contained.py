"""The repository alone passes its tests: nothing in the tests, benches, scripts or build files names a
place outside it, and the watch on the test process (tests/outside_reads.py) catches a read there."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import outside_reads
import pytest
from conftest import REPO

SOURCES = [p for p in [*REPO.glob("tests/**/*.py"), *REPO.glob("bench/*.py"), *REPO.glob("bench/*.sh"),
                       *REPO.glob("scripts/*"), REPO / "Makefile", REPO / ".ci" / "run", REPO / "pyproject.toml"]
           if p.name != Path(__file__).name]  # this file spells the patterns out
# ../shared or shared/bench/..., a checkout under /work/, the old ONNXVIZ_SHARED variable, a parent of the repository
OUTSIDE = re.compile(r"\.\./shared|\bshared/(bench|onnx-node-tests)|/work/|ONNXVIZ_SHARED|\.parents\[[2-9]\]")


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(REPO)) for p in SOURCES])
def test_no_source_names_a_place_outside_the_repository(path: Path) -> None:
    lines = path.read_text().splitlines()
    found = [f"{k}: {line.strip()}" for k, line in enumerate(lines, 1) if OUTSIDE.search(line)]
    assert found == []


def test_sources_are_found() -> None:
    assert len(SOURCES) > 60 and all(p.is_file() for p in SOURCES)


def test_a_read_beside_the_repository_is_recorded() -> None:
    beside = REPO.parent / f"{REPO.name}-shared-for-a-test" / "model.onnx"
    with pytest.raises(FileNotFoundError):
        beside.read_bytes()
    assert outside_reads.take() == [str(beside)]  # taken: the check after this test sees nothing


def test_an_unnamed_temporary_file_is_no_read_outside() -> None:
    with tempfile.TemporaryFile() as f:  # opens the temporary folder itself (O_TMPFILE)
        f.write(b"x")
    assert outside_reads.take() == []


def test_what_the_tests_may_read(tmp_path: Path) -> None:
    assert not outside_reads.is_outside(str(REPO / ".cache" / "onnxviz-tests"))
    assert not outside_reads.is_outside(str(tmp_path))
    assert not outside_reads.is_outside(str(Path(pytest.__file__).parent))
    assert outside_reads.is_outside(str(REPO.parent / "shared" / "bench"))
    assert outside_reads.is_outside("/no-such-top-folder/shared/onnx-node-tests")
