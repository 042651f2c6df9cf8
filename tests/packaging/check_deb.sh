#!/usr/bin/env bash
# Builds the .deb with cpack from a configured and built tree and checks it: the package's name
# and dependencies (the packages named, found by dpkg-shlibdeps), the binaries, the systemd
# unit, the example configuration and the Grafana dashboard, and that the program the unit starts
# is one the package installs.
# Usage: check_deb.sh BUILD_DIR PACKAGE...   (e.g. librdkafka1 libyaml-cpp libjemalloc2)
set -euo pipefail
build=$1
shift
expected_dependencies=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpack --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1 || {
  cat "$work/cpack.log"
  exit 1
}
deb=$(ls "$work"/delaybridge_*.deb)
fail() {
  echo "check_deb: $deb: $*"
  exit 1
}

[[ $(dpkg-deb --field "$deb" Package) == delaybridge ]] || fail "package name"
depends=$(dpkg-deb --field "$deb" Depends)
((${#expected_dependencies[@]} > 0)) || fail "no dependencies to check were named"
for dependency in "${expected_dependencies[@]}"; do
  [[ $depends == *"$dependency"* ]] || fail "Depends lacks $dependency: $depends"
done

contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
unit_path=$(grep -E '/lib/systemd/system/delaybridge\.service$' <<<"$contents") ||
  fail "no systemd unit in $contents"
for binary in delaybridge delaylog-dump delaybridge-load; do
  grep -qE "/bin/$binary$" <<<"$contents" || fail "no $binary"
done
grep -qE '/share/doc/delaybridge/config\.service\.yaml$' <<<"$contents" ||
  fail "no example configuration"
grep -qE '/share/doc/delaybridge/delaybridge-dashboard\.json$' <<<"$contents" ||
  fail "no Grafana dashboard"

exec_start=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "$unit_path" | sed -n 's/^ExecStart=\([^ ]*\).*/\1/p')
grep -qx ".$exec_start" <<<"$contents" || fail "the unit starts $exec_start, which it does not install"
echo "check_deb: $(basename "$deb") depends on $depends and starts $exec_start"
