"""The window starts without what only some views need: pyqtgraph comes with the first plot shown,
onnxruntime and the reference evaluator with a run (the analysis uses them in worker processes), the diff's
controller and the matcher with the first diff or comparison with another model, the run's controller and the
runner with the first use of the Run feature.
The canvas draws its far-away batches with its own numpy -> QPainter calls (canvas/batch.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from pytestqt.qtbot import QtBot

from onnxviz.ui.canvas.batch import draw_lines, draw_rects

LATE = ("pyqtgraph", "onnxruntime", "onnx.reference", "scipy", "matplotlib", "onnxviz.model.matching",
        "onnxviz.ui.diff.controller", "onnxviz.model.runner", "onnxviz.ui.run.controller",
        "onnxviz.model.editing.editor", "onnxviz.model.editing.finder", "onnxviz.model.editing.palette",
        "onnxviz.model.io.saving", "onnxviz.model.io.streaming", "onnxviz.ui.saving")

_CHILD = """
import sys
from onnxviz.ui.settings import use_settings_dir
use_settings_dir(sys.argv[1])
{action}
late = sorted({{m.split('.')[0] if m.startswith('pyqtgraph') else m for m in sys.modules
               if m.startswith({late!r})}})
print('LATE', ' '.join(late))
"""


def _late_modules(tmp_path: Path, action: str) -> list[str]:
    code = _CHILD.format(action=action, late=LATE)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "settings")], capture_output=True,
                            text=True, cwd=REPO, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("LATE"))
    return line.split()[1:]


def test_importing_the_window_leaves_plots_and_runtimes_out(tmp_path: Path) -> None:
    assert _late_modules(tmp_path, "import onnxviz.ui.main_window") == []


def test_the_worker_processes_are_forks_made_after_the_model_imports_before_qt_and_threads(tmp_path: Path) -> None:
    """``onnxviz FILE`` forks its worker processes once it has imported onnx, numpy and the jobs' module (a
    spawned worker took ~0.3 s of CPU to import them again), before it imports Qt or starts a thread."""
    code = ("import os, sys, threading\n"
            "from onnxviz.model.background import procpool\n"
            "fork = procpool.fork_workers\n"
            "def checked(roles):\n"
            "    ready = all(m in sys.modules for m in ('onnx', 'numpy', procpool.JOBS_MODULE))\n"
            "    print('BEFORE', ready, 'PySide6' in sys.modules, threading.active_count())\n"
            "    forked = fork(roles)\n"
            "    own = open('/proc/self/cmdline', 'rb').read()\n"
            "    pids = [pid for role in roles for pid in procpool.shared_worker(role).pids]\n"
            "    copies = [open(f'/proc/{pid}/cmdline', 'rb').read() == own for pid in pids]\n"
            "    print('FORKED', forked, len(pids), all(copies))\n"
            "    return forked\n"
            "procpool.fork_workers = checked\n"
            "from onnxviz.cli import main\n"
            f"main([{str(REPO / 'resources' / 'examples' / 'example.onnx')!r}, '--screenshot', 'shot.png'])\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["BEFORE", "True", "False", "1", "FORKED", "True", "3", "True"]
    assert (tmp_path / "shot.png").stat().st_size > 0


def test_a_model_is_shown_and_analysed_without_them(tmp_path: Path) -> None:
    """The whole of ``onnxviz FILE --screenshot``: drawn, checked, inferred, the Model panel's figures."""
    shot = tmp_path / "shot.png"
    action = (f"from onnxviz.cli import main\n"
              f"assert main([{str(REPO / 'resources' / 'examples' / 'example.onnx')!r}, '--screenshot', "
              f"{str(shot)!r}]) == 0")
    assert _late_modules(tmp_path, action) == []
    assert shot.stat().st_size > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batches_draw_every_rectangle_and_line(dtype: type) -> None:
    image = QImage(60, 60, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    p = QPainter(image)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("red"))
    rects = np.array([[5, 5, 10, 10, 0], [30, 30, 5, 5, 0]], dtype)[:, :4]   # not contiguous: copied
    draw_rects(p, rects)
    draw_rects(p, np.zeros((0, 4)))   # nothing to draw: no call with a null pointer
    p.setPen(QPen(QColor("blue"), 1))
    draw_lines(p, np.array([[0, 50, 59, 50]], dtype))
    p.end()
    colour = {(x, y): image.pixelColor(x, y).name() for x, y in ((10, 10), (32, 32), (20, 20), (40, 50))}
    assert colour == {(10, 10): "#ff0000", (32, 32): "#ff0000", (20, 20): "#ffffff", (40, 50): "#0000ff"}


