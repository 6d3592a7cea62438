"""A small model from the command to its saved picture: ``onnxviz FILE --screenshot OUT.png`` as a whole process
(drawn, the checker, shape inference, onnxruntime's check and the Model panel's figures in), against Netron's draw
time in the same rounds, and where the process's time goes.

    python bench/bench_startup.py [--runs 5] [--netron 'COMMAND'] [--against CHECKOUT] [--phases] [FILE ...]

Defaults to light_resnet50 of onnx's test data and the exports of tests/data/exports/. Each round runs onnxviz and
then, with ``--netron``, the command given (its arguments then MODEL OUT.png; it prints "drawn by Netron in X s",
as the team's netron_shot.py does), one after the other. Prints the medians of the rounds, Netron's, their ratio,
and the load average before and after (the machine has 2 cores: the wall times follow the load).

Below each file: the CPU time of its processes (the window's and its workers', medians).

``--against CHECKOUT``: the same command run from another checkout of onnxviz (its folder put first on PYTHONPATH;
compile its bytecode first), alternately with this one's: the medians of both, wall and CPU time with the worker
processes (with ``--phases``, both checkouts' steps side by side).

``--phases``: each process's steps in milliseconds from its start (the median of the rounds) with the window process's
CPU time then: Python's start, onnx imported, the worker processes forked, Qt imported, the window built, the file
loaded, the first problems, validated, onnxruntime's check, the graph drawn, the picture saved, the process ended;
then when each worker job ended, with the CPU that job took (not the window's) (the early analysis: first problems, inference, the
figures' structure and the rest, onnxruntime's check).
They come from ``bench/startup_trace/sitecustomize.py`` (put first on PYTHONPATH), which records them in a file.

The package's bytecode is compiled first, as an installed package has it (see bench_analysis.py).
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

REPO = Path(__file__).resolve().parents[1]
TRACE = Path(__file__).resolve().parent / "startup_trace"
EXPORTS = REPO / "tests" / "data" / "exports"
STEPS = (("site", "python started"), ("import onnx<", "onnx imported"), ("fork", "workers forked"),
         ("window>", "Qt and the window's modules"),
         ("window<", "window built"), ("loaded", "file loaded"), ("first_problems", "first problems"),
         ("validated", "validated"), ("runtime_checked", "onnxruntime's check"), ("drawn", "drawn"),
         ("saved", "picture saved"))


def default_files() -> list[Path]:
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
    return [light, *sorted(EXPORTS.glob("*.onnx"))]


def onnxviz_run(path: Path, folder: Path, phases: bool,
                checkout: Path | None = None) -> tuple[float, float, dict[str, tuple[float, float]]]:
    """(seconds, CPU seconds with its workers, {step: (ms since the start, the window process's CPU ms)}) of one
    whole process, of this checkout's onnxviz or of ``checkout``'s."""
    trace = folder / "trace.txt"
    trace.unlink(missing_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    paths = [str(TRACE)] if phases else []
    paths += [str(checkout)] if checkout is not None else []
    if phases:
        env["ONNXVIZ_TRACE"] = str(trace)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    subprocess.run([sys.executable, "-m", "onnxviz", str(path), "--screenshot", str(folder / "shot.png")],
                   check=True, capture_output=True, env=env, cwd=folder)
    end = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    steps: dict[str, tuple[float, float]] = {}
    main_pid = None
    begun: dict[tuple[str, str], float] = {}  # (worker, job) -> its CPU ms as the job began
    for line in trace.read_text().splitlines() if trace.exists() else []:
        pid, _role, *name, used, at = line.split()
        main_pid = main_pid or pid
        step, ms, cpu_ms = " ".join(name), 1000 * (float(at) - start), float(used.removeprefix("cpu="))
        if pid == main_pid:
            steps.setdefault(step, (ms, cpu_ms))
        elif step.endswith("_job>"):
            begun[pid, step[:-1]] = cpu_ms
        elif step.endswith("_job<") and (pid, step[:-1]) in begun:
            steps.setdefault(f"job {step[:-1]}", (ms, cpu_ms - begun.pop((pid, step[:-1]))))
    steps["end"] = (1000 * (end - start), float("nan"))
    return end - start, cpu, steps


def netron_run(command: list[str], path: Path, folder: Path) -> float:
    out = subprocess.run([*command, str(path), str(folder / "netron.png")], capture_output=True, text=True)
    found = re.search(r"drawn by Netron in ([0-9.]+) s", out.stdout)
    if found is None:
        raise SystemExit(f"Netron's command printed no time:\n{out.stdout}\n{out.stderr}")
    return float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--netron", help="the command that draws a model with Netron (then MODEL OUT.png)")
    parser.add_argument("--phases", action="store_true", help="where the window process's time goes")
    parser.add_argument("--against", type=Path, help="another checkout of onnxviz, run alternately with this one")
    args = parser.parse_args()
    compileall.compile_dir(REPO / "onnxviz", quiet=1)
    netron = shlex.split(args.netron) if args.netron else None
    print(f"{'file':<28} {'onnxviz s':>9} {'min-max':>11} {'Netron s':>8} {'min-max':>11} {'ratio':>5}  load")
    with tempfile.TemporaryDirectory(prefix="onnxviz-bench-startup-") as scratch:
        folder = Path(scratch)
        for path in [p.resolve() for p in args.files] or default_files():
            load = os.getloadavg()[0]
            ours: list[float] = []
            theirs: list[float] = []
            traces: list[dict[str, tuple[float, float]]] = []
            cpu: list[float] = []
            other: list[tuple[float, float]] = []
            other_traces: list[dict[str, tuple[float, float]]] = []
            for _round in range(args.runs):
                seconds, used, steps = onnxviz_run(path, folder, args.phases)
                ours.append(seconds)
                cpu.append(used)
                traces.append(steps)
                if netron is not None:
                    theirs.append(netron_run(netron, path, folder))
                if args.against is not None:
                    seconds, used, steps = onnxviz_run(path, folder, args.phases, args.against.resolve())
                    other.append((seconds, used))
                    other_traces.append(steps)
            med = statistics.median(ours)
            anchor = f"{statistics.median(theirs):>8.2f} {min(theirs):>5.2f}-{max(theirs):<5.2f} " \
                     f"{med / statistics.median(theirs):>5.2f}" if theirs else f"{'':>8} {'':>11} {'':>5}"
            print(f"{path.name:<28} {med:>9.2f} {min(ours):>5.2f}-{max(ours):<5.2f} {anchor}  "
                  f"{load:.1f}-{os.getloadavg()[0]:.1f}")
            if not other:
                print(f"    CPU with its workers {statistics.median(cpu):.2f} s ({min(cpu):.2f}-{max(cpu):.2f})")
            if other:
                print(f"    {args.against}: {statistics.median(w for w, _c in other):.2f} s "
                      f"({min(w for w, _c in other):.2f}-{max(w for w, _c in other):.2f}), CPU "
                      f"{statistics.median(c for _w, c in other):.2f} s; this checkout's CPU {statistics.median(cpu):.2f} s")
            if args.phases:
                print_phases(traces, other_traces, args.against)


def print_phases(traces: list[dict[str, tuple[float, float]]], other: list[dict[str, tuple[float, float]]],
                 against: Path | None) -> None:
    """The medians of each step's time and the window process's CPU then; with ``--against``, the other
    checkout's beside them (its runs alternated with these)."""
    if other:
        print(f"    {'':<28} {'this checkout':>22}   {str(against):>22}")
    jobs = sorted({k for t in (*traces, *other) for k in t if k.startswith("job ")},
                  key=lambda k: statistics.median(t[k][0] for t in (*traces, *other) if k in t))
    for key, label in (*STEPS, ("end", "process ended"), *((k, f"{k[4:].removeprefix('early_')} ended") for k in jobs)):
        row = [f"    {label:<28}"]
        for runs in (traces, other) if other else (traces,):
            at = [t[key] for t in runs if key in t]
            row.append(f"{statistics.median(a for a, _c in at):>6.0f} ms  cpu {statistics.median(c for _a, c in at):>5.0f} ms"
                       if at else f"{'':>22}")
        print("   ".join(row))


if __name__ == "__main__":
    main()
