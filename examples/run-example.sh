#!/usr/bin/env bash
# Runs one client example against a Kafka broker, with a DelayBridge of its own:
#
#   examples/run-example.sh [--bridge PATH] [--bootstrap HOST:PORT] java|python|go|kcat
#
# 1. builds the example into .cache/examples/ (Maven, a Python venv, go build; kcat: nothing);
# 2. creates the run's topics, named examples-LANG-RUNID.*, so runs never share a topic or group:
#    .delayed (3 partitions), .delivered (6), .jobs (2, the retry example's work topic), .dlq (1);
# 3. writes a bridge config to a temporary directory (routes .delayed -> .delivered, .delivered
#    and .jobs allowed in x-target-topic), starts the bridge and waits for its /readyz;
# 4. runs the example (BOOTSTRAP_SERVERS, DELAY_TOPIC, TARGET_TOPIC, RETRY_TOPIC set), stops
#    the bridge with SIGTERM and exits with the example's status. On failure it prints the
#    bridge's log and the dead-letter topic, and keeps the temporary directory.
#
# Options (or the environment variable in brackets):
#   --bridge PATH      the delaybridge binary [DELAYBRIDGE_BIN; default: the first of build/,
#                      build-release/, build-test/ (bin/delaybridge) that exists]
#   --bootstrap H:P    the broker [DELAYBRIDGE_TEST_BOOTSTRAP; default 127.0.0.1:KAFKA_PORT, where
#                      KAFKA_PORT defaults to 39092, the broker of `scripts/kafka.sh up`]
# Topics are created with the Admin API of the kafka-clients jar among the broker's libraries
# (scripts/kafka.sh fetch; KAFKA_VERSION selects the release as there).
set -euo pipefail

repo_root=$(cd "$(dirname "$0")/.." && pwd)
examples=$repo_root/examples
cache=${EXAMPLES_CACHE_DIR:-$repo_root/.cache/examples}
bridge=${DELAYBRIDGE_BIN:-}
bootstrap=${DELAYBRIDGE_TEST_BOOTSTRAP:-127.0.0.1:${KAFKA_PORT:-39092}}
readonly ready_timeout_s=90 # the bridge's group join, slower under the sanitizers

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
log() { echo "run-example: $*"; }
die() {
  echo "run-example: $*" >&2
  exit 1
}

lang=""
while (($#)); do
  case $1 in
    --bridge) bridge=$2; shift 2 ;;
    --bootstrap) bootstrap=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    java | python | go | kcat)
      [[ -z $lang ]] || die "one example at a time (got '$lang' and '$1')"
      lang=$1; shift ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
[[ -n $lang ]] || { usage >&2; die "name an example: java, python, go or kcat"; }
if [[ -z $bridge ]]; then
  for dir in build build-release build-test; do
    [[ -x $repo_root/$dir/bin/delaybridge ]] && { bridge=$repo_root/$dir/bin/delaybridge; break; }
  done
  [[ -n $bridge ]] || die "no delaybridge binary in build/bin (bash scripts/run.sh builds it)" \
    "or build-release/bin or build-test/bin; name one with --bridge PATH"
fi
[[ -x $bridge ]] || die "$bridge is not an executable delaybridge binary"
for tool in curl kcat java; do
  command -v "$tool" >/dev/null || die "$tool not found (bash scripts/setup.sh installs it)"
done
mkdir -p "$cache"
started=$SECONDS

# ---- 1. build the example -------------------------------------------------------------------
# Each build holds a lock: two build directories may run their tests at once. A failed build
# fails the run here, before anything is started, with the tool's own output.

run_logged() { # log file, command...: the command's output goes to the log, shown on failure
  local log_file=$1
  shift
  "$@" >"$log_file" 2>&1 && return 0
  tail -n 40 "$log_file" >&2
  return 1
}

