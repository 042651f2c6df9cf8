#!/usr/bin/env bash
# DelayBridge end to end on a real Apache Kafka broker (scripts/kafka.sh), measured with
# delaybridge-load (tools/load/). Writes every raw report to the work dir and prints a table.
#
#   scripts/bench-e2e.sh [throughput|lateness|scale|spread|failover|eos|all]  (default: throughput)
#
# throughput: the pass-through baseline (plain consume-and-produce, acks=all, idempotent) and
#   DelayBridge in the same run on the same broker, measured two ways: "sustained" (records
#   produced as fast as possible, due 1 s later: min of producer and pipeline) and "drain"
#   (all records due at the same instant, BENCH_DRAIN_DUE_S after producing starts: how fast
#   the deliverer empties a backlog, producer excluded). Then lateness of both at 50% of the
#   bridge's sustained rate (the baseline then a pipe process of its own, see lateness) with
#   the CPU time of both, the CPU contention during both (as lateness prints it), bridge RSS and
#   DelayLog bytes.
# lateness: the bridge and the baseline side by side at each rate of BENCH_RATES (delays
#   uniform 1..10 s, mixed header styles, BENCH_LATENESS_S seconds' worth of records per run):
#   lateness percentiles of both, so the bridge's share of the lateness shows at every load;
#   the CPU time of both per delivered record; the records later than 5 ms and how many of them
#   waited across one of the broker's stop-the-world pauses (its gc.log); and the CPU contention
#   during each run (the machine's busy share, and how long the process's threads waited,
#   runnable, for a CPU: on two cores shared with the broker and the load tool, lateness follows
#   it). RUN.threads.before.json and .after.json in the work dir hold the CPU time of each thread of
#   the bridge or the pipe, RUN.broker_threads.* that of the broker's thread pools, before and
#   after each run (bridge_at_RATE, pipe_at_RATE; scripts/thread-cpu-delta.py diff shows where the
#   time went). The baseline here is
#   the pipe as a process of its own (delaybridge-load --mode pipe), fed and measured by
#   delaybridge-load in bridge mode exactly as the bridge is, so the CPU time of each is read
#   from /proc/PID/stat over its run.
#   BENCH_WARMUP_S seconds of pipe traffic, then as many of bridge traffic (delays 1..10 s),
#   warm the fresh broker up first. A third run per rate, direct, has the load tool produce
#   straight to the target topic (delaybridge-load --mode direct), each record due when
#   produced: the lateness of a producer with the bridge's client settings and nothing before
#   it, the floor of any deliverer on this machine.
# scale: fills a fresh bridge with BENCH_SCALE_TOTAL records due 1 h..30 d ahead (small
#   payloads), reports RSS at 1M, 5M and 10M pending (counted once the bridge's consumer group
#   has committed them), then restarts the bridge (SIGTERM, start) and times how long until
#   probe records due 500 ms after the restart are delivered.
# spread: ingest of BENCH_SPREAD_RECORDS records due 1 h..2 h ahead, then the same due 1 h..30 d
#   ahead, each into a fresh bridge, back to back (fill rate until the group's ingest position
#   reached the end of the delay topic): what a wide spread of delays costs the DelayLog.
# failover: fills a bridge with BENCH_FAILOVER_RECORDS records due 1 h..2 h ahead, kills it
#   (SIGKILL) and starts a replacement with an empty storage.dir and the same group_instance_id:
#   rebuild rate (records read again from the delay topic per second, from the replacement's
#   "rebuilt" log lines). Then, under a steady stream of records due 2 s after they are produced,
#   kills the replacement and starts another: the failover gap is the lateness of the records
#   that fell due meanwhile (max), next to the lateness before the kill.
# eos: delivery.guarantee exactly_once against at_least_once and the pass-through pipe, one after
#   the other on the same broker, each bridge with topics of its own: the sustained rate (records
#   as fast as possible, due 1 s later), then lateness of all three at 50% of at_least_once's
#   sustained rate and at BENCH_EOS_LOW_RATE, measured both by the broker's LogAppendTime (when
#   the record was produced) and at the consumer (read_committed: when its transaction committed).
# idle: what an idle bridge costs. A bridge with its defaults, then one given each entry of
#   BENCH_IDLE_KAFKA too, in turn, BENCH_IDLE_ROUNDS times over, each on a delay topic that gets
#   no records: after BENCH_IDLE_SETTLE_S seconds, the CPU seconds of the bridge and of the
#   broker over BENCH_IDLE_S seconds.
#
# Environment (defaults in brackets):
#   BENCH_BUILD_DIR       Release build dir with bin/delaybridge and bin/delaybridge-load [build]
#   BENCH_NO_BUILD=1      do not (re)build those two targets
#   BENCH_WORK_DIR        reports, bridge config, DelayLog, broker state [.cache/bench-e2e]
#   BENCH_KAFKA_PORT      broker port on 127.0.0.1 [39292]
#   BENCH_PARTITIONS      partitions per topic [4]
#   BENCH_RECORDS         records per max-rate run [500000]
#   BENCH_PAYLOAD         value bytes of throughput records [100]
#   BENCH_LATENESS_S      seconds' worth of records (rate x seconds) of each lateness run [20]
#   BENCH_RATES           rates (rec/s) of the lateness mode [2000 10000 25000 50000 75000]
#   BENCH_WARMUP_S        lateness mode: seconds of pipe traffic at 25000 rec/s, then of bridge
#                         traffic, that warm the fresh broker up before anything is measured
#                         (0: none) [20]
#   BENCH_DRAIN_DUE_S     drain runs: seconds from producing start to the shared due time [25]
#   BENCH_SCALE_TOTAL     pending records of the scale run [10000000]
#   BENCH_SCALE_STEPS     pending counts at which RSS is sampled [1000000 5000000 10000000]
#   BENCH_BRIDGE_KAFKA    extra "key: value" lines for the bridge's kafka: section, separated by
#                         ';' (e.g. "queued.max.messages.kbytes: 16384") []
#   BENCH_PIPE_KAFKA      librdkafka properties for the pass-through pipe's clients, key=value
#                         separated by spaces (e.g. "linger.ms=1", to compare with a bridge
#                         given "linger.ms: 1"; both linger 5 ms by default) []
#   BENCH_DIRECT_KAFKA    librdkafka properties for the lateness mode's direct runs (the load
#                         tool producing straight to the target), the same way []
#   BENCH_BRIDGE_STORAGE  extra lines for the bridge's storage: section, the same way
#                         (e.g. "sync_interval_ms: 1000;max_open_hours: 1024") []
#   BENCH_BRIDGE_WHEEL    extra lines for the bridge's wheel: section, the same way
#                         (e.g. "max_preloaded_records: 200000") []
#   BENCH_BRIDGE_DELIVERY extra lines for the bridge's delivery: section, the same way (e.g.
#                         "guarantee: exactly_once;transaction_interval_ms: 50"; not with the
#                         eos mode, which writes that section itself) []
#   BENCH_TICK_MS         the bridge's wheel.tick_ms [1]
#   BENCH_STORAGE_DIR     put the bridge's DelayLog here instead of the work dir (e.g. a tmpfs, to
#                         see what the DelayLog's fdatasyncs cost the broker on a shared disk) []
#   BENCH_BRIDGE_NICE     run the bridge with this nice value (e.g. -5: ahead of the broker and
#                         the load tool for the CPU, to see what CPU contention costs) []
#   BENCH_KAFKA_STATS_MS  have the bridge write librdkafka's statistics every this many ms to
#                         NAME/kafka-stats.jsonl in the work dir (summarise with
#                         scripts/kafka-stats.py) []
#   BENCH_PERF=1          record `perf record -g` of the bridge during the sustained and the
#                         50%-rate runs into the work dir (bridge_max.perf, bridge_half.perf),
#                         and during each bridge run of the lateness mode (bridge_at_RATE.perf)
#   BENCH_SCALE_DELAY     delay distribution of the scale fill [uniform:1h..30d]
#   BENCH_SCALE_TIMEOUT_S seconds one fill step may take until the bridge committed it [1200]
#   BENCH_SPREAD_RECORDS  records of each spread fill [1000000]
#   BENCH_FAILOVER_RECORDS pending records the failover's replacement rebuilds [1000000]
#   BENCH_EOS_LOW_RATE    the eos mode's second lateness rate, rec/s [10000]
#   BENCH_IDLE_S          idle mode: seconds measured [60]
#   BENCH_IDLE_SETTLE_S   idle mode: seconds after the start not measured [20]
#   BENCH_IDLE_KAFKA      idle mode: the other bridges' extra kafka: lines, as BENCH_BRIDGE_KAFKA,
#                         one bridge per entry, entries separated by '|'
#                         [librdkafka's fetch defaults: "fetch.wait.max.ms: 500;fetch.min.bytes: 1"]
#   BENCH_IDLE_ROUNDS     idle mode: how many times each bridge runs [2]
set -euo pipefail

