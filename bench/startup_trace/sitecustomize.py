"""Imported by every Python process that ``bench/bench_startup.py`` starts (its folder is put first on
PYTHONPATH): each process appends ``pid role event seconds`` lines to the file named by ONNXVIZ_TRACE, for
the interpreter's start, the heavy imports, the worker jobs and, in the window's process, its steps."""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import time
from typing import Any

_FILE = os.environ.get("ONNXVIZ_TRACE")
_ROLE = "worker" if "--multiprocessing-fork" in sys.argv else "main"
WATCHED = ("numpy", "onnx", "google.protobuf", "PySide6.QtCore", "PySide6.QtWidgets", "onnxruntime",
           "onnxviz.model.document", "onnxviz.model.background.jobs", "onnxviz.ui.main_window", "onnxviz.ui.app")


def event(name: str) -> None:
    if _FILE:
        with open(_FILE, "a") as f:
            f.write(f"{os.getpid()} {_ROLE} {name} cpu={time.process_time() * 1000:.0f} {time.time():.6f}\n")


def _wrap_jobs(module: Any) -> None:
    if _ROLE != "worker":  # the caller pickles these functions by name: left as they are there
        return
    _wrap_job_functions(module)


def _forked() -> None:
    """In a worker forked from the window's process: its jobs are traced too."""
    global _ROLE
    _ROLE = "worker"
    for name in ("onnxviz.model.background.jobs", "onnxviz.model.background.procpool"):
        if name in sys.modules:
            _wrap_job_functions(sys.modules[name])


def _wrap_job_functions(module: Any) -> None:
    for name in dir(module):
        function = getattr(module, name)
        if (name.endswith("_job") or name == "preloaded") and callable(function):
            setattr(module, name, _traced(name, function))


def _traced(name: str, function: Any) -> Any:
    def traced(*args: Any, **kwargs: Any) -> Any:
        event(f"{name}>")
        try:
            return function(*args, **kwargs)
        finally:
            event(f"{name}<")
    return traced


def _hook_window(module: Any) -> None:
    window_class = module.MainWindow
    init = window_class.__init__

    def traced_init(self: Any, *args: Any, **kwargs: Any) -> None:
        event("window>")
        init(self, *args, **kwargs)
        event("window<")
        self.loading_finished.connect(lambda: event("loaded"))
        self.canvas.scene_ready.connect(lambda: event("drawn"))
        self.validation.first_found.connect(lambda *_: event("first_problems"))
        self.validation.finished.connect(lambda *_: event("validated"))
        self.validation.runtime_checked.connect(lambda *_: event("runtime_checked"))
        grab = self.grab

        def traced_grab(*a: Any) -> Any:
            event("grab>")
            picture = grab(*a)
            event("grab<")
            return picture
        self.grab = traced_grab

    window_class.__init__ = traced_init


def _hook_screenshot(module: Any) -> None:
    shoot = module.screenshot_and_quit

    def traced_shoot(*args: Any, **kwargs: Any) -> int:
        code: int = shoot(*args, **kwargs)
        event("saved")
        return code
    module.screenshot_and_quit = traced_shoot


AFTER = {"onnxviz.model.background.jobs": _wrap_jobs, "onnxviz.model.background.procpool": _wrap_jobs,
         "onnxviz.ui.main_window": _hook_window, "onnxviz.ui.screenshot": _hook_screenshot}


class _Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in WATCHED and name not in AFTER:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            event(f"import {name}>")
            execute(module)
            event(f"import {name}<")
            if name in AFTER:
                AFTER[name](module)
        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _cpu() -> None:
    import resource
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    event(f"cpu self={me.ru_utime + me.ru_stime:.3f} children={children.ru_utime + children.ru_stime:.3f}")


if _FILE:
    event("site")
    os.register_at_fork(before=lambda: event("fork") if _ROLE == "main" else None, after_in_child=_forked)
    if _ROLE == "main":
        import atexit
        atexit.register(_cpu)
    sys.meta_path.insert(0, _Watch())
