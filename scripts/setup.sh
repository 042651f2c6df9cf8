#!/usr/bin/env bash
# Installs every system package DelayBridge needs to build, test and benchmark on Debian
# bookworm. Idempotent: packages already present are left alone. Run as root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  librdkafka-dev libboost-dev libyaml-cpp-dev libjemalloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format kcat
  clang-14 libclang-rt-14-dev
  faketime
  openjdk-17-jdk-headless maven  # the JDK: the broker runs on it, examples/java compiles with it
  curl prometheus  # the README's scrape of /metrics; promtool checks the metrics in the tests
  python3-venv     # examples/python runs in a venv of Debian's python3 when no other is on PATH
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: need root to install packages (run as root or with sudo)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