def test_the_values_view_makes_its_pictures_once_shown(qtbot: QtBot) -> None:
    """A/B values: nothing made while hidden; after the first show the three heatmaps and the
    histograms come one per turn of the event loop; a pair shown before then makes the rest at once."""
    from onnxviz.model.runner.compare import ValueDiff, measure_arrays
    from onnxviz.ui.widgets.pair_view import ValuesView

    waiting, early = ValuesView(), ValuesView()
    for view in (waiting, early):
        qtbot.addWidget(view)
        assert view.maps == [] and view.histogram is None
        view.show()
    a = np.arange(12.0).reshape(3, 4)
    m = measure_arrays(a, a + 1)
    early.show_pair(a, a + 1, ValueDiff("x", 0, 0, m.max_abs, m.max_rel, m.cosine, sqnr_db=m.sqnr_db))
    assert len(early.maps) == 3 and all(m.values is not None for m in early.maps)
    qtbot.waitUntil(lambda: waiting.histogram is not None, timeout=10000)
    assert len(waiting.maps) == 3 and [c.text() for c in waiting.captions] == ["A", "B", "B \u2212 A"]


def test_a_worker_preloads_its_jobs_module_with_the_collector_off_then_on_again() -> None:
    """A worker imports the jobs' module as it starts, with no cycle collection (its modules live as long as
    it does): in a fresh process, the module is there, nothing is left for collections to walk, and the
    collector is on again."""
    code = ("import gc\n"
            "from onnxviz.model.background.procpool import JOBS_MODULE, preloaded\n"
            "preloaded(JOBS_MODULE)\n"
            "import sys\n"
            "print(JOBS_MODULE in sys.modules, gc.isenabled(), gc.get_freeze_count() > 10_000)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True"]


