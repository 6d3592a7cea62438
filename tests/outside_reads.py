"""Watches what the test process opens and lists: the repository (its cache folder included), temporary
folders, the Python installation and system folders are fine; anything else is recorded, so a test that
reads data from a folder beside the repository or from the user's home fails on every machine,
not only on those without it. conftest.py installs the watch and checks the record after each test.
Child processes (CLI runs, workers) are not watched; test_self_contained.py greps the sources for them.
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SYSTEM = ("/usr", "/etc", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/opt", "/var", "/run", "/dev", "/proc",
          "/sys", "/snap", "/nix")
WATCHED = frozenset({"open", "os.listdir", "os.scandir"})
seen: list[str] = []  # what was read outside, in order; the checker empties it


def _real(path: str | Path) -> str:
    return os.path.realpath(path)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _allowed_roots() -> tuple[str, ...]:
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages(),
              site.getusersitepackages(), *sysconfig.get_paths().values()}
    roots = {_real(p) for p in (tempfile.gettempdir(), *python)}
    repo = str(REPO)
    return tuple(roots | {_real(s) for s in SYSTEM if not _under(repo, _real(s))})


ALLOWED = _allowed_roots()
NEAR = tuple(r for r in ALLOWED if _under(r, str(REPO.parent)))  # e.g. a venv beside the repository


@functools.cache
def is_outside(folder: str) -> bool:
    """Whether reading in FOLDER (absolute) reads outside what the tests may read."""
    real = _real(folder)
    if _under(real, str(REPO)) or any(_under(real, r) for r in NEAR):
        return False
    if _under(real, str(REPO.parent)):
        return True  # beside the repository, such as a data folder next to the checkout
    return not any(_under(real, r) for r in ALLOWED)


def _path_of(event: str, args: tuple[Any, ...]) -> str | None:
    target = args[0] if args else None
    if target is None or isinstance(target, int):  # the current folder or a file descriptor
        return None
    path = os.path.abspath(os.fsdecode(target))
    if event != "open" and path in {os.path.abspath(p or ".") for p in sys.path}:
        return None  # the import system lists every folder on sys.path
    return path


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event not in WATCHED:
        return
    path = _path_of(event, args)
    if path is None or not is_outside(path if event != "open" else os.path.dirname(path)):
        return
    if event != "open" or is_outside(path):  # a folder opened itself: an unnamed temporary file in /tmp
        seen.append(path)


def install() -> None:
    """Start watching (for the rest of the process: audit hooks cannot be removed)."""
    sys.addaudithook(_hook)


def take() -> list[str]:
    """What was read outside since the last call."""
    found = list(seen)
    del seen[: len(found)]
    return found
