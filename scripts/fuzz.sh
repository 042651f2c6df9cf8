#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang, ASan and UBSan, and runs each one for
# FUZZ_SECONDS (default 60) on a scratch copy of its seed corpus (fuzz/corpus/<target>; the
# committed seeds are never modified), with libFuzzer's -seed=FUZZ_SEED (default 1). A fixed seed
# makes a run reproducible: the same seed walks the same inputs, so a finding in CI is found
# again by the same command, and a longer run with that seed covers every shorter one. Explore
# with other seeds (FUZZ_SEED=0 lets libFuzzer pick one) and commit what they find to the corpus.
# Exits non-zero if any target crashes, leaks, exceeds 2 GiB or spends over 10 s on one input;
# the input that did it is kept under $FUZZ_WORK_DIR/artifacts/ and the target's log is printed.
#
#   scripts/fuzz.sh                  # every target, 60 s each, one after the other
#   FUZZ_SECONDS=300 scripts/fuzz.sh store
#   FUZZ_SEED=0 FUZZ_SECONDS=600 scripts/fuzz.sh   # explore with a random seed
#   scripts/fuzz.sh --seeds          # rewrite the binary seed corpora with the real encoders
#   scripts/fuzz.sh --build-only     # build the targets, run none
#
# Reproduce a finding: build-fuzz/bin/<target>_fuzzer <artifact file>
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
seed=${FUZZ_SEED:-1}
work=${FUZZ_WORK_DIR:-$build_dir/fuzz-work}
all_targets=(delay_headers delayed_record config progress_metadata store)

seeds=false
build_only=false
targets=()
for arg in "$@"; do
  case "$arg" in
    --seeds) seeds=true ;;
    --build-only) build_only=true ;;
    *) targets+=("$arg") ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")

CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDELAYBRIDGE_FUZZ=ON -DBUILD_TESTING=OFF -DDELAYBRIDGE_BUILD_BENCHMARKS=OFF \
  -DDELAYBRIDGE_WERROR=ON >/dev/null
cmake --build "$build_dir" -j2 --target fuzz_seed_writer "${targets[@]/%/_fuzzer}"

$build_only && exit 0
if $seeds; then
  "$build_dir/bin/fuzz_seed_writer" fuzz/corpus
  echo "fuzz: seed corpora written to fuzz/corpus/"
  exit 0
fi

rm -rf "$work"
mkdir -p "$work/artifacts"
failed=()
for target in "${targets[@]}"; do
  mkdir -p "$work/corpus-$target"
  log="$work/$target.log"
  if "$build_dir/bin/${target}_fuzzer" -max_total_time="$seconds" -seed="$seed" -timeout=10 \
    -rss_limit_mb=2048 \
    -artifact_prefix="$work/artifacts/$target-" -print_final_stats=1 \
    "$work/corpus-$target" "fuzz/corpus/$target" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    used_seed=$(sed -n 's/^INFO: Seed: *//p' "$log" | head -n 1)
    echo "fuzz: $target: ${runs:-?} inputs in ${seconds} s (seed ${used_seed:-$seed}), no finding"
  else
    failed+=("$target")
    echo "fuzz: $target FAILED ($(grep -m 1 '^INFO: Seed:' "$log" || echo "seed $seed")); its log:" >&2
    tail -n 60 "$log" >&2
    ls "$work/artifacts/$target-"* 2>/dev/null | sed 's/^/fuzz: finding: /' >&2 || true
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s), no finding"
