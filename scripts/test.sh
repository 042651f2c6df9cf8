#!/usr/bin/env bash
# Sets up the machine, builds every target in Release with warnings as errors, then builds with
# ASan and UBSan and runs every DelayBridge test: unit tests, mock-cluster end-to-end tests and
# real-broker end-to-end tests; runs the plugin tests again under ThreadSanitizer
# (scripts/tsan.sh); and runs every libFuzzer target for FUZZ_SECONDS (scripts/fuzz.sh), in the
# background while the real-broker tests mostly wait on the broker. Exits non-zero if any build,
# test or fuzz target fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

# The Release build operators and benchmarks use: GCC warns differently at -O3 than in the
# sanitizer build below, so every target (tests, benchmarks, tools) is compiled here too.
release_dir=${RELEASE_BUILD_DIR:-build-release}
cmake -S . -B "$release_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDELAYBRIDGE_WERROR=ON
cmake --build "$release_dir" -j2

build_dir=${BUILD_DIR:-build-test}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDELAYBRIDGE_SANITIZE=ON \
  -DDELAYBRIDGE_WERROR=ON
cmake --build "$build_dir" -j2

# The real-broker tests' Apache Kafka release comes from Maven Central; fetch it before ctest so a
# slow download never eats into a test's timeout. ctest starts and stops the broker itself.
bash scripts/kafka.sh fetch
bash scripts/kafka.sh --version 3.9.1 fetch  # BridgeSecureTest's broker (docs/real-broker.md)

bash scripts/tsan.sh

bash scripts/fuzz.sh --build-only
fuzz_log=$(mktemp)
bash scripts/fuzz.sh >"$fuzz_log" 2>&1 &
fuzz_pid=$!

ctest_log=$(mktemp)
ctest_status=0
# Two at a time: the resource locks (tests/plugin and tests/e2e CMakeLists) keep it to one
# mock-cluster bridge test beside one real-broker test, which mostly wait on timers and the broker.
ctest --test-dir "$build_dir" -j2 --output-on-failure --timeout 900 2>&1 | tee "$ctest_log" ||
  ctest_status=$?

fuzz_status=0
wait "$fuzz_pid" || fuzz_status=$?
cat "$fuzz_log"
# ctest's verdict last, where a reader of the log looks for it.
grep -E '^[0-9]+% tests passed' "$ctest_log" | tail -n 1 || true
rm -f "$fuzz_log" "$ctest_log"
if ((ctest_status != 0 || fuzz_status != 0)); then
  echo "test.sh: ctest exit $ctest_status, fuzz exit $fuzz_status" >&2
  exit 1
fi
