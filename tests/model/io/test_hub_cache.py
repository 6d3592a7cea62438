"""Models in a Hugging Face hub cache: snapshot files are links into the repository's ``blobs`` folder.

The links are followed into that folder only; every other link that leaves the model's folder is
still refused (see :func:`onnxviz.model.io.external.hub_blobs`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import REPO
from onnx import TensorProto, helper

from onnxviz.model.document import Document
from onnxviz.model.graph.tensors import tensor_array
from onnxviz.model.io.external import hub_blobs

WEIGHTS = np.arange(4, dtype=np.float32)


def _model(location: str) -> onnx.ModelProto:
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("offset", "0"), ("length", str(WEIGHTS.nbytes))):
        w.external_data.add(key=key, value=value)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _blob(repository: Path, name: str, data: bytes) -> Path:
    blob = repository / "blobs" / name
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    return blob


def _link(link: Path, target: Path) -> None:
    """A relative link, as huggingface_hub makes them (``../../blobs/<hash>``)."""
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))


def hub_model(cache: Path, repository: str = "models--org--name", subfolder: str = "",
              data_target: Path | None = None) -> Path:
    """``<cache>/<repository>/snapshots/<rev>/[subfolder/]model.onnx`` and its data file, both links into
    the repository's blobs (the data file's link to ``data_target`` instead when given)."""
    repo = cache / repository
    snapshot = repo / "snapshots" / "0123abcd" / subfolder
    model = _blob(repo, "5f1e0c", _model("model.onnx_data").SerializeToString())
    _link(snapshot / "model.onnx", model)
    _link(snapshot / "model.onnx_data", data_target or _blob(repo, "9a7b3d", WEIGHTS.tobytes()))
    return snapshot / "model.onnx"


def _weights(path: Path) -> np.ndarray:
    doc = Document.open(path)
    assert doc.load_problems == []
    return tensor_array(doc.model.graph.initializer[0], doc.base_dir)


@pytest.mark.parametrize("subfolder", ["", "onnx"])
def test_a_hub_snapshot_opens_with_its_weights(tmp_path: Path, subfolder: str) -> None:
    path = hub_model(tmp_path / "hub", subfolder=subfolder)
    assert path.is_symlink()  # the .onnx itself is a link: its data file is found beside the link
    assert np.array_equal(_weights(path), WEIGHTS)


def test_a_hub_cache_reached_through_a_link_opens_too(tmp_path: Path) -> None:
    path = hub_model(tmp_path / "disk" / "hub")
    (tmp_path / "home").symlink_to(tmp_path / "disk")  # ~/.cache/huggingface -> /data/...
    linked = tmp_path / "home" / path.relative_to(tmp_path / "disk")
    assert np.array_equal(_weights(linked), WEIGHTS)


def test_check_reads_a_hub_snapshot_as_valid(tmp_path: Path) -> None:
    path = hub_model(tmp_path / "hub")
    out = subprocess.run([sys.executable, "-m", "onnxviz", "check", str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "outside" not in out.stdout and out.stdout.strip().endswith("model.onnx: valid")


def _refused(path: Path) -> None:
    doc = Document.open(path)
    assert [p.message for p in doc.load_problems] == \
        ["tensor 'w' file 'model.onnx_data' is a link that leads outside the model's folder; refused."]


def test_a_blob_linking_out_of_the_cache_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.bin"
    secret.write_bytes(WEIGHTS.tobytes())
    blob = tmp_path / "hub" / "models--org--name" / "blobs" / "9a7b3d"
    _link(blob, secret)
    _refused(hub_model(tmp_path / "hub", data_target=blob))


def test_a_blobs_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "9a7b3d").write_bytes(WEIGHTS.tobytes())
    repo = tmp_path / "hub" / "models--org--name"
    repo.mkdir(parents=True)
    (repo / "blobs").symlink_to(elsewhere)
    _refused(hub_model(tmp_path / "hub", data_target=repo / "blobs" / "9a7b3d"))


def test_a_blob_of_another_repository_is_refused(tmp_path: Path) -> None:
    other = _blob(tmp_path / "hub" / "models--other--repo", "9a7b3d", WEIGHTS.tobytes())
    _refused(hub_model(tmp_path / "hub", data_target=other))


@pytest.mark.parametrize("where", ["refs/main", "blobs/nested/9a7b3d", "snapshots/fedcba98/model.onnx_data"])
def test_links_to_anything_but_a_blob_of_the_repository_are_refused(tmp_path: Path, where: str) -> None:
    target = tmp_path / "hub" / "models--org--name" / where
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(WEIGHTS.tobytes())
    _refused(hub_model(tmp_path / "hub", data_target=target))


@pytest.mark.parametrize("repository", ["org--name", "snapshots", "models--org--name/snapshots/0123abcd/x"])
def test_a_look_alike_folder_is_not_a_hub_repository(tmp_path: Path, repository: str) -> None:
    """A snapshots folder in a folder not named like a hub repository follows the general rule."""
    _refused(hub_model(tmp_path / "hub", repository=repository))


def test_hub_blobs_names_the_repository_of_a_snapshot(tmp_path: Path) -> None:
    repo = tmp_path / "models--org--name"
    assert hub_blobs(repo / "snapshots" / "abc" / "onnx") == repo / "blobs"
    assert hub_blobs(repo / "snapshots") is None
    assert hub_blobs(repo / "blobs") is None
