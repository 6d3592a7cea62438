"""Long fuzzing run: mutate the seed models and feed them to load, index, info, layout and check.

    python scripts/fuzz_long.py [--minutes 10] [--seed 1] [--out /tmp/onnxviz-fuzz] [--settings | --inputs | --saves]

With --settings, mutated settings files (tests/hostile_side.py) are read the way the window starts
instead (offscreen; the settings folder is a temporary one, never the user's); any exception is a bug.
With --inputs, mutated run-input files (.npy, .npz, TensorProto .pb: bit flips, cuts, headers that
lie; tests/hostile_inputs.py) are read as a fixed-shape, a free-shape and a string input: anything but
a one-sentence RunError, a read taking over READ_LIMIT_S or the process growing by over RSS_LIMIT_MB is a bug.

With --saves, the save state machine of tests/model/io/test_save_state_machine.py runs instead (edits, saves, Save As,
other programs changing the model and its data files, disks that fill, killed saves, links); it prints how
many sequences and operations ran clean, and stops at the first failing sequence (shrunk, printed).

Any exception other than OnnxvizError is a bug: the mutant is kept in --out and the run stops
with exit code 1. Before each attempt the mutant is written to ``<out>/current.onnx``, so if
the process dies in native code (a segfault in onnx or protobuf) that file reproduces it.
"""

from __future__ import annotations

import argparse
import random
import resource
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import hostile  # noqa: E402
import hostile_inputs  # noqa: E402
import hostile_side  # noqa: E402
import onnx  # noqa: E402


def mutant(rng: random.Random, seeds: list[bytes]) -> tuple[str, bytes]:
    data = rng.choice(seeds)
    how = rng.choice(("flip", "cut", "splice", "proto"))
    if how == "flip":
        return how, hostile.flip_bits(data, [(rng.random(), rng.randrange(8)) for _ in range(rng.randint(1, 12))])
    if how == "cut":
        return how, data[:rng.randrange(len(data))] + rng.randbytes(rng.randrange(8))
    if how == "splice":
        at = rng.randrange(len(data))
        return how, data[:at] + rng.randbytes(rng.randint(1, 16)) + data[at + rng.randrange(16):]
    model = onnx.ModelProto.FromString(data)
    for _ in range(rng.randint(1, 5)):
        text = "".join(rng.choice("ab/.:_\u202e\x00xy") for _ in range(rng.randrange(6)))
        model = hostile.mutate_proto(model, rng.randrange(9), rng.randrange(2**32), text)
    return how, model.SerializeToString()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("/tmp/onnxviz-fuzz"))
    parser.add_argument("--settings", action="store_true", help="fuzz the settings file instead of models")
    parser.add_argument("--inputs", action="store_true", help="fuzz run-input files instead of models")
    parser.add_argument("--saves", action="store_true", help="run the save state machine instead")
    args = parser.parse_args()
    if args.saves:
        return fuzz_saves(args.minutes)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.settings:
        return fuzz_settings(args.minutes, args.seed, args.out)
    if args.inputs:
        return fuzz_inputs(args.minutes, args.seed, args.out)
    rng = random.Random(args.seed)
    seeds = [m.SerializeToString() for m in hostile.seed_models()]
    outcomes: Counter[str] = Counter()
    current = args.out / "current.onnx"
    deadline = time.monotonic() + args.minutes * 60
    n = 0
    while time.monotonic() < deadline:
        how, data = mutant(rng, seeds)
        current.write_bytes(data)
        try:
            result = hostile.exercise(current)
        except Exception:  # noqa: BLE001 - this is what we are hunting
            kept = args.out / f"bug-{args.seed}-{n}.onnx"
            kept.write_bytes(data)
            traceback.print_exc()
            print(f"BUG after {n} mutants ({how}); kept {kept}")
            return 1
        outcomes[f"{how}: {'opened' if result == 'opened' else 'refused'}"] += 1
        n += 1
        if n % 1000 == 0:
            print(f"{n} mutants, {dict(sorted(outcomes.items()))}", flush=True)
    print(f"done: {n} mutants in {args.minutes} min, no bug; {dict(sorted(outcomes.items()))}")
    return 0


