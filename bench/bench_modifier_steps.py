"""What each of onnx-modifier's edits takes in the window, next to what it takes in onnx-modifier.

    python bench/bench_modifier_steps.py [--tasks delete_node,insert_on_edge,...]

Every task of ``tests/modifier_tasks.py`` runs in a shown window (offscreen unless a display is set) on a fresh
copy of bench/synth.py's 2-layer model, driven by its own controls; the dialogs opened, keys pressed and clicks it
took are printed beside onnx-modifier's, counted from that tool's web page along its cheapest path to the same
model (the paths are printed too, and described in tests/modifier_tasks.py). Saving is not counted: Ctrl+S here,
Download there.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


class _Patch:
    """A stand-in for pytest's monkeypatch: the .npy task answers the file dialog with it."""

    def __init__(self) -> None:
        self.undo: list[tuple[Any, str, Any]] = []

    def setattr(self, owner: Any, name: str, value: Any) -> None:
        self.undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def restore(self) -> None:
        for owner, name, value in reversed(self.undo):
            setattr(owner, name, value)


def _wait(app: Any) -> Callable[[Callable[[], bool]], None]:
    import time

    def wait(ok: Callable[[], bool]) -> None:
        end = time.monotonic() + 30
        while not ok():
            if time.monotonic() > end:
                raise TimeoutError("the window did not get there in 30 s")
            app.processEvents()
            time.sleep(0.005)

    return wait


def run(task: str, folder: Path, app: Any) -> Any:
    """The counts of ``task`` done in a new window."""
    from modifier_tasks import SETUP, TASKS, Steps, npy_for, synth2

    from onnxviz.ui.main_window import MainWindow

    wait = _wait(app)
    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    window.open_path(synth2(folder))
    wait(lambda: window.doc is not None and window.canvas.drawable is not None and not window.canvas.busy)
    assert window.doc is not None
    if task in SETUP:
        SETUP[task](window.doc)
    steps = Steps(window, wait)
    patch = _Patch()
    try:
        TASKS[task](steps, *((npy_for(folder), patch) if task == "initializer_from_npy" else ()))
        wait(steps.idle)
    finally:
        patch.restore()
        window.set_document(None)
        window.close()
    return steps.count


def main() -> None:
    from modifier_tasks import MODIFIER, TASKS
    from PySide6.QtWidgets import QApplication

    from onnxviz.ui.settings import use_settings_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        use_settings_dir(Path(tmp) / "settings")
        for task in args.tasks.split(","):
            folder = Path(tmp) / task
            folder.mkdir()
            rows.append((task, run(task, folder, app), *MODIFIER[task]))
    print(f"{'task':28} {'onnxviz: dialogs keys clicks = all':>36}   {'onnx-modifier: dialogs keys clicks = all':>42}")
    for task, ours, theirs, _path in rows:
        print(f"{task:28} {ours.dialogs:>15} {ours.keys:>5} {ours.clicks:>6} = {ours.total:>3}   "
              f"{theirs.dialogs:>21} {theirs.keys:>5} {theirs.clicks:>6} = {theirs.total:>3}"
              + ("   fewer" if ours.total < theirs.total else ""))
    fewer = sum(ours.total < theirs.total for _t, ours, theirs, _p in rows)
    print(f"\nonnxviz takes fewer steps in {fewer} of {len(rows)} tasks; "
          f"all together {sum(r[1].total for r in rows)} against {sum(r[2].total for r in rows)}.")
    print("\nonnx-modifier's paths:")
    for task, _ours, _theirs, path in rows:
        print(f"  {task}: {path}")


if __name__ == "__main__":
    main()
