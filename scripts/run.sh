#!/usr/bin/env bash
# Builds DelayBridge (Release, into build/) and runs the bridge with the configuration at the
# repository root. With the shipped config.yaml the bridge starts its own in-process Kafka
# broker and prints kcat commands to try it. Extra arguments go to delaybridge
# (e.g. `scripts/run.sh --check`). Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)" --target delaybridge

exec build/bin/delaybridge --config config.yaml "$@"
