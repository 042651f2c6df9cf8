#!/usr/bin/env bash
# Delayed delivery through DelayBridge from the shell, with kcat.
#
# Produces two records to the delay topic, one with x-delay (milliseconds after the record's
# timestamp) and one with x-deliver-at (Unix epoch milliseconds), then consumes the target topic
# and checks that each arrived on time, with its key, value and trace-id header, plus the
# x-delay-source header naming the delay-topic record it came from. Exits 1 with a message when
# not.
#
# Environment: BOOTSTRAP_SERVERS (localhost:9092), DELAY_TOPIC (delayed), TARGET_TOPIC
# (delivered): the defaults match the bridge's shipped config.yaml.
set -euo pipefail

bootstrap=${BOOTSTRAP_SERVERS:-localhost:9092}
delay_topic=${DELAY_TOPIC:-delayed}
target_topic=${TARGET_TOPIC:-delivered}
readonly grace_ms=30000 # how late a record may be before the example calls it lost

# EPOCHREALTIME is seconds.microseconds (the separator follows the locale); drop it.
now_ms() { echo $((${EPOCHREALTIME//[!0-9]/} / 1000)); }
fail() {
  echo "FAIL $*" >&2
  exit 1
}

# A run id in every key: the example ignores records of earlier runs in a shared topic.
run=$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
reminder_key=order-42-$run
invoice_key=invoice-7-$run
declare -A value trace_id due source
value[$reminder_key]="payment reminder for order 42"
value[$invoice_key]="invoice 7 is due"
trace_id[$reminder_key]=$run-a
trace_id[$invoice_key]=$run-b

# kcat sends one record per input line, with the headers given by -H, and exits once the broker
# acknowledged it. It cannot set the record's timestamp: the client stamps it, and x-delay counts
# from that stamp, read back below.
produce() { # key, header=value
  printf '%s\n' "${value[$1]}" |
    kcat -P -b "$bootstrap" -t "$delay_topic" -X acks=all -k "$1" -H "trace-id=${trace_id[$1]}" -H "$2"
}
produce "$reminder_key" x-delay=3000
due[$invoice_key]=$(($(now_ms) + 4000))
produce "$invoice_key" "x-deliver-at=${due[$invoice_key]}"

# Read both records back from the delay topic (-e: stop at its end) for the timestamp the client
# gave the x-delay record and each record's partition and offset, which x-delay-source names.
while IFS=$'\t' read -r key partition offset timestamp; do
  [[ -v "value[$key]" ]] || continue
  source[$key]=$delay_topic/$partition/$offset
  [[ $key == "$reminder_key" ]] && due[$key]=$((timestamp + 3000))
  echo "sent $key as ${source[$key]} at $timestamp, due at ${due[$key]}"
done < <(kcat -C -b "$bootstrap" -t "$delay_topic" -o beginning -e -q -f '%k\t%p\t%o\t%T\n')
[[ -v "source[$reminder_key]" && -v "source[$invoice_key]" ]] ||
  fail "the records just produced are not in $delay_topic"

# Watch the target topic until both arrived or the later one is overdue by the grace period.
# -u: each record is printed (and time-stamped here) as it arrives. %h lists the headers as
# name=value,name=value; the values used here contain no comma.
failures=()
declare -A seen=()
deadline_s=$(((${due[$invoice_key]} + grace_ms - $(now_ms)) / 1000 + 1))
exec {records}< <(exec timeout "$deadline_s" kcat -C -u -b "$bootstrap" -t "$target_topic" \
  -o beginning -q -f '%k\t%p\t%T\t%h\t%s\n')
watcher=$!
pending=2
while ((pending > 0)) && IFS=$'\t' read -r -u "$records" key partition timestamp headers payload; do
  received=$(now_ms)
  [[ -v "value[$key]" && ! -v "seen[$key]" ]] || continue
  seen[$key]=1
  pending=$((pending - 1))
  echo "received $key from $target_topic-$partition at $received (record timestamp $timestamp):" \
    "$((received - ${due[$key]})) ms after due"
  # The delivered record's timestamp is when the bridge produced it: never before due.
  if ((timestamp < ${due[$key]} || received < ${due[$key]})); then
    failures+=("$key: early: timestamp $timestamp, received $received, due ${due[$key]}")
  fi
  if ((received > ${due[$key]} + grace_ms)); then
    failures+=("$key: late: received $((received - ${due[$key]})) ms after due")
  fi
  [[ $payload == "${value[$key]}" ]] ||
    failures+=("$key: value \"$payload\", expected \"${value[$key]}\"")
  # The last occurrence of a header counts, as in Java's Headers.lastHeader.
  declare -A got=()
  IFS=, read -r -a pairs <<<"$headers"
  for pair in "${pairs[@]}"; do got[${pair%%=*}]=${pair#*=}; done
  [[ ${got[trace-id]:-} == "${trace_id[$key]}" ]] ||
    failures+=("$key: trace-id header \"${got[trace-id]:-}\", expected \"${trace_id[$key]}\"")
  [[ ${got[x-delay-source]:-} == "${source[$key]}" ]] ||
    failures+=("$key: x-delay-source \"${got[x-delay-source]:-}\", expected \"${source[$key]}\"")
done
kill "$watcher" 2>/dev/null || true
exec {records}<&-

for key in "$reminder_key" "$invoice_key"; do
  [[ -v "seen[$key]" ]] || failures+=("$key: not delivered to $target_topic within \
$((grace_ms / 1000)) s after its due time ${due[$key]}")
done
if ((${#failures[@]})); then
  printf 'FAIL %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "kcat example: both records delivered on time and intact"