build_java() {
  command -v mvn >/dev/null || die "mvn not found (bash scripts/setup.sh installs maven)"
  command -v javac >/dev/null || die "javac not found (bash scripts/setup.sh installs a JDK)"
  mkdir -p "$cache/java"
  exec 8>"$cache/java/.lock"
  flock 8
  # Maven's downloads stay in .cache/examples/maven, the build output outside the source tree.
  local mvn_cmd=(mvn -q -B -Dstyle.color=never "-Dmaven.repo.local=$cache/maven"
    "-Dexample.buildDir=$cache/java/target" -f "$examples/java/pom.xml" package)
  # Once a build with this pom succeeded, everything it needs is in the local repository: build
  # offline (no network, no update checks). Online again if that fails (e.g. a pruned cache).
  local stamp jar=$cache/java/target/delaybridge-example.jar
  stamp=$cache/java/.resolved-$(sha256sum "$examples/java/pom.xml" | cut -c1-16)
  local changed
  changed=$(find "$examples/java" -path "$examples/java/target" -prune -o -type f -newer "$jar" \
    -print -quit 2>/dev/null || true)
  if [[ -f $stamp && -f $jar && -z $changed ]]; then
    : # built from these sources already: not even Maven's start-up
  elif [[ -f $stamp ]] && "${mvn_cmd[@]}" -o >"$cache/java/maven.log" 2>&1; then
    :
  elif run_logged "$cache/java/maven.log" "${mvn_cmd[@]}"; then
    touch "$stamp"
  else
    die "building the Java example with Maven failed (log: $cache/java/maven.log)"
  fi
  flock -u 8
  exec 8>&-
  example_cmd=(java -jar "$jar")
}

build_python() {
  command -v python3 >/dev/null || die "python3 not found"
  local venv=$cache/python/venv want
  mkdir -p "$cache/python"
  exec 8>"$cache/python/.lock"
  flock 8
  # The venv is made again when the requirements or the interpreter changed.
  want="$(python3 --version) $(sha256sum "$examples/python/requirements.txt" | cut -c1-16)"
  if [[ ! -f $venv/.installed || $(cat "$venv/.installed") != "$want" ]]; then
    rm -rf "$venv"
    run_logged "$cache/python/venv.log" python3 -m venv "$venv" ||
      die "python3 -m venv failed (Debian's own python3 needs the python3-venv package)"
    # Wheels only: a source build of confluent-kafka would need librdkafka headers matching it.
    run_logged "$cache/python/pip.log" "$venv/bin/pip" install --disable-pip-version-check \
      --only-binary=:all: -r "$examples/python/requirements.txt" ||
      die "pip could not install $examples/python/requirements.txt (log: $cache/python/pip.log)"
    echo "$want" >"$venv/.installed"
  fi
  flock -u 8
  exec 8>&-
  # No __pycache__ in the source tree; output in order with the bridge's on failure.
  export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
  example_cmd=(run_python "$venv/bin/python")
}

# shellcheck disable=SC2329 # called through example_cmd
run_python() { # the delayed-delivery example, then the retry one
  "$1" "$examples/python/delayed_delivery.py" && "$1" "$examples/python/retry_with_backoff.py"
}

build_go() {
  # The machine's Go is in /usr/local/go (Debian's golang is older than the module's go line);
  # login shells put it on PATH, a CI job's shell may not.
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
    PATH=/usr/local/go/bin:$PATH
  fi
  command -v go >/dev/null ||
    die "go not found (franz-go needs Go 1.26 or later, e.g. in /usr/local/go)"
  mkdir -p "$cache/go"
  exec 8>"$cache/go/.lock"
  flock 8
  # Modules and build cache in .cache/examples/go (-modcacherw: rm -rf can delete them);
  # -mod=readonly: go.mod and go.sum are the committed ones; GOTOOLCHAIN=local: no toolchain
  # download, an older go says so instead.
  run_logged "$cache/go/build.log" env GOPATH="$cache/go/path" GOCACHE="$cache/go/cache" \
    GOFLAGS="-mod=readonly -modcacherw -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 \
    go build -C "$examples/go" -o "$cache/go/delayed-delivery" . ||
    die "building the Go example failed (log: $cache/go/build.log)"
  flock -u 8
  exec 8>&-
  example_cmd=("$cache/go/delayed-delivery")
}

build_kcat() {
  example_cmd=(bash "$examples/kcat/delayed-delivery.sh")
}

log "building the $lang example"
case $lang in
  java) build_java ;;
  python) build_python ;;
  go) build_go ;;
  kcat) build_kcat ;;
esac
build_s=$((SECONDS - started))

# ---- 2. topics ------------------------------------------------------------------------------
run_id=$(date +%s)-$$-$RANDOM
base=examples-$lang-$run_id
delay_topic=$base.delayed
target_topic=$base.delivered
retry_topic=$base.jobs
dlq_topic=$base.dlq

