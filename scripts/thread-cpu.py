#!/usr/bin/env python3
"""Samples the CPU time of every thread of the named processes, every half second, and prints
one line per sample: milliseconds of CPU each process used in it, then its busiest threads.

    scripts/thread-cpu.py java,delaybridge,delaybridge-loa [--interval 0.5] > cpu.txt

Names are the processes' comm (/proc/PID/comm, 15 characters at most: "delaybridge-loa" is
delaybridge-load). With a broker, the load tool and the bridge on one machine it shows who had
the CPU when lateness grew: it is how the busy-looping librdkafka threads of docs/BENCHMARKS.md
("A busy-looping producer was the lateness tail") were found. Stop it with Ctrl-C.
"""
import argparse
import os
import sys
import time


def thread_ticks(names):
    """{(process comm, pid, tid, thread comm): user+system ticks} of the matching processes."""
    ticks = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            if comm not in names:
                continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
                close = stat.rfind(")")
                fields = stat[close + 2:].split()
                ticks[(comm, pid, tid, stat[stat.find("(") + 1:close])] = int(fields[11]) + int(fields[12])
        except OSError:
            continue  # the process or thread ended while being read
    return ticks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", help="comma-separated process names (comm)")
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    ap.add_argument("--top", type=int, default=6, help="busiest threads shown per sample")
    args = ap.parse_args()
    names = set(args.names.split(","))
    ms_per_tick = 1000 / os.sysconf("SC_CLK_TCK")
    previous = thread_ticks(names)
    while True:
        started = time.time()
        time.sleep(args.interval - (started % args.interval))
        now = time.time()
        current = thread_ticks(names)
        used = {}
        for key, value in current.items():
            delta = value - previous.get(key, value)
            if delta:
                used[(key[0], key[3])] = used.get((key[0], key[3]), 0) + delta
        previous = current
        per_process = {}
        for (process, _), delta in used.items():
            per_process[process] = per_process.get(process, 0) + delta
        line = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now * 10) % 10} "
        line += " ".join(f"{p}={int(d * ms_per_tick)}" for p, d in sorted(per_process.items()))
        busiest = sorted(used.items(), key=lambda item: -item[1])[:args.top]
        line += " | " + " ".join(f"{p}:{t}={int(d * ms_per_tick)}" for (p, t), d in busiest)
        print(line, flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
