#!/usr/bin/env python3
"""Lines the lateness tail of runs up with the broker's stop-the-world pauses: how many of the
records later than the threshold waited across a pause, during which the broker appended
nothing.

    scripts/broker-pauses.py GC_LOG_DIR NAME=LATE_FILE:DELIVERED:FIRST_MS:LAST_MS [...]

GC_LOG_DIR holds the broker's gc.log* (scripts/kafka.sh logs every safepoint there: GC pauses,
code cache flushes, ...). A LATE_FILE is delaybridge-load --late-records output: one
"deliver_at_ms log_append_time_ms" line per record later than --late-over. DELIVERED is the
run's delivered record count, FIRST_MS..LAST_MS its window (the load tool's first_send_ms and
last_delivery_ms). Prints a markdown table row per run:

  late          records later than the threshold, and their share of the delivered ones
  pauses        broker safepoints of at least 1 ms inside the window: count, total and longest ms
  paused share  the share of the window the broker spent in those pauses
  across pause  the share of the late records whose wait (deliver-at to LogAppendTime)
                overlaps such a pause
"""
import bisect
import datetime
import glob
import re
import sys

SAFEPOINT = re.compile(r"^\[([^\]]+)\].* Safepoint .*Total: (\d+) ns")
MIN_PAUSE_MS = 1.0


def pauses(gc_dir):
    """[(start_ms, end_ms)] of the broker's safepoints of at least MIN_PAUSE_MS, sorted, and the
    end of the first safepoint logged at all (where the logs begin)."""
    paths = glob.glob(f"{gc_dir}/gc.log*")
    if not paths:
        sys.exit(f"broker-pauses.py: no gc.log* in {gc_dir}")
    found = []
    logged_from_ms = float("inf")
    for path in paths:
        with open(path) as f:
            for line in f:
                m = SAFEPOINT.match(line)
                if not m:
                    continue
                # The line is written when the safepoint ends.
                end = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z")
                end_ms = end.timestamp() * 1000
                logged_from_ms = min(logged_from_ms, end_ms)
                total_ms = int(m.group(2)) / 1e6
                if total_ms >= MIN_PAUSE_MS:
                    found.append((end_ms - total_ms, end_ms))
    return sorted(found), logged_from_ms


def row(name, spec, all_pauses, logged_from_ms):
    late_file, delivered, first_ms, last_ms = spec.rsplit(":", 3)
    delivered, first_ms, last_ms = int(delivered), float(first_ms), float(last_ms)
    if logged_from_ms > first_ms:
        print(f"| {name} | n/a: the broker's gc.log begins after the run began (rotated) | | | |")
        return
    inside = [(s, e) for s, e in all_pauses if e >= first_ms and s <= last_ms]
    paused_ms = sum(min(e, last_ms) - max(s, first_ms) for s, e in inside)
    # Safepoints do not overlap one another, so ends rise with starts: of the pauses that end
    # after a record fell due, the first starts earliest, and it overlaps the record's wait if
    # any of them does.
    ends = [e for _, e in inside]
    late = across = 0
    with open(late_file) as f:
        for line in f:
            due, appended = map(float, line.split())
            late += 1
            i = bisect.bisect_right(ends, due)
            if i < len(inside) and inside[i][0] < appended:
                across += 1
    window_ms = max(last_ms - first_ms, 1)
    late_pct = 100 * late / delivered if delivered else 0
    across_pct = 100 * across / late if late else 0
    longest = max((e - s for s, e in inside), default=0)
    print(f"| {name} | {late} ({late_pct:.2f}%) | {len(inside)}, {paused_ms:.0f} ms, longest "
          f"{longest:.0f} ms | {100 * paused_ms / window_ms:.2f}% | {across_pct:.0f}% |")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    all_pauses, logged_from_ms = pauses(sys.argv[1])
    print("| run | late | broker pauses >= 1 ms | paused share | late across a pause |")
    print("|---|---|---|---|---|")
    for arg in sys.argv[2:]:
        name, spec = arg.split("=", 1)
        row(name, spec, all_pauses, logged_from_ms)


if __name__ == "__main__":
    main()