kafka_version=${KAFKA_VERSION:-$(sed -n 's/^readonly DEFAULT_KAFKA_VERSION=//p' \
  "$repo_root/scripts/kafka.sh")}
KAFKA_VERSION=$kafka_version bash "$repo_root/scripts/kafka.sh" fetch ||
  die "could not fetch the Apache Kafka $kafka_version jars (for its Admin API)"
# -XX:TieredStopAtLevel=1: a short-lived JVM starts faster with the client compiler only.
java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=warn \
  -cp "$repo_root/.cache/kafka/$kafka_version/libs/*" "$examples/support/CreateTopics.java" \
  "$bootstrap" "$delay_topic:3" "$target_topic:6" "$retry_topic:2" "$dlq_topic:1" ||
  die "could not create the topics on $bootstrap (is a broker up? bash scripts/kafka.sh up)"

# ---- 3. the bridge --------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/delaybridge-$base.XXXXXX")
bridge_pid=""
bridge_status=""

stop_bridge() {
  [[ -n $bridge_pid ]] || return 0
  local pid=$bridge_pid
  bridge_pid=""
  kill -TERM "$pid" 2>/dev/null || true
  # A clean stop waits for in-flight deliveries (at most 10 s) and commits; give it 30 s.
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "the bridge ignored SIGTERM for 30 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  bridge_status=0
  wait "$pid" || bridge_status=$?
}

# shellcheck disable=SC2329 # the EXIT trap
on_exit() {
  local status=$?
  stop_bridge
  # A bridge that did not stop cleanly (a crash, a sanitizer's report at exit) fails the run even
  # when the example passed.
  if [[ -n $bridge_status && $bridge_status != 0 ]]; then
    log "the bridge exited with status $bridge_status after SIGTERM"
    ((status != 0)) || status=1
  fi
  if ((status != 0)); then
    echo "---- bridge log (last 40 lines of $work/bridge.log) ----" >&2
    tail -n 40 "$work/bridge.log" >&2 2>/dev/null || true
    echo "---- $dlq_topic ----" >&2
    timeout 20 kcat -C -b "$bootstrap" -t "$dlq_topic" -o beginning -e -q \
      -f 'dead letter: key=%k headers=%h\n' >&2 || true
    echo "run-example: $lang example failed; kept $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cat >"$work/config.yaml" <<EOF
# Written by examples/run-example.sh for one run of the $lang example.
kafka:
  bootstrap.servers: "$bootstrap"
routes:
  "$delay_topic": "$target_topic"
# The retry example sends records back to its own work topic with x-target-topic.
allowed_targets: ["$target_topic", "$retry_topic"]
dead_letter_topic: "$dlq_topic"
group_id: "$base.bridge"
storage:
  dir: "$work/data"
wheel:
  tick_ms: 1
  preload_seconds: 5
max_delay: 1h
metrics:
  listen: "127.0.0.1:0"
EOF
bridge_started=$SECONDS
"$bridge" --config "$work/config.yaml" >"$work/bridge.log" 2>&1 &
bridge_pid=$!

# Ready: it logs the port it serves on, and /readyz answers 200 once it holds delay partitions.
ready_url=""
deadline=$((SECONDS + ready_timeout_s))
until [[ -n $ready_url ]] && curl -fs -o /dev/null --max-time 5 "$ready_url"; do
  kill -0 "$bridge_pid" 2>/dev/null || {
    stop_bridge
    die "the bridge exited during start-up with status $bridge_status"
  }
  ((SECONDS < deadline)) || die "the bridge was not ready within ${ready_timeout_s} s"
  if [[ -z $ready_url ]]; then
    address=$(grep -o 'readyz on http://[0-9.:]*' "$work/bridge.log" | head -n 1 || true)
    [[ -n $address ]] && ready_url=${address#readyz on }/readyz
  fi
  sleep 0.2
done
log "bridge ready after $((SECONDS - bridge_started)) s ($ready_url, pid $bridge_pid)"

# ---- 4. the example -------------------------------------------------------------------------
example_started=$SECONDS
export BOOTSTRAP_SERVERS=$bootstrap DELAY_TOPIC=$delay_topic TARGET_TOPIC=$target_topic
export RETRY_TOPIC=$retry_topic
example_status=0
"${example_cmd[@]}" || example_status=$?
log "$lang example exited $example_status after $((SECONDS - example_started)) s" \
  "(build ${build_s} s, total $((SECONDS - started)) s)"
exit "$example_status"