repo_root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-throughput}
case $mode in throughput | lateness | scale | spread | failover | eos | idle | all) ;; *)
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
  ;;
esac

build_dir=${BENCH_BUILD_DIR:-$repo_root/build}
work_dir=${BENCH_WORK_DIR:-$repo_root/.cache/bench-e2e}
port=${BENCH_KAFKA_PORT:-39292}
partitions=${BENCH_PARTITIONS:-4}
records=${BENCH_RECORDS:-500000}
payload=${BENCH_PAYLOAD:-100}
lateness_s=${BENCH_LATENESS_S:-20}
drain_due_s=${BENCH_DRAIN_DUE_S:-25}
scale_total=${BENCH_SCALE_TOTAL:-10000000}
scale_delay=${BENCH_SCALE_DELAY:-uniform:1h..30d}
scale_timeout_s=${BENCH_SCALE_TIMEOUT_S:-1200}
read -r -a scale_steps <<<"${BENCH_SCALE_STEPS:-1000000 5000000 10000000}"
spread_records=${BENCH_SPREAD_RECORDS:-1000000}
failover_records=${BENCH_FAILOVER_RECORDS:-1000000}
eos_low_rate=${BENCH_EOS_LOW_RATE:-10000}
warmup_s=${BENCH_WARMUP_S:-20}
idle_s=${BENCH_IDLE_S:-60}
idle_settle_s=${BENCH_IDLE_SETTLE_S:-20}
idle_kafka=${BENCH_IDLE_KAFKA-fetch.wait.max.ms: 500;fetch.min.bytes: 1}
idle_rounds=${BENCH_IDLE_ROUNDS:-2}
bootstrap=127.0.0.1:$port
load_bin=$build_dir/bin/delaybridge-load
bridge_bin=$build_dir/bin/delaybridge
bridge_pid=""
pipe_pid=""

log() { echo "bench-e2e: $*" >&2; }
die() {
  log "$*"
  exit 1
}

# Field of a delaybridge-load --json report: json FILE 'd["lateness_broker_ms"]["p99"]'
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
now_ms() { date +%s%3N; }

build() {
  [[ ${BENCH_NO_BUILD:-0} == 1 ]] && return
  log "building Release delaybridge and delaybridge-load in $build_dir"
  cmake -S "$repo_root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DDELAYBRIDGE_SANITIZE=OFF >/dev/null
  cmake --build "$build_dir" -j2 --target delaybridge delaybridge-load >/dev/null
}

kafka() { KAFKA_PORT=$port KAFKA_STATE_DIR=$work_dir/kafka bash "$repo_root/scripts/kafka.sh" "$@"; }

cleanup() {
  [[ -n $bridge_pid ]] && bridge_stop
  [[ -n $pipe_pid ]] && kill -TERM "$pipe_pid" 2>/dev/null
  kafka down >/dev/null 2>&1 || true
}

# Runs delaybridge-load with --json; the report goes to $work_dir/NAME.json, progress to stderr.
load() {
  local name=$1
  shift
  local rc=0
  "$load_bin" --bootstrap "$bootstrap" --json "$@" >"$work_dir/$name.json" || rc=$?
  ((rc <= 1)) || die "delaybridge-load ($name) failed with exit $rc"
  ((rc == 0)) || log "WARNING: $name reports lost, duplicated or early records (see $name.json)"
}

# data_dir NAME: where the bridge NAME keeps its DelayLog.
data_dir() {
  if [[ -n ${BENCH_STORAGE_DIR:-} ]]; then echo "$BENCH_STORAGE_DIR/$1"; else echo "$work_dir/$1/data"; fi
}

