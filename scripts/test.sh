#!/usr/bin/env bash
# Sets up the machine, builds every target in Release with warnings as errors, then builds with
# ASan and UBSan and runs every DelayBridge test: unit tests, mock-cluster end-to-end tests and
# real-broker end-to-end tests. Exits non-zero if either build or any test fails.
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

ctest --test-dir "$build_dir" --output-on-failure --timeout 900