def test_the_window_imports_the_model_layer_before_qt(tmp_path: Path) -> None:
    """PySide6 reads the source of every module imported after it (~0.05 s for the model layer, onnx and numpy):
    the window's start imports the model's modules first, each of them one the window uses."""
    code = ("import sys\n"
            "from onnxviz.cli import gui\n"
            "class QtComes:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'PySide6':\n"
            "            print('BEFORE_QT', all(m in sys.modules for m in (*gui.MODEL_FIRST, 'onnx', 'numpy')))\n"
            "            raise SystemExit(0)\n"
            "sys.meta_path.insert(0, QtComes())\n"
            "gui.run(gui.argparse.Namespace(file=None, screenshot='x.png', example=False, size='10x10'))\n")
    uses = ("import sys\n"
            "import onnxviz.ui.app, onnxviz.ui.main_window\n"
            "from onnxviz.cli.gui import MODEL_FIRST\n"
            "print('USED', all(m in sys.modules for m in MODEL_FIRST))\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    for script, expected in ((code, ["BEFORE_QT", "True"]), (uses, ["USED", "True"])):
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                                timeout=120, env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == expected


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the workers are forked on Linux (/proc)")
def test_the_workers_are_forked_with_their_modules_and_numpy_has_one_blas_thread(tmp_path: Path) -> None:
    """``onnxviz FILE`` forks its worker processes as soon as the modules they run are imported, before the window's
    other model modules (they start analysing the file that much earlier); numpy came with one BLAS thread (no
    thread spinning beside the start-up for work that never comes), a value the user set being kept."""
    code = ("import os, sys, threading\n"
            "from onnxviz.model.background import procpool\n"
            "fork = procpool.fork_workers\n"
            "def forked(roles):\n"
            "    print('FORKED', 'onnxviz.model.background.jobs' in sys.modules,\n"
            "          'onnxviz.model.document' in sys.modules, threading.active_count(), flush=True)\n"
            "    return fork(roles)\n"
            "procpool.fork_workers = forked\n"
            "class QtComes:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'PySide6':\n"
            "            print('BLAS', os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')) - \n"
            "                  threading.active_count(), flush=True)\n"
            "            os._exit(0)\n"
            "sys.meta_path.insert(0, QtComes())\n"
            "from onnxviz.cli import gui\n"
            f"gui.run(gui.argparse.Namespace(file={str(REPO / 'resources' / 'examples' / 'example.onnx')!r}, "
            "screenshot='x.png', example=False, size='10x10'))\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    for given, expected in ((None, "1"), ("2", "2")):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                                timeout=120, env={**env, "QT_QPA_PLATFORM": "offscreen"}
                                | ({"OPENBLAS_NUM_THREADS": given} if given else {}))
        assert result.returncode == 0, result.stderr
        [fork_line, blas_line] = result.stdout.splitlines()
        assert fork_line.split() == ["FORKED", "True", "False", "1"]
        label, threads, native_threads = blas_line.split()
        assert (label, threads) == ("BLAS", expected)
        if given is None:
            assert native_threads == "0"  # no thread of OpenBLAS's own: only Python's threads run


def test_the_command_ends_with_its_picture_and_leaves_no_process(tmp_path: Path) -> None:
    """``onnxviz FILE --screenshot`` ends as soon as the picture is saved (its worker processes killed once the
    window is grabbed, before the picture is written, and reaped before the end); the scripted grab leaves the
    user's recent files as they were."""
    shot, settings = tmp_path / "shot.png", tmp_path / "settings"
    code = ("import os, sys\n"
            "from onnxviz.cli import gui\n"
            "kill = gui.kill_shared_workers\n"
            "def killed():\n"
            f"    print('KILLED', os.path.exists({str(shot)!r}), flush=True)\n"
            "    return kill()\n"
            "gui.kill_shared_workers = killed\n"
            "from onnxviz.model.background import procpool\n"
            "fork = procpool.fork_workers\n"
            "def forked(roles):\n"
            "    done = fork(roles)\n"
            "    print('WORKERS', *[pid for role in roles for pid in procpool.shared_worker(role).pids], flush=True)\n"
            "    return done\n"
            "procpool.fork_workers = forked\n"
            "import atexit\n"
            "atexit.register(lambda: print('INTERPRETER ENDED'))\n"
            "from onnxviz.cli import main\n"
            f"sys.argv = ['onnxviz', {str(REPO / 'resources' / 'examples' / 'example.onnx')!r}, '--screenshot', "
            f"{str(shot)!r}]\n"
            "main()\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(settings)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            env=env)
    assert result.returncode == 0, result.stderr
    line, killed = result.stdout.splitlines()  # the interpreter's end never came
    assert killed == "KILLED False"
    label, *pids = line.split()
    assert label == "WORKERS" and len(pids) == 3
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)  # reaped: not even zombies
    assert shot.stat().st_size > 0
    from PySide6.QtCore import QSettings

    written = QSettings(str(settings / "onnxviz" / "onnxviz.ini"), QSettings.Format.IniFormat)
    assert written.value("recent/files") is None


STARTUP_MODULES = REPO / "tests" / "data" / "startup_modules.txt"
_IMPORTED = """
import sys
from onnxviz.cli import main
assert main([sys.argv[1], '--screenshot', sys.argv[2]]) == 0
print('MODULES', *sorted(sys.modules))
"""


def startup_modules(folder: Path) -> set[str]:
    """Every module the window's process holds once ``onnxviz FILE --screenshot`` has drawn, checked and summed
    up the example model (settings of its own in ``folder``)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(folder)}
    example = REPO / "resources" / "examples" / "example.onnx"
    result = subprocess.run([sys.executable, "-c", _IMPORTED, str(example), str(folder / "shot.png")],
                            capture_output=True, text=True, cwd=folder, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("MODULES "))
    return set(line.split()[1:])


def test_the_first_frame_imports_no_more_than_it_did(tmp_path: Path) -> None:
    """The window's start imports only the modules listed in tests/data/startup_modules.txt (its own, Python's and
    the libraries'): each module more is start-up time every user pays (PySide6 also reads the source of each one
    imported after it). Import it where it is used; if the first frame needs it, add it to the list
    (``python tests/ui/test_startup_imports.py`` writes the list anew)."""
    listed = set(STARTUP_MODULES.read_text().split())
    grown = sorted(m for m in startup_modules(tmp_path) - listed if not m.startswith("encodings."))  # the locale's
    assert grown == [], f"the window's start now imports {len(grown)} more modules: {', '.join(grown[:40])}"


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        STARTUP_MODULES.write_text("\n".join(sorted(startup_modules(Path(scratch)))) + "\n")
    print(f"wrote {STARTUP_MODULES}")


def test_a_forked_worker_holds_none_of_the_other_workers_pipes(tmp_path: Path) -> None:
    """The second worker is forked once the first one's pipes exist: it closes its copies of them (a copy of the
    first one's results pipe would keep it open should the first die mid-result, and the window would wait)."""
    code = ("import os\n"
            "from onnxviz.model.background import procpool\n"
            "assert procpool.fork_workers(('a', 'b'))\n"
            "a, b = procpool.shared_worker('a'), procpool.shared_worker('b')\n"
            "for worker in (a, b):\n"
            "    worker.run(os.getpid)  # its start (closing what it inherited) is done before a job\n"
            "results = os.fstat(a._executor._result_queue._writer.fileno()).st_ino\n"
            "def pipes(pid):\n"
            "    links = (os.readlink(f'/proc/{pid}/fd/{fd}') for fd in os.listdir(f'/proc/{pid}/fd'))\n"
            "    return {link for link in links if link.startswith('pipe:')}\n"
            "mine = f'pipe:[{results}]'\n"
            "print('FIRST', mine in pipes(a.pids[0]), 'SECOND', mine in pipes(b.pids[0]))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["FIRST", "True", "SECOND", "False"]


def test_the_tooltip_guard_comes_once_the_window_is_built_before_it_is_shown(tmp_path: Path) -> None:
    """The guard sees every event of the application (building the window sends ~5,500): ``onnxviz FILE`` installs
    it once the window is built, and it is there before the window can be shown, so before any tooltip."""
    code = ("import sys\n"
            "from PySide6.QtCore import QObject\n"
            "from PySide6.QtWidgets import QApplication\n"
            "from onnxviz.ui import main_window\n"
            "from onnxviz.ui.widgets.tooltips import GUARD_NAME\n"
            "def guarded():\n"
            "    return QApplication.instance().findChild(QObject, GUARD_NAME) is not None\n"
            "init, show = main_window.MainWindow.__init__, main_window.MainWindow.show\n"
            "def built(self, *args):\n"
            "    print('BUILDING', guarded())\n"
            "    init(self, *args)\n"
            "def shown(self):\n"
            "    print('SHOWN', guarded())\n"
            "    show(self)\n"
            "main_window.MainWindow.__init__, main_window.MainWindow.show = built, shown\n"
            "from onnxviz.cli import main\n"
            f"assert main([{str(REPO / 'resources' / 'examples' / 'example.onnx')!r}, '--screenshot', 'shot.png']) == 0\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "settings")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["BUILDING", "False", "SHOWN", "True"]