# write_config NAME DELAY_TOPIC TARGET_TOPIC GROUP [EXTRA]: a bridge config in $work_dir/NAME;
# EXTRA is appended (top-level keys). The benchmark's topics live minutes, so their retention
# (the broker's default 7 days) is allowed to be shorter than max_delay.
write_config() {
  local dir=$work_dir/$1
  local data
  data=$(data_dir "$1")
  rm -rf "$dir" "$data" && mkdir -p "$dir" "$data"
  cat >"$dir/config.yaml" <<EOF
kafka:
  bootstrap.servers: $bootstrap
$(tr ';' '\n' <<<"${BENCH_BRIDGE_KAFKA:-}" | sed '/^ *$/d; s/^ */  /')
routes:
  $2: $3
allowed_targets: [$3]
dead_letter_topic: $2.dlq
group_id: $4
storage:
  dir: $data
$(tr ';' '\n' <<<"${BENCH_BRIDGE_STORAGE:-}" | sed '/^ *$/d; s/^ */  /')
wheel:
  tick_ms: ${BENCH_TICK_MS:-1}
  preload_seconds: 5
$(tr ';' '\n' <<<"${BENCH_BRIDGE_WHEEL:-}" | sed '/^ *$/d; s/^ */  /')
max_delay: 3650d
allow_unsafe_retention: true
$(delivery_lines=$(tr ';' '\n' <<<"${BENCH_BRIDGE_DELIVERY:-}" | sed '/^ *$/d; s/^ */  /')
  [[ -z $delivery_lines ]] || printf 'delivery:\n%s\n' "$delivery_lines")
stats_interval_s: 10
metrics:
  listen: "127.0.0.1:0"
${5:-}
EOF
  if [[ -n ${BENCH_KAFKA_STATS_MS:-} ]]; then
    sed -i "s|^kafka:$|kafka:\\n  statistics.interval.ms: $BENCH_KAFKA_STATS_MS|" "$dir/config.yaml"
    echo "kafka_stats_file: $dir/kafka-stats.jsonl" >>"$dir/config.yaml"
  fi
}

bridge_start() {
  local dir=$work_dir/$1
  nice -n "${BENCH_BRIDGE_NICE:-0}" "$bridge_bin" --config "$dir/config.yaml" >>"$dir/bridge.log" 2>&1 &
  bridge_pid=$!
  sleep 0.2
  kill -0 "$bridge_pid" 2>/dev/null || die "delaybridge exited at start; see $dir/bridge.log"
}

# perf_start NAME / perf_stop: profile the bridge while a run is going (BENCH_PERF=1).
perf_pid=""
perf_start() {
  [[ ${BENCH_PERF:-0} == 1 ]] || return 0
  perf record -g -p "$bridge_pid" -o "$work_dir/$1.perf" >/dev/null 2>&1 &
  perf_pid=$!
}
perf_stop() {
  [[ -n $perf_pid ]] || return 0
  kill -INT "$perf_pid" && wait "$perf_pid" || true
  perf_pid=""
}

bridge_stop() {
  kill -TERM "$bridge_pid" 2>/dev/null || true
  wait "$bridge_pid" 2>/dev/null || true
  bridge_pid=""
}

# pipe_start NAME: the pass-through pipe pipe.in -> pipe.out as a process of its own
# (delaybridge-load --mode pipe), so that its CPU time is read like the bridge's; returns once it
# forwards. It prints a ready line, then at the end its --json report, to $work_dir/NAME.out.
pipe_start() {
  : >"$work_dir/$1.out"
  local properties=() property
  for property in ${BENCH_PIPE_KAFKA:-}; do properties+=(-X "$property"); done
  "$load_bin" --mode pipe --bootstrap "$bootstrap" --delay-topic pipe.in --target-topic pipe.out \
    "${properties[@]}" --json >"$work_dir/$1.out" &
  pipe_pid=$!
  local deadline=$((SECONDS + 30))
  until grep -q 'pipe ready' "$work_dir/$1.out"; do
    kill -0 "$pipe_pid" 2>/dev/null || die "the pipe exited at start; see $work_dir/$1.out"
    ((SECONDS < deadline)) || die "the pipe was not ready within 30 s"
    sleep 0.1
  done
}

# pipe_stop NAME: SIGTERM; the pipe's report (records forwarded) goes to $work_dir/NAME.json.
pipe_stop() {
  kill -TERM "$pipe_pid"
  local rc=0
  wait "$pipe_pid" || rc=$?
  pipe_pid=""
  ((rc == 0)) || die "the pipe exited with $rc; see $work_dir/$1.out"
  tail -n 1 "$work_dir/$1.out" >"$work_dir/$1.json"
}

