#!/usr/bin/env bash
# Every row of the README's Speed table, one command after the other, in one sitting:
#     bash bench/speed_table.sh OUT_DIR [NETRON_COMMAND]
# The synth models (12k, 61k, 123k nodes) are bench/synth.py's synth_file (made into its cache on first use);
# light_resnet50 comes from onnx's test data. NETRON_COMMAND (e.g. "PYTHON netron_shot.py") adds Netron's draw
# time in the same rounds.
# Each row's output goes to OUT_DIR/NAME.log, and its last lines with the time and load average to OUT_DIR/all.log.
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: bash bench/speed_table.sh OUT_DIR [NETRON_COMMAND]}
NETRON=${2:-}
PY=${PYTHON:-python}
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
mkdir -p "$OUT"
M=$(dirname "$("$PY" -c "import sys; sys.path.insert(0, 'bench'); from synth import synth_file
for layers in (300, 1500, 3000): print(synth_file(layers))" | tail -1)")
LIGHT=$("$PY" -c "import onnx, pathlib; print(pathlib.Path(onnx.__file__).parent / 'backend/test/data/light/light_resnet50.onnx')")
with_netron=()
[ -n "$NETRON" ] && with_netron=(--netron "$NETRON")
row() {
    local name=$1; shift
    echo "== $name $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/all.log"
    "$@" > "$OUT/$name.log" 2>&1
    grep -v propagateSizeHints "$OUT/$name.log" | tail -25 >> "$OUT/all.log"
}
timed() { /usr/bin/time -f '%e s wall, %U s user, %S s sys' "$@"; }
row light "$PY" bench/bench_startup.py --runs 5 "${with_netron[@]}" "$LIGHT"
row exports "$PY" bench/bench_startup.py --runs 5 "${with_netron[@]}" tests/data/exports/*.onnx
row k12 "$PY" bench/bench_startup.py --runs 3 "${with_netron[@]}" "$M/synth300.onnx"
row k61_123 "$PY" bench/bench_startup.py --runs 3 "$M/synth1500.onnx" "$M/synth3000.onnx"
row expand123 "$PY" bench/bench_expand_all.py --runs 2 "$M/synth3000.onnx"
row expand12 "$PY" bench/bench_expand_all.py --runs 2 "$M/synth300.onnx"
row render61 timed "$PY" -m onnxviz render "$M/synth1500.onnx" --expand-all -o "$OUT/render61.png"
row layout123 "$PY" bench/bench_expanded_layout.py --runs 2 "$M/synth3000.onnx"
row dump "$PY" bench/bench_dump.py --runs 3
row info123 timed "$PY" -m onnxviz info "$M/synth3000.onnx"
row export_all "$PY" bench/bench_export_all.py --runs 3
row edits "$PY" bench/bench_edits.py "$M/synth300.onnx"
row edit_while_checking "$PY" bench/bench_edit_while_checking.py
row save "$PY" bench/bench_save.py --layers 300
row diff_window "$PY" bench/bench_diff.py --window 300 3000
row show "$PY" bench/bench_show.py
row transform "$PY" bench/bench_transform.py --runs 1 "$M/synth300.onnx"
echo "== done $(date +%T)" >> "$OUT/all.log"
