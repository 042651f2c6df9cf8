#!/usr/bin/env bash
# The memory/scale and restart benchmark: `scripts/bench-e2e.sh scale` (see that script for
# what it measures and the BENCH_* environment it reads).
set -euo pipefail
exec bash "$(dirname "$0")/bench-e2e.sh" scale "$@"
