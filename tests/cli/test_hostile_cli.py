"""Every hostile file through the real command line, each command in its own process: an answer (never a
hang), one error line or a report, and bounded memory. How long each command takes is a figure of
bench/bench_hostile_cli.py, not a test's."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import hostile
import pytest

pytestmark = pytest.mark.slow

HANG_S = 120.0  # a command still running after this hangs (a bound for hangs only, never a speed goal)
MAX_RSS_MB = 400  # beyond the (tiny) test files: the interpreter, onnx, onnxruntime and Qt offscreen
# render and run start Qt or onnxruntime: a subset keeps the suite fast; info and check see every file
RENDER_RUN_CASES = {"random", "truncated_tensor", "onnx_text", "graph_proto", "if_nested_200", "fifo", "cycle",
                    "unknown_op", "invalid_utf8_name", "dims_2_40", "node_100k_inputs", "external_symlink_out",
                    "if_nested_31", "raw_data_short"}


@dataclass
class Outcome:
    args: list[str]
    code: int
    stdout: str
    stderr: str


def run_cli(args: list[str], cwd: Path) -> Outcome:
    """Run ``python -m onnxviz ARGS`` with a timeout."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen([sys.executable, "-m", "onnxviz", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return Outcome(args, -9, out, err + "\nHANG")
    return Outcome(args, proc.returncode, out, err)


def drive(jobs_file: Path) -> None:
    """Run in a dedicated process, so RUSAGE_CHILDREN sees only these commands' children."""
    jobs = json.loads(jobs_file.read_text())
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda args: run_cli(args, jobs_file.parent), jobs))
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest peak of any child
    print(json.dumps({"outcomes": [asdict(r) for r in results], "peak_mb": peak_kib / 1024}))


def _commands(built: dict[str, tuple[hostile.Case, Path]], out_dir: Path) -> list[tuple[hostile.Case, list[str]]]:
    jobs: list[tuple[hostile.Case, list[str]]] = []
    for name, (case, path) in built.items():
        jobs += [(case, ["info", str(path)]), (case, ["check", str(path)])]
        if name in RENDER_RUN_CASES:
            jobs += [(case, ["render", str(path), "-o", str(out_dir / f"{name}.png")]), (case, ["run", str(path)]),
                     (case, ["info", "--json", str(path)]), (case, ["check", "--json", str(path)])]
    return jobs


@pytest.fixture(scope="module")
def driven(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[tuple[hostile.Case, Outcome]], float]:
    folder = tmp_path_factory.mktemp("hostile_cli")
    jobs = _commands(hostile.build_all(folder), folder)
    jobs_file = folder / "jobs.json"
    jobs_file.write_text(json.dumps([args for _, args in jobs]))
    tests = Path(hostile.__file__).parent  # the driver imports hostile too, from a folder of its own
    driver = subprocess.run([sys.executable, __file__, str(jobs_file)], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")])},
                            timeout=600, check=True)
    report = json.loads(driver.stdout)
    results = [Outcome(**r) for r in report["outcomes"]]
    return list(zip([c for c, _ in jobs], results, strict=True)), report["peak_mb"]


@pytest.fixture(scope="module")
def outcomes(driven: tuple[list[tuple[hostile.Case, Outcome]], float]) -> list[tuple[hostile.Case, Outcome]]:
    return driven[0]


def test_every_command_answers_without_traceback(outcomes: list[tuple[hostile.Case, Outcome]]) -> None:
    hung = [o.args for _, o in outcomes if o.code == -9]
    assert hung == []
    tracebacks = [(o.args, o.stderr[-300:]) for _, o in outcomes if "Traceback" in o.stderr + o.stdout]
    assert tracebacks == []
    crashed = [(o.args, o.code) for _, o in outcomes if o.code not in (0, 1, 2)]
    assert crashed == []


def test_refused_files_get_one_error_line_and_exit_2(outcomes: list[tuple[hostile.Case, Outcome]]) -> None:
    for case, o in outcomes:
        if not case.refused:
            continue
        assert o.code == 2, (o.args, o.stderr)
        assert o.stderr.startswith("onnxviz: error: ") and o.stderr.count("\n") == 1, (o.args, o.stderr)
        assert case.refused in o.stderr.lower(), (o.args, o.stderr)


def test_broken_models_open_and_check_reports_the_problem(outcomes: list[tuple[hostile.Case, Outcome]]) -> None:
    for case, o in outcomes:
        if case.refused:
            continue
        if o.args[0] == "info":
            assert o.code == 0, (o.args, o.stderr)
        elif o.args[0] == "check" and case.problem:
            assert o.code == 1, (o.args, o.stdout, o.stderr)
            assert case.problem in o.stdout.lower(), (o.args, o.stdout)


def test_run_refuses_invalid_models_with_the_reason(outcomes: list[tuple[hostile.Case, Outcome]]) -> None:
    for case, o in outcomes:
        if o.args[0] == "run" and case.name in ("cycle", "unknown_op", "raw_data_short", "external_symlink_out"):
            assert o.code == 2 and o.stderr.startswith("onnxviz: error: "), (o.args, o.stderr)
            assert o.stderr.count("\n") == 1, o.stderr


def test_memory_stays_bounded(driven: tuple[list[tuple[hostile.Case, Outcome]], float]) -> None:
    outcomes, peak_mb = driven
    assert len(outcomes) > 100
    print(f"largest peak RSS of {len(outcomes)} CLI commands: {peak_mb:.0f} MB")
    assert 30 < peak_mb < MAX_RSS_MB, f"a CLI command peaked at {peak_mb:.0f} MB"


if __name__ == "__main__":
    drive(Path(sys.argv[1]))
