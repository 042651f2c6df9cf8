#!/usr/bin/env bash
# Checks the systemd unit CMake configured (packaging/delaybridge.service.in): systemd-analyze
# verify must print nothing (a misspelt key or a bad value is only a warning to it, so any output
# fails), and the hardening docs/operations.md promises must be there.
# Usage: verify_unit.sh UNIT BINARY (BINARY stands in for the installed one: verify wants
# ExecStart's program to exist).
set -euo pipefail
unit=$1
binary=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|^ExecStart=[^ ]*|ExecStart=$binary|" "$unit" >"$dir/delaybridge.service"
grep -q "^ExecStart=$binary --config " "$dir/delaybridge.service"

output=$(systemd-analyze verify "$dir/delaybridge.service" 2>&1) || {
  echo "$output"
  exit 1
}
if [[ -n $output ]]; then
  echo "systemd-analyze verify reported:"
  echo "$output"
  exit 1
fi

for directive in DynamicUser=yes StateDirectory=delaybridge ProtectSystem=strict ProtectHome=yes \
  NoNewPrivileges=yes CapabilityBoundingSet= PrivateTmp=yes Restart=on-failure \
  RestartPreventExitStatus=2 LimitNOFILE=1048576; do
  grep -qx "$directive" "$unit" || {
    echo "$unit: missing $directive"
    exit 1
  }
done
echo "verify_unit: $unit verifies cleanly and is hardened"
