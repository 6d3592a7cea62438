"""onnxviz.show(): a window in a process of its own (offscreen here), driven from this interpreter: it shows
the model, update() changes it keeping the view, inputs run, big models go through files, and a notebook's
kernel gets its prompt back at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import EXAMPLE, REPO
from onnx import TensorProto, helper, numpy_helper

import onnxviz
from onnxviz.api import models as api_models
from onnxviz.api.show import ModelWindow

TIMEOUT = 120.0


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[ModelWindow]]:
    """The windows a test opens (their settings and logs in the test's folder), closed after it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    opened: list[ModelWindow] = []
    update = ModelWindow.update

    def recording(self: ModelWindow, *args: object, **kwargs: object) -> None:
        if self not in opened:
            opened.append(self)
        update(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ModelWindow, "update", recording)
    yield opened
    for window in opened:
        if not window.close(20):
            os.kill(window.pid, 9)
            window.wait(20)


def chain(n: int, name: str = "chain") -> onnx.ModelProto:
    """x -> n Relu/Neg nodes -> y, each named."""
    nodes = [helper.make_node("Relu" if i % 2 == 0 else "Neg", [f"v{i}"], [f"v{i + 1}"], name=f"n{i}")
             for i in range(n)]
    nodes[0].input[0], nodes[-1].output[0] = "x", "y"
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_a_screenshot_that_cannot_be_written_is_one_sentence_and_leaves_nothing(windows: list[ModelWindow],
                                                                                tmp_path: Path) -> None:
    """show()'s screenshot goes through the checked writer, as --screenshot does: a place it cannot write is
    the checked writer's sentence (was Qt's save, unchecked: 'could not be written (a .png in a folder that
    exists?)' for any failure), and no part of a picture is left."""
    window = onnxviz.show(chain(3))
    window.wait_shown(TIMEOUT)
    with pytest.raises(onnxviz.OnnxvizError, match=r"^could not write s\.png: its folder does not exist\.$"):
        window.screenshot(tmp_path / "missing" / "s.png")
    (tmp_path / "here").mkdir()
    assert window.screenshot(tmp_path / "here" / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert os.listdir(tmp_path / "here") == ["s.png"]


def test_show_returns_at_once_and_update_changes_the_window(windows: list[ModelWindow], tmp_path: Path) -> None:
    window = onnxviz.show(chain(3))
    # returned while the window's process was still starting (importing Qt takes it a second): drawn later
    assert window.is_open and window._events == {}
    shown = window.wait_shown(TIMEOUT)
    assert shown == onnxviz.Shown("chain.onnx", 3)
    first = window.screenshot(tmp_path / "first.png")
    window.update(chain(5))
    assert window.wait_shown(TIMEOUT) == onnxviz.Shown("chain.onnx", 5)
    second = window.screenshot(tmp_path / "second.png")
    assert first.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and first.read_bytes() != second.read_bytes()
    window.update(EXAMPLE)  # a path: the user's own file
    assert window.wait_shown(TIMEOUT) == onnxviz.Shown("example.onnx", 24)
    folder = window._folder
    assert window.close(TIMEOUT) and not window.is_open
    assert not folder.exists()  # the hand-over files went with the window
    with pytest.raises(onnxviz.OnnxvizError, match="the window was closed"):
        window.update(chain(2))


def test_each_kind_of_model_is_shown(windows: list[ModelWindow]) -> None:
    import onnx_ir

    class Program:
        """What torch's ONNXProgram offers: model_proto (and no onnx_ir model here)."""

        def __init__(self, proto: onnx.ModelProto) -> None:
            self.model_proto = proto

    window = onnxviz.show(onnx_ir.from_proto(chain(4, "from_ir")))
    assert window.wait_shown(TIMEOUT) == onnxviz.Shown("from_ir.onnx", 4)
    window.update(Program(chain(6, "exported")))
    assert window.wait_shown(TIMEOUT) == onnxviz.Shown("exported.onnx", 6)
    window.update(chain(2).SerializeToString(), name="bytes.onnx")
    assert window.wait_shown(TIMEOUT) == onnxviz.Shown("bytes.onnx", 2)
    with pytest.raises(onnxviz.OnnxvizError, match="a int is not a model"):
        window.update(42)


def test_inputs_run_in_the_window(windows: list[ModelWindow], tmp_path: Path) -> None:
    x = np.array([[1.0, -2.0, 3.0, -4.0], [0.5, 0.0, -0.5, 2.0]], np.float32)
    window = onnxviz.show(chain(3), inputs={"x": x})
    assert window.wait_shown(TIMEOUT).nodes == 3
    window.wait_run(TIMEOUT)
    window.screenshot(tmp_path / "ran.png")
    window.update(chain(3), inputs={"nope": x})
    with pytest.raises(onnxviz.OnnxvizError, match="no input named 'nope'"):
        window.wait_run(TIMEOUT)


def test_a_big_model_goes_through_a_file_with_its_weights_beside_it(windows: list[ModelWindow],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond INLINE_MAX (1 GiB; 4 KB here) the weights go to a data file; the caller's model is untouched
    and no model passes through the pipe (the request names a file)."""
    monkeypatch.setattr(api_models, "INLINE_MAX", 4096)
    weight = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(1024, 4), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "big",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    before = model.SerializeToString()
    sent: list[dict[str, object]] = []
    send = ModelWindow._send

    def spying(self: ModelWindow, message: dict[str, object]) -> None:
        sent.append(message)
        send(self, message)

    monkeypatch.setattr(ModelWindow, "_send", spying)
    window = onnxviz.show(model)
    assert window.wait_shown(TIMEOUT) == onnxviz.Shown("big.onnx", 1)
    assert model.SerializeToString() == before
    handed = Path(str(sent[0]["path"]))
    assert handed.name == "big.onnx" and (handed.parent / "big.onnx.data").stat().st_size == 4096 * 4
    assert handed.stat().st_size < 4096 and len(json.dumps(sent[0])) < 1000


def test_a_file_that_cannot_be_opened_is_one_sentence(windows: list[ModelWindow], tmp_path: Path) -> None:
    (tmp_path / "cut.onnx").write_bytes(EXAMPLE.read_bytes()[:100])
    window = onnxviz.show(tmp_path / "cut.onnx")
    with pytest.raises(onnxviz.OnnxvizError) as caught:
        window.wait_shown(TIMEOUT)
    assert "cut.onnx" in caught.value.message and "\n" not in caught.value.message
    window.update(EXAMPLE)  # the window is still there for the next one
    assert window.wait_shown(TIMEOUT).nodes == 24


def test_without_a_display_show_says_so_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the display check is Linux's (X11 or Wayland)")
    for name in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    before = set(Path(tempfile.gettempdir()).glob("onnxviz-show-*"))
    with pytest.raises(onnxviz.OnnxvizError, match="no display available"):
        onnxviz.show(chain(2))
    assert set(Path(tempfile.gettempdir()).glob("onnxviz-show-*")) <= before  # no hand-over folder left


def test_block_waits_until_the_window_is_closed(windows: list[ModelWindow]) -> None:
    returned: list[ModelWindow] = []
    caller = threading.Thread(target=lambda: returned.append(onnxviz.show(chain(2), block=True)))
    caller.start()
    while not windows:  # the handle exists once show() hands the model over
        caller.join(0.05)
    windows[0].wait_shown(TIMEOUT)
    assert caller.is_alive() and not returned  # still blocked while the window is open
    assert windows[0].close(TIMEOUT)
    caller.join(TIMEOUT)
    assert returned == windows and not returned[0].is_open


def test_the_caller_never_imports_qt(tmp_path: Path) -> None:
    script = f"""
        import sys, onnx, onnxviz
        window = onnxviz.show(onnx.load({str(EXAMPLE)!r}))
        shown = window.wait_shown({TIMEOUT})
        print(shown.nodes, any(m.startswith(("PySide6", "shiboken6")) for m in sys.modules), window.close())
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["24", "False", "True"]


JUPYTER = """
    import json, sys, time
    from jupyter_client.manager import start_new_kernel
    manager, client = start_new_kernel(kernel_name="python3")  # the kernel inherits this environment
    def run(code):
        started = time.monotonic()
        reply = client.execute_interactive(code, timeout=300, output_hook=lambda m: out.append(m))
        return reply["content"]["status"], time.monotonic() - started
    out = []
    try:
        first, _ = run("import onnxviz, onnx\\nmodel = onnx.load({model!r})")
        shown, took = run("window = onnxviz.show(model)\\nprint(window.is_open)")
        waited, _ = run("print(window.wait_shown(120).nodes)")
        closed, _ = run("print(window.close(30))")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    texts = [m["content"].get("text", "") for m in out if m["msg_type"] == "stream"]
    print(json.dumps({{"statuses": [first, shown, waited, closed], "took": took, "texts": texts}}))
"""


def test_show_from_a_jupyter_kernel(tmp_path: Path) -> None:
    """In a notebook the cell that calls show() ends (the kernel is idle again) while the window runs."""
    pytest.importorskip("ipykernel", reason="the notebook machinery (ipykernel, jupyter_client) is not installed")
    pytest.importorskip("jupyter_client", reason="the notebook machinery is not installed")
    script = textwrap.dedent(JUPYTER.format(model=str(EXAMPLE)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path, env=_env(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["statuses"] == ["ok"] * 4, report
    assert "".join(report["texts"]).split() == ["True", "24", "True"], report


def _env(tmp_path: Path) -> dict[str, str]:
    """A child's environment: offscreen, settings and notebook state in ``tmp_path``, this checkout first."""
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),
            "JUPYTER_DATA_DIR": str(tmp_path / "jupyter-data"), "IPYTHONDIR": str(tmp_path / "ipython"),
            "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}


def test_a_killed_windows_files_go_with_the_next_show(windows: list[ModelWindow]) -> None:
    first = onnxviz.show(chain(2))
    first.wait_shown(TIMEOUT)
    folder = first._folder
    assert (folder / "window.pid").read_text() == str(first.pid)
    os.kill(first.pid, 9)  # no chance to clean up
    first._process.wait(TIMEOUT)  # (not first.wait(), which removes the folder of a window it saw end)
    assert folder.exists()
    second = onnxviz.show(chain(3))
    assert not folder.exists() and second._folder.exists()
    assert second.wait_shown(TIMEOUT).nodes == 3