def fuzz_saves(minutes: float) -> int:
    """The save state machine for ``minutes`` (its own folders, removed as it goes)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "model" / "io"))
    import test_save_state_machine as machine

    machine.run_for(minutes)
    return 0


def fuzz_settings(minutes: float, seed: int, out: Path) -> int:
    """Settings mutants through :func:`hostile_side.exercise_settings`; each kept as ``<out>/current.ini``
    first, a failing one as ``<out>/bug-*.ini``."""
    import os
    import tempfile

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from onnxviz.ui.app import ensure_app
    from onnxviz.ui.applog import use_log_file
    from onnxviz.ui.settings import use_settings_dir

    folder = Path(tempfile.mkdtemp(prefix="onnxviz-fuzz-settings-"))
    use_settings_dir(folder)
    use_log_file(folder / "onnxviz.log")
    app = ensure_app()
    rng = random.Random(seed)
    deadline = time.monotonic() + minutes * 60
    n = 0
    while time.monotonic() < deadline:
        data = hostile_side.settings_mutant(rng)
        (out / "current.ini").write_bytes(data)
        try:
            hostile_side.exercise_settings(folder, data)
        except Exception:  # noqa: BLE001 - this is what we are hunting
            kept = out / f"bug-settings-{seed}-{n}.ini"
            kept.write_bytes(data)
            traceback.print_exc()
            print(f"BUG after {n} settings mutants; kept {kept}")
            return 1
        app.processEvents()  # the deleteLater()s
        n += 1
        if n % 200 == 0:
            print(f"{n} settings mutants", flush=True)
    print(f"done: {n} settings mutants in {minutes} min, no bug")
    return 0


READ_LIMIT_S = 10
RSS_LIMIT_MB = 512


class TooSlow(Exception):
    pass


def _too_slow(_signum: int, _frame: object) -> None:
    raise TooSlow(f"reading took over {READ_LIMIT_S} s")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fuzz_inputs(minutes: float, seed: int, out: Path) -> int:
    """Run-input mutants through :func:`hostile_inputs.exercise_input`, each read under an alarm; each kept
    as ``<out>/inputs/input.<suffix>`` first, a failing one as ``<out>/bug-input-*``."""
    rng = random.Random(seed)
    seeds = hostile_inputs.input_seeds()
    folder = out / "inputs"
    folder.mkdir(exist_ok=True)
    signal.signal(signal.SIGALRM, _too_slow)
    outcomes: Counter[str] = Counter()
    start_rss = _rss_mb()
    deadline = time.monotonic() + minutes * 60
    n = 0
    while time.monotonic() < deadline:
        how, suffix, data = hostile_inputs.input_mutant(rng, seeds)
        spec = rng.choice(list(hostile_inputs.FUZZ_SPECS))
        signal.alarm(READ_LIMIT_S)
        try:
            result = hostile_inputs.exercise_input(folder, suffix, data, spec)
            if _rss_mb() - start_rss > RSS_LIMIT_MB:
                raise MemoryError(f"the process grew by {_rss_mb() - start_rss:.0f} MB")
        except Exception:  # noqa: BLE001 - this is what we are hunting
            kept = out / f"bug-input-{seed}-{n}{suffix}"
            kept.write_bytes(data)
            traceback.print_exc()
            print(f"BUG after {n} input mutants ({how}, read as the {spec} input); kept {kept}")
            return 1
        finally:
            signal.alarm(0)
        outcomes[f"{suffix} {how}: {'read' if result == 'read' else 'refused'}"] += 1
        n += 1
        if n % 20000 == 0:
            print(f"{n} input mutants, {dict(sorted(outcomes.items()))}", flush=True)
    print(f"done: {n} input mutants in {minutes} min, no bug; {dict(sorted(outcomes.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
