#!/usr/bin/env bash
# Builds the bridge and its plugin and storage tests with ThreadSanitizer and runs them: the unit
# tests (the Deliverer's delivery thread, the disk worker, the statistics writer, concurrent
# syncs) and the mock-cluster integration tests, whose bridge processes run the ingest loop and
# the delivery, disk and statistics threads (and the metrics server) for real. Any race report
# fails the run (a test process, or a bridge it started, exits 66).
#
# librdkafka is not instrumented: tests/tsan/c11_threads.cc is preloaded so TSan sees its threads
# and locks, and tests/tsan/tsan.supp says what is not checked inside it, and why.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${TSAN_BUILD_DIR:-build-tsan}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDELAYBRIDGE_SANITIZE_THREAD=ON -DDELAYBRIDGE_BUILD_BENCHMARKS=OFF \
  -DDELAYBRIDGE_WERROR=ON >/dev/null
targets=(delaybridge_tsan_c11_threads delaybridge storage_tests plugin_unit_tests)
for test in delivery restart dead_letter full_disk broker_outage backpressure failover http cancel; do
  targets+=("plugin_bridge_${test}_test")
done
cmake --build "$build_dir" -j2 --target "${targets[@]}"

export LD_PRELOAD="$PWD/$build_dir/tests/tsan/libdelaybridge_tsan_c11_threads.so"
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan/tsan.supp exitcode=66 second_deadlock_stack=1"
"$build_dir/bin/storage_tests" --gtest_brief=1
"$build_dir/bin/plugin_unit_tests" --gtest_brief=1
ctest --test-dir "$build_dir" -L integration --output-on-failure --timeout 600
echo "tsan: no race reported"