# proc_kb FIELD: VmRSS or VmHWM of the bridge, in kB.
proc_kb() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$bridge_pid/status"; }
# peak_kb: the bridge's peak RSS since it started or since the last peak_kb, in kB (writing 5 to
# clear_refs resets VmHWM to the current RSS), so each phase of a run gets its own peak.
peak_kb() {
  proc_kb VmHWM
  echo 5 >"/proc/$bridge_pid/clear_refs"
}
mb() { awk -v kb="$1" 'BEGIN { printf "%.1f", kb / 1024 }'; }
# cpu_s PID: user + system CPU seconds of the process so far (its threads included).
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
# cpu_since BEFORE PID FILE: the CPU seconds PID used since cpu_s printed BEFORE, into FILE.
cpu_since() { awk -v a="$1" -v b="$(cpu_s "$2")" 'BEGIN { printf "%.2f\n", b - a }' >"$3"; }
# contention_s PID: the machine's busy and total CPU time in ticks (/proc/stat: everything but
# idle and iowait is busy), PID's threads' time on a CPU and time runnable but waiting for one, in
# ns (/proc/PID/task/*/schedstat, summed over the threads alive at the reading: a thread that
# exits between two readings, such as the DelayLog's sync helpers, is left out), and the broker's
# CPU time in ticks.
contention_s() {
  awk '$1 == "cpu" {
    busy = $2 + $3 + $4 + $7 + $8 + $9
    printf "%.0f %.0f ", busy, busy + $5 + $6 }' /proc/stat
  cat /proc/"$1"/task/*/schedstat 2>/dev/null |
    awk '{ run += $1; wait += $2 } END { printf "%.0f %.0f ", run, wait }'
  awk '{ printf "%.0f\n", $14 + $15 }' "/proc/$(cat "$work_dir/kafka/broker.pid")/stat"
}
# contention_since BEFORE PID FILE: since contention_s printed BEFORE, into FILE: the machine's
# busy share in %, PID's threads' seconds on a CPU and seconds waiting for one, and the broker's
# CPU seconds.
contention_since() {
  echo "$1 $(contention_s "$2")" | awk -v hz="$(getconf CLK_TCK)" '{
    printf "%.1f %.2f %.2f %.2f\n", 100 * ($6 - $1) / ($7 - $2), ($8 - $3) / 1e9, ($9 - $4) / 1e9,
      ($10 - $5) / hz }' >"$3"
}
# threads_snap RUN before|after PID: the CPU time of PID's threads and of the broker's thread pools
# into $work_dir/RUN.{threads,broker_threads}.{before,after}.json (compare two with
# scripts/thread-cpu-delta.py diff).
threads_snap() {
  local tool=$repo_root/scripts/thread-cpu-delta.py
  # A diagnostic: a snapshot that fails (jcmd cannot attach in time) does not end the benchmark.
  python3 "$tool" snap "$3" "$work_dir/$1.threads.$2.json" ||
    log "WARNING: no thread snapshot of $1 ($2)"
  python3 "$tool" snap "$(cat "$work_dir/kafka/broker.pid")" "$work_dir/$1.broker_threads.$2.json" \
    --jvm || log "WARNING: no broker thread snapshot of $1 ($2)"
}
du_mb() { du -sb "$1" | awk '{ printf "%.1f", $1 / 1048576 }'; }

machine() {
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
    "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(uname -r)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# The max-rate runs measure the pipeline, so the tool's producers must not be its bottleneck:
# with its default max.in.flight=1 (tools/load/kafka_client.cc: no busy loop while the broker is
# slow, which the paced runs need) one producer tops out near 200k rec/s here. The baseline and
# the bridge get the same setting.
max_rate_x=(-X max.in.flight=5)

run_throughput() {
  log "baseline: pass-through pipe, $records records of $payload B as fast as possible"
  load baseline_max "${max_rate_x[@]}" --mode passthrough --create-topics "$partitions" \
    --delay-topic pipe.in --target-topic pipe.out --count "$records" --payload-bytes "$payload" \
    --timeout 120s
  log "baseline: drain $records records all due ${drain_due_s} s after producing starts"
  load baseline_drain "${max_rate_x[@]}" --mode passthrough --delay-topic pipe.in \
    --target-topic pipe.out --count "$records" --payload-bytes "$payload" \
    --due-together "${drain_due_s}s" --timeout 120s

  # The bridge needs its topics before it starts; this creates them (one record, due now).
  load bridge_topics --create-topics "$partitions" --create-extra bench.delayed.dlq \
    --delay-topic bench.delayed --target-topic bench.delivered --count 1 --no-consume --warmup 0
  write_config bridge bench.delayed bench.delivered delaybridge-bench
  bridge_start bridge
  local cpu_before
  cpu_before=$(cpu_s "$bridge_pid")
  log "bridge: $records records of $payload B, fixed 1 s delay, as fast as possible"
  perf_start bridge_max
  load bridge_max "${max_rate_x[@]}" --delay-topic bench.delayed --target-topic bench.delivered \
    --count "$records" --payload-bytes "$payload" --delay fixed:1s --timeout 120s
  local peak_max_kb peak_drain_kb peak_half_kb
  cpu_since "$cpu_before" "$bridge_pid" "$work_dir/bridge_max.cpu_s"
  peak_max_kb=$(peak_kb)
  perf_stop
  log "bridge: drain $records records all due ${drain_due_s} s after producing starts"
  load bridge_drain "${max_rate_x[@]}" --delay-topic bench.delayed --target-topic bench.delivered \
    --count "$records" --payload-bytes "$payload" --due-together "${drain_due_s}s" --timeout 120s
  peak_drain_kb=$(peak_kb)

  local bridge_rate half_rate
  bridge_rate=$(json "$work_dir/bridge_max.json" 'd["delivery_rate_per_s"]')
  half_rate=$(awk -v r="$bridge_rate" 'BEGIN { printf "%.0f", r / 2 }')
  log "lateness at 50% of the bridge's max rate: $half_rate rec/s for $lateness_s s"
  perf_start bridge_half
  local contention_before
  cpu_before=$(cpu_s "$bridge_pid")
  contention_before=$(contention_s "$bridge_pid")
  load bridge_half --delay-topic bench.delayed --target-topic bench.delivered \
    --rate "$half_rate" --count $((half_rate * lateness_s)) --payload-bytes "$payload" \
    --delay uniform:1s..10s --headers mixed --timeout 60s
  cpu_since "$cpu_before" "$bridge_pid" "$work_dir/bridge_half.cpu_s"
  contention_since "$contention_before" "$bridge_pid" "$work_dir/bridge_half.contention"
  peak_half_kb=$(peak_kb)
  perf_stop
  pipe_start pipe_half
  cpu_before=$(cpu_s "$pipe_pid")
  contention_before=$(contention_s "$pipe_pid")
  load baseline_half --delay-topic pipe.in --target-topic pipe.out \
    --rate "$half_rate" --count $((half_rate * lateness_s)) --payload-bytes "$payload" --timeout 60s
  cpu_since "$cpu_before" "$pipe_pid" "$work_dir/pipe_half.cpu_s"
  contention_since "$contention_before" "$pipe_pid" "$work_dir/pipe_half.contention"
  pipe_stop pipe_half

  local rss_kb delaylog
  rss_kb=$(proc_kb VmRSS)
  delaylog=$(du_mb "$(data_dir bridge)")
  bridge_stop
  print_throughput_table "$rss_kb" "$peak_max_kb,$peak_drain_kb,$peak_half_kb" "$delaylog" \
    "$(cat "$work_dir/bridge_max.cpu_s")"
}

run_lateness() {
  local rates
  read -r -a rates <<<"${BENCH_RATES:-2000 10000 25000 50000 75000}"
  load lateness_topics --create-topics "$partitions" --create-extra bench.delayed.dlq \
    --delay-topic bench.delayed --target-topic bench.delivered --count 1 --no-consume --warmup 0
  load lateness_pipe_topics --create-topics "$partitions" --delay-topic pipe.in \
    --target-topic pipe.out --count 1 --no-consume --warmup 0
  # A fresh broker's first seconds under load are its JVM warming up: whichever ran first, the
  # bridge or the pipe, had a p99 several times its own in a later run at the same rate.
  if ((warmup_s > 0)); then
    log "warming the broker up: the pipe at 25000 rec/s for $warmup_s s (not measured)"
    pipe_start pipe_warmup
    load broker_warmup --delay-topic pipe.in --target-topic pipe.out --rate 25000 \
      --count $((25000 * warmup_s)) --payload-bytes "$payload" --timeout 60s
    pipe_stop pipe_warmup
  fi
  local direct_properties=() property
  for property in ${BENCH_DIRECT_KAFKA:-}; do direct_properties+=(-X "$property"); done
  write_config bridge bench.delayed bench.delivered delaybridge-bench
  bridge_start bridge
  # The pipe's traffic leaves code paths of the broker cold that only the bridge's clients use
  # (its JIT compiler still took 10 s of CPU in the bridge's first run): the bridge warms them.
  if ((warmup_s > 0)); then
    log "warming the broker up for the bridge: 25000 rec/s for $warmup_s s (not measured)"
    load bridge_warmup --delay-topic bench.delayed --target-topic bench.delivered --rate 25000 \
      --count $((25000 * warmup_s)) --payload-bytes "$payload" --delay uniform:1s..10s \
      --headers mixed --timeout 60s
  fi
  local rate
  for rate in "${rates[@]}"; do
    log "lateness at $rate rec/s for $lateness_s s: bridge, baseline, then direct"
    # A count, not a duration, so that the bridge and the pipe handle the same records.
    local count=$((rate * lateness_s)) cpu_before contention_before
    # jcmd, a JVM of its own, runs outside the measured span.
    threads_snap "bridge_at_$rate" before "$bridge_pid"
    cpu_before=$(cpu_s "$bridge_pid")
    contention_before=$(contention_s "$bridge_pid")
    perf_start "bridge_at_$rate"
    load "bridge_at_$rate" --delay-topic bench.delayed --target-topic bench.delivered \
      --rate "$rate" --count "$count" --payload-bytes "$payload" \
      --delay uniform:1s..10s --headers mixed --timeout 60s \
      --late-records "$work_dir/bridge_at_$rate.late" --late-over 5ms
    perf_stop
    cpu_since "$cpu_before" "$bridge_pid" "$work_dir/bridge_at_$rate.cpu_s"
    contention_since "$contention_before" "$bridge_pid" "$work_dir/bridge_at_$rate.contention"
    threads_snap "bridge_at_$rate" after "$bridge_pid"
    # The same load against the pipe process: no delay, so each record is due when produced.
    pipe_start "pipe_at_$rate"
    threads_snap "pipe_at_$rate" before "$pipe_pid"
    cpu_before=$(cpu_s "$pipe_pid")
    contention_before=$(contention_s "$pipe_pid")
    load "baseline_at_$rate" --delay-topic pipe.in --target-topic pipe.out \
      --rate "$rate" --count "$count" --payload-bytes "$payload" --timeout 60s \
      --late-records "$work_dir/baseline_at_$rate.late" --late-over 5ms
    cpu_since "$cpu_before" "$pipe_pid" "$work_dir/pipe_at_$rate.cpu_s"
    contention_since "$contention_before" "$pipe_pid" "$work_dir/pipe_at_$rate.contention"
    threads_snap "pipe_at_$rate" after "$pipe_pid"
    pipe_stop "pipe_at_$rate"
    # The floor: the same records produced straight to the target, due when produced.
    load "direct_at_$rate" --mode direct --target-topic pipe.out "${direct_properties[@]}" \
      --rate "$rate" --count "$count" --payload-bytes "$payload" --timeout 60s \
      --late-records "$work_dir/direct_at_$rate.late" --late-over 5ms
  done
  bridge_stop
  python3 - "$work_dir" "${rates[@]}" <<'EOF'
import json, sys
w, rates = sys.argv[1], sys.argv[2:]
load = lambda n: json.load(open(f"{w}/{n}.json"))
cpu = lambda n: float(open(f"{w}/{n}.cpu_s").read())
print("\nlateness by broker LogAppendTime, ms (bridge: delays uniform 1..10 s; baseline: the pipe")
print("process; direct: the load tool producing straight to the target, due when produced)")
print("| rate rec/s | run | n | p50 | p90 | p99 | p99.9 | max | early | lost | dup |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for rate in rates:
    for run in ("bridge", "baseline", "direct"):
        d = load(f"{run}_at_{rate}")
        l = d["lateness_broker_ms"]
        print(f"| {rate} | {run} | {l['count']} | {l['p50']:.1f} | {l['p90']:.1f} | {l['p99']:.1f} | {l['p999']:.1f} | {l['max']:.1f} | {l['early']} | {d['lost']} | {d['duplicates']} |")
print("\nCPU: user + system time of the bridge process and of the pipe process during their runs")
print("(from /proc/PID/stat), per record delivered in the run")
print("| rate rec/s | records bridge | records pipe | bridge CPU s | pipe CPU s | bridge µs/rec | pipe µs/rec | bridge / pipe |")
print("|---|---|---|---|---|---|---|---|")
for rate in rates:
    n_bridge, n_pipe = load(f"bridge_at_{rate}")["delivered"], load(f"baseline_at_{rate}")["delivered"]
    c_bridge, c_pipe = cpu(f"bridge_at_{rate}"), cpu(f"pipe_at_{rate}")
    us_bridge = c_bridge * 1e6 / n_bridge if n_bridge else float("nan")
    us_pipe = c_pipe * 1e6 / n_pipe if n_pipe else float("nan")
    ratio = us_bridge / us_pipe if us_pipe else float("nan")
    print(f"| {rate} | {n_bridge} | {n_pipe} | {c_bridge:.2f} | {c_pipe:.2f} | {us_bridge:.1f} | {us_pipe:.1f} | {ratio:.2f} |")
print("\nCPU contention during each run: the machine's busy share (/proc/stat), the time the")
print("process's threads spent on a CPU and runnable but waiting for one (/proc/PID/task/*/schedstat),")
print("and the broker's CPU time")
print("| rate rec/s | run | machine busy % | threads on a CPU s | threads waiting for a CPU s | broker CPU s |")
print("|---|---|---|---|---|---|")
for rate in rates:
    for run, name in (("bridge", "bridge"), ("baseline", "pipe")):
        busy, on_cpu, waiting, broker = open(f"{w}/{name}_at_{rate}.contention").read().split()
        print(f"| {rate} | {run} | {busy} | {on_cpu} | {waiting} | {broker} |")
EOF
  echo
  echo "records later than 5 ms (by LogAppendTime) and the broker's stop-the-world pauses in each"
  echo "run (scripts/broker-pauses.py): a record whose wait overlaps a pause could not be appended"
  echo "before the pause ended, whoever delivered it"
  local runs=() run report
  for rate in "${rates[@]}"; do
    for run in bridge baseline direct; do
      report=$work_dir/${run}_at_$rate.json
      runs+=("$rate $run=$work_dir/${run}_at_$rate.late:$(json "$report" 'd["delivered"]'):$(
        json "$report" 'd["first_send_ms"]'):$(json "$report" 'd["last_delivery_ms"]')")
    done
  done
  python3 "$repo_root/scripts/broker-pauses.py" "$work_dir/kafka" "${runs[@]}"
}

print_throughput_table() {
  local w=$work_dir
  python3 - "$w" "$records" "$payload" "$1" "$2" "$3" "$4" <<'EOF'
import json, sys
w, records, payload, rss_kb, peaks_kb, delaylog_mb, cpu_s = sys.argv[1:]
peak_mb = [int(kb) / 1024 for kb in peaks_kb.split(",")]
names = ("baseline_max", "bridge_max", "baseline_drain", "bridge_drain", "baseline_half", "bridge_half")
r = {n: json.load(open(f"{w}/{n}.json")) for n in names}
rate = lambda n: r[n]["delivery_rate_per_s"]
print(f"\n{records} records of {payload} B; delivery rate = delivered / (last arrival - earliest deliver-at)")
print(f"| run | produce rec/s | delivery rec/s | delivered | lost | dup | early |")
print(f"|---|---|---|---|---|---|---|")
for n in names[:4]:
    d = r[n]
    print(f"| {n} | {d['produce_rate_per_s']:.0f} | {d['delivery_rate_per_s']:.0f} | {d['delivered']} | {d['lost']} | {d['duplicates']} | {d['early']} |")
print(f"\nbridge / baseline: sustained {rate('bridge_max') / rate('baseline_max'):.2f}, drain {rate('bridge_drain') / rate('baseline_drain'):.2f}")
print(f"bridge CPU for the sustained run: {cpu_s} s")
print(f"\nlateness at {r['bridge_half']['target_rate_per_s']:.0f} rec/s (50% of bridge max), ms")
print("| run | measure | n | p50 | p90 | p99 | p99.9 | max | early | lost | dup |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for n in ("bridge_half", "baseline_half"):
    d = r[n]
    for m, label in (("lateness_broker_ms", "broker LogAppendTime"), ("lateness_consume_ms", "consumer receive")):
        l = d[m]
        print(f"| {n} | {label} | {l['count']} | {l['p50']:.3f} | {l['p90']:.3f} | {l['p99']:.3f} | {l['p999']:.3f} | {l['max']:.3f} | {l['early']} | {d['lost']} | {d['duplicates']} |")
cpu_bridge, cpu_pipe = (float(open(f"{w}/{n}.cpu_s").read()) for n in ("bridge_half", "pipe_half"))
us_bridge = cpu_bridge * 1e6 / r["bridge_half"]["delivered"]
us_pipe = cpu_pipe * 1e6 / r["baseline_half"]["delivered"]
print(f"CPU at 50% (user + system, per record delivered): bridge {cpu_bridge:.2f} s = {us_bridge:.1f} µs, "
      f"pipe process {cpu_pipe:.2f} s = {us_pipe:.1f} µs; bridge / pipe {us_bridge / us_pipe:.2f}")
print("CPU contention at 50%: the machine's busy share (/proc/stat), the seconds the process's threads")
print("spent on a CPU and runnable but waiting for one (/proc/PID/task/*/schedstat), the broker's CPU")
print("| run | machine busy % | threads on a CPU s | threads waiting for a CPU s | broker CPU s |")
print("|---|---|---|---|---|")
for run, name in (("bridge_half", "bridge_half"), ("baseline_half", "pipe_half")):
    busy, on_cpu, waiting, broker = open(f"{w}/{name}.contention").read().split()
    print(f"| {run} | {busy} | {on_cpu} | {waiting} | {broker} |")
print(f"\nbridge peak RSS (VmHWM) while ingesting at max rate {peak_mb[0]:.1f} MB, draining {peak_mb[1]:.1f} MB, "
      f"at 50% {peak_mb[2]:.1f} MB (peak {max(peak_mb):.1f} MB); RSS after {int(rss_kb)/1024:.1f} MB; DelayLog {delaylog_mb} MB")
EOF
}

run_scale() {
  load scale_topics --create-topics "$partitions" --create-extra scale.delayed.dlq \
    --delay-topic scale.delayed --target-topic scale.delivered --count 1 --no-consume --warmup 0
  write_config scale scale.delayed scale.delivered delaybridge-scale
  bridge_start scale
  sleep 2
  local rows="| pending | fill s (produce + bridge commit) | bridge RSS MB | VmHWM MB | DelayLog MB |"
  rows+=$'\n|---|---|---|---|---|'
  rows+=$'\n'"| 0 | - | $(mb "$(proc_kb VmRSS)") | $(mb "$(proc_kb VmHWM)") | $(du_mb "$(data_dir scale)") |"
  local filled=0 step start_ms
  for step in "${scale_steps[@]}"; do
    ((step <= scale_total)) || break
    log "scale: filling to $step pending ($scale_delay, 32 B values)"
    start_ms=$(now_ms)
    load "scale_fill_$step" --delay-topic scale.delayed --target-topic scale.delivered \
      --count $((step - filled)) --no-consume --warmup 0 --delay "$scale_delay" \
      --payload-bytes 32 --keys 100000 --seed "$step" --wait-group delaybridge-scale \
      --timeout "${scale_timeout_s}s"
    [[ $(json "$work_dir/scale_fill_$step.json" 'd["group_caught_up"]') == True ]] ||
      die "bridge did not commit $step records within $scale_timeout_s s"
    rows+=$'\n'"| $step | $(awk -v s="$start_ms" -v e="$(now_ms)" 'BEGIN { printf "%.1f", (e - s) / 1000 }') | $(mb "$(proc_kb VmRSS)") | $(mb "$(proc_kb VmHWM)") | $(du_mb "$(data_dir scale)") |"
    filled=$step
    log "scale: ${rows##*$'\n'}"
  done

  log "scale: restart with $filled pending (SIGTERM, start, probes due 500 ms later)"
  local stop_start stop_ms restart_ms
  stop_start=$(now_ms)
  bridge_stop
  stop_ms=$(($(now_ms) - stop_start))
  restart_ms=$(now_ms)
  bridge_start scale
  load scale_restart_probe --delay-topic scale.delayed --target-topic scale.delivered \
    --count 100 --warmup 0 --delay fixed:500ms --timeout 120s
  local first_ms
  first_ms=$(json "$work_dir/scale_restart_probe.json" 'd["first_delivery_ms"]')
  rows+=$'\n'"| $filled after restart | - | $(mb "$(proc_kb VmRSS)") | $(mb "$(proc_kb VmHWM)") | $(du_mb "$(data_dir scale)") |"
  bridge_stop
  echo
  echo "$rows"
  echo
  echo "clean stop (SIGTERM to exit): $stop_ms ms"
  echo "restart to first delivery of a probe due 500 ms after the restart: $((first_ms - restart_ms)) ms"
  echo "probes: delivered $(json "$work_dir/scale_restart_probe.json" 'd["delivered"]') of 100," \
    "lateness (broker) p50 $(json "$work_dir/scale_restart_probe.json" 'd["lateness_broker_ms"]["p50"]') ms," \
    "max $(json "$work_dir/scale_restart_probe.json" 'd["lateness_broker_ms"]["max"]') ms," \
    "early $(json "$work_dir/scale_restart_probe.json" 'd["early"]')"
}

# fill NAME TOPIC GROUP COUNT DELAY: produces COUNT small records and waits until GROUP has read
# them all; prints the seconds it took.
fill() {
  local start_ms
  start_ms=$(now_ms)
  load "$1" --delay-topic "$2" --target-topic "$2.out" --count "$4" --no-consume --warmup 0 \
    --delay "$5" --payload-bytes 32 --keys 100000 --wait-group "$3" --timeout "${scale_timeout_s}s"
  [[ $(json "$work_dir/$1.json" 'd["group_caught_up"]') == True ]] ||
    die "bridge did not read $4 records within $scale_timeout_s s"
  awk -v s="$start_ms" -v e="$(now_ms)" 'BEGIN { printf "%.1f", (e - s) / 1000 }'
}

run_spread() {
  local rows="| delays | records | fill s | rec/s | bridge VmHWM MB |"$'\n'"|---|---|---|---|---|"
  local spread name seconds one_hour_rate=""
  for spread in 1h..2h 1h..30d; do
    name=spread_${spread//./_}
    load "${name}_topics" --create-topics "$partitions" --create-extra "$name.in.dlq" \
      --delay-topic "$name.in" --target-topic "$name.in.out" --count 1 --no-consume --warmup 0
    write_config "$name" "$name.in" "$name.in.out" "delaybridge-$name"
    bridge_start "$name"
    log "spread: $spread_records records due $spread ahead"
    seconds=$(fill "${name}_fill" "$name.in" "delaybridge-$name" "$spread_records" "uniform:$spread")
    local hwm_kb
    hwm_kb=$(proc_kb VmHWM)
    bridge_stop
    local rate
    rate=$(awk -v n="$spread_records" -v s="$seconds" 'BEGIN { printf "%.0f", n / s }')
    [[ -z $one_hour_rate ]] && one_hour_rate=$rate
    rows+=$'\n'"| $spread | $spread_records | $seconds | $rate | $(mb "$hwm_kb") |"
  done
  echo
  echo "$rows"
  echo
  echo "30-day spread / 1-hour spread: $(awk -v a="$rate" -v b="$one_hour_rate" 'BEGIN { printf "%.2f", a / b }')"
}

# rebuilt_ms NAME: the longest "rebuilt ... in N ms" of the bridge NAME (0 when none).
rebuilt_ms() {
  grep -o 'rebuilt .* in [0-9]* ms' "$work_dir/$1/bridge.log" | awk '{ v = $(NF - 1); if (v > m) m = v } END { print m + 0 }'
}

run_failover() {
  load failover_topics --create-topics "$partitions" --create-extra failover.in.dlq \
    --delay-topic failover.in --target-topic failover.in.out --count 1 --no-consume --warmup 0
  local identity="group_instance_id: bench-failover"
  write_config fo_first failover.in failover.in.out delaybridge-failover "$identity"
  write_config fo_second failover.in failover.in.out delaybridge-failover "$identity"
  write_config fo_third failover.in failover.in.out delaybridge-failover "$identity"
  bridge_start fo_first
  log "failover: filling $failover_records records due 1 h..2 h ahead"
  local fill_s
  fill_s=$(fill failover_fill failover.in delaybridge-failover "$failover_records" uniform:1h..2h)
  kill -KILL "$bridge_pid" && wait "$bridge_pid" 2>/dev/null || true
  bridge_pid=""
  local kill_ms
  kill_ms=$(now_ms)
  log "failover: killed; replacement with an empty disk rebuilds $failover_records records"
  bridge_start fo_second
  local deadline=$((SECONDS + 600))
  until (($(grep -c 'INFO  rebuilt ' "$work_dir/fo_second/bridge.log" || true) >= partitions)); do
    ((SECONDS < deadline)) || die "replacement did not rebuild within 600 s"
    sleep 0.5
  done
  local rebuild_ms
  rebuild_ms=$(rebuilt_ms fo_second)

  log "failover: steady stream due 2 s ahead; kill and replace under it"
  load failover_stream --delay-topic failover.in --target-topic failover.in.out --rate 2000 \
    --duration 30s --payload-bytes 100 --delay fixed:2s --timeout 120s &
  local load_pid=$!
  sleep 12
  local second_kill_ms
  second_kill_ms=$(now_ms)
  kill -KILL "$bridge_pid" && wait "$bridge_pid" 2>/dev/null || true
  bridge_start fo_third
  wait "$load_pid" || true
  local second_rebuild_ms
  second_rebuild_ms=$(rebuilt_ms fo_third)
  bridge_stop
  echo
  echo "fill of $failover_records records (1 h..2 h ahead): $fill_s s"
  echo "rebuild by an empty replacement: $failover_records records in $rebuild_ms ms:" \
    "$(awk -v n="$failover_records" -v ms="$rebuild_ms" 'BEGIN { printf "%.0f", n / (ms / 1000) }') rec/s"
  echo "failover under a 2,000 rec/s stream (killed at $second_kill_ms, replacement rebuilt in" \
    "$second_rebuild_ms ms): lateness of the stream (broker LogAppendTime) p50" \
    "$(json "$work_dir/failover_stream.json" 'd["lateness_broker_ms"]["p50"]') ms, p99" \
    "$(json "$work_dir/failover_stream.json" 'd["lateness_broker_ms"]["p99"]') ms, max (the gap)" \
    "$(json "$work_dir/failover_stream.json" 'd["lateness_broker_ms"]["max"]') ms; lost" \
    "$(json "$work_dir/failover_stream.json" 'd["lost"]'), duplicates" \
    "$(json "$work_dir/failover_stream.json" 'd["duplicates"]'), early" \
    "$(json "$work_dir/failover_stream.json" 'd["early"]')"
  echo "(first kill at $kill_ms)"
}

# broker_cpu_s: the broker's CPU seconds so far.
broker_cpu_s() { cpu_s "$(cat "$work_dir/kafka/broker.pid")"; }
# difference A B: B - A, two decimals. percent PART WHOLE: 100 * PART / WHOLE, two decimals.
difference() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
percent() { awk -v p="$1" -v w="$2" 'BEGIN { printf "%.2f", 100 * p / w }'; }

run_idle() {
  local rows="| round | bridge | kafka: extra | bridge CPU s | bridge CPU % of a core"
  rows+=" | broker CPU s |"
  rows+=$'\n'"|---|---|---|---|---|---|"
  local variants=("") round i name extra
  IFS='|' read -r -a given <<<"$idle_kafka"
  variants+=("${given[@]}")
  for ((round = 1; round <= idle_rounds; round++)); do
    for i in "${!variants[@]}"; do
      extra=${variants[$i]}
      name=idle_${round}_$i
      load "${name}_topics" --create-topics "$partitions" --create-extra "$name.in.dlq" \
        --delay-topic "$name.in" --target-topic "$name.in.out" --count 1 --no-consume --warmup 0
      BENCH_BRIDGE_KAFKA="${BENCH_BRIDGE_KAFKA:-};$extra" \
        write_config "$name" "$name.in" "$name.in.out" "delaybridge-$name"
      bridge_start "$name"
      log "idle: $name (kafka: ${extra:-defaults}), $idle_settle_s s to settle, $idle_s s measured"
      sleep "$idle_settle_s"
      local bridge_before broker_before bridge_used broker_used
      bridge_before=$(cpu_s "$bridge_pid")
      broker_before=$(broker_cpu_s)
      sleep "$idle_s"
      bridge_used=$(difference "$bridge_before" "$(cpu_s "$bridge_pid")")
      broker_used=$(difference "$broker_before" "$(broker_cpu_s)")
      bridge_stop
      rows+=$'\n'"| $round | $i | ${extra:-none} | $bridge_used | $(percent "$bridge_used" "$idle_s")"
      rows+=" | $broker_used |"
    done
  done
  echo
  echo "$rows"
}

run_eos() {
  # Its bridges' configs have a delivery: section of their own; YAML allows one per map.
  [[ -z ${BENCH_BRIDGE_DELIVERY:-} ]] || die "BENCH_BRIDGE_DELIVERY cannot be used with eos"
  log "baseline: pass-through pipe, $records records of $payload B as fast as possible"
  load eos_baseline_max "${max_rate_x[@]}" --mode passthrough --create-topics "$partitions" \
    --delay-topic pipe.in --target-topic pipe.out --count "$records" --payload-bytes "$payload" \
    --timeout 120s
  local guarantee rate rates=()
  for guarantee in at_least_once exactly_once; do
    load "${guarantee}_topics" --create-topics "$partitions" --create-extra "$guarantee.delayed.dlq" \
      --delay-topic "$guarantee.delayed" --target-topic "$guarantee.delivered" --count 1 \
      --no-consume --warmup 0
    write_config "$guarantee" "$guarantee.delayed" "$guarantee.delivered" \
      "delaybridge-$guarantee" $'delivery:\n  guarantee: '"$guarantee"
    bridge_start "$guarantee"
    log "$guarantee: $records records of $payload B, fixed 1 s delay, as fast as possible"
    load "${guarantee}_max" "${max_rate_x[@]}" --delay-topic "$guarantee.delayed" \
      --target-topic "$guarantee.delivered" --count "$records" --payload-bytes "$payload" \
      --delay fixed:1s --timeout 180s
    if ((${#rates[@]} == 0)); then
      rates=("$(json "$work_dir/at_least_once_max.json" 'round(d["delivery_rate_per_s"] / 2)')"
        "$eos_low_rate")
    fi
    for rate in "${rates[@]}"; do
      log "$guarantee: lateness at $rate rec/s for $lateness_s s"
      load "${guarantee}_at_$rate" --delay-topic "$guarantee.delayed" \
        --target-topic "$guarantee.delivered" --rate "$rate" --duration "${lateness_s}s" \
        --payload-bytes "$payload" --delay uniform:1s..10s --headers mixed --timeout 60s
      grep 'stats:' "$work_dir/$guarantee/bridge.log" | tail -1 >"$work_dir/${guarantee}_at_$rate.stats"
    done
    bridge_stop
  done
  for rate in "${rates[@]}"; do
    load "eos_baseline_at_$rate" --mode passthrough --delay-topic pipe.in --target-topic pipe.out \
      --rate "$rate" --duration "${lateness_s}s" --payload-bytes "$payload" --timeout 60s
  done
  python3 - "$work_dir" "$records" "$payload" "${rates[@]}" <<'EOF'
import json, sys
w, records, payload, rates = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
load = lambda n: json.load(open(f"{w}/{n}.json"))
print(f"\n{records} records of {payload} B, due 1 s after produced; delivery rate as in throughput")
print("| run | produce rec/s | delivery rec/s | delivered | lost | dup | early |")
print("|---|---|---|---|---|---|---|")
m = {n: load(n) for n in ("eos_baseline_max", "at_least_once_max", "exactly_once_max")}
for n, d in m.items():
    print(f"| {n} | {d['produce_rate_per_s']:.0f} | {d['delivery_rate_per_s']:.0f} | {d['delivered']} | {d['lost']} | {d['duplicates']} | {d['early']} |")
rate = lambda n: m[n]["delivery_rate_per_s"]
print(f"\nexactly_once / at_least_once sustained: {rate('exactly_once_max') / rate('at_least_once_max'):.2f}; "
      f"at_least_once / pipe: {rate('at_least_once_max') / rate('eos_baseline_max'):.2f}")
for r in rates:
    print(f"\nlateness at {r} rec/s (delays uniform 1..10 s, mixed headers; the pipe: none), ms")
    print("| run | measure | n | p50 | p90 | p99 | p99.9 | max | early | lost | dup |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for g in ("exactly_once", "at_least_once", "eos_baseline"):
        d = load(f"{g}_at_{r}")
        for key, label in (("lateness_broker_ms", "broker LogAppendTime"), ("lateness_consume_ms", "consumer receive")):
            l = d[key]
            print(f"| {g} | {label} | {l['count']} | {l['p50']:.1f} | {l['p90']:.1f} | {l['p99']:.1f} | {l['p999']:.1f} | {l['max']:.1f} | {l['early']} | {d['lost']} | {d['duplicates']} |")
    for g in ("at_least_once", "exactly_once"):
        print(f"{g} stats line after it: " + open(f"{w}/{g}_at_{r}.stats").read().strip())
EOF
}

mkdir -p "$work_dir"
build
[[ -x $load_bin && -x $bridge_bin ]] || die "missing $load_bin or $bridge_bin"
trap cleanup EXIT
kafka down >/dev/null 2>&1 || true
log "starting Apache Kafka on $bootstrap"
kafka up >&2
machine
case $mode in
  idle) run_idle ;;
  throughput) run_throughput ;;
  lateness) run_lateness ;;
  scale) run_scale ;;
  spread) run_spread ;;
  failover) run_failover ;;
  eos) run_eos ;;
  all)
    run_throughput
    run_lateness
    run_scale
    run_spread
    run_failover
    run_eos
    ;;
esac
echo "raw reports: $work_dir/*.json, bridge logs: $work_dir/*/bridge.log"
