#!/usr/bin/env python3
"""CPU time per thread of one process between two moments: take a snapshot before a run and one
after it, then print what each thread (or group of threads) used in between.

    scripts/thread-cpu-delta.py snap PID FILE [--jvm]
    scripts/thread-cpu-delta.py diff BEFORE AFTER [--top N]

Without --jvm a thread is named by its comm (/proc/PID/task/TID/comm, 15 characters) and tid,
its time read from /proc/PID/task/TID/stat and its wake-ups (voluntary context switches: the
times it went to sleep) from /proc/PID/task/TID/status: for the bridge, "delivery/TID", "disk/TID", the
event loop "delaybridge/TID" and librdkafka's "rdk:broker1/TID" (the producer's and the
consumer's are told apart by tid: the producer is created first).

With --jvm (a Java process, e.g. the broker) the threads come from `jcmd PID Thread.print`,
which gives their full names and CPU time; digits are replaced by N so that the threads of one
pool add up ("data-plane-kafka-request-handler-N", "data-plane-kafka-network-thread-N-...").
The process's total from /proc is kept as "(process total)" (it includes threads jcmd does not
list).
"""
import argparse
import json
import os
import re
import subprocess


def proc_threads(pid):
    ms, wakeups = {}, {}
    clock_ticks = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                switches = re.search(r"^voluntary_ctxt_switches:\s+(\d+)", f.read(), re.M)
        except OSError:
            continue  # the thread exited meanwhile
        name = f"{comm}/{tid}"
        ms[name] = (int(fields[11]) + int(fields[12])) * 1000 / clock_ticks
        if switches:  # a kernel without the count leaves the column empty
            wakeups[name] = int(switches.group(1))
    return ms, wakeups


def process_total_ms(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def jvm_thread_groups(pid):
    dump = subprocess.run(["jcmd", str(pid), "Thread.print"], capture_output=True, text=True,
                          check=True).stdout
    ms = {}
    for m in re.finditer(r'^"([^"]+)".*?cpu=([\d.]+)ms', dump, re.M):
        group = re.sub(r"\d+", "N", m.group(1))
        group = re.sub(r"ListenerName\(.*", "", group)
        ms[group] = ms.get(group, 0) + float(m.group(2))
    ms["(process total)"] = process_total_ms(pid)
    return ms


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snap")
    snap.add_argument("pid", type=int)
    snap.add_argument("file")
    snap.add_argument("--jvm", action="store_true")
    diff = sub.add_parser("diff")
    diff.add_argument("before")
    diff.add_argument("after")
    diff.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    if args.command == "snap":
        if args.jvm:
            ms, wakeups = jvm_thread_groups(args.pid), {}
        else:
            ms, wakeups = proc_threads(args.pid)
        with open(args.file, "w") as f:
            json.dump({"cpu_ms": ms, "wakeups": wakeups}, f)
        return
    with open(args.before) as f:
        before = json.load(f)
    with open(args.after) as f:
        after = json.load(f)
    for path, snapshot in ((args.before, before), (args.after, after)):
        if "cpu_ms" not in snapshot:
            ap.error(f"{path}: not a snapshot of this script ({{\"cpu_ms\": ..., \"wakeups\": ...}})")
    used = {name: ms - before["cpu_ms"].get(name, 0) for name, ms in after["cpu_ms"].items()}
    print("| thread | CPU s | wake-ups |")
    print("|---|---|---|")
    for name, ms in sorted(used.items(), key=lambda kv: -kv[1])[:args.top]:
        if ms <= 0:
            continue
        wakeups = "-"
        if name in after["wakeups"]:
            wakeups = after["wakeups"][name] - before["wakeups"].get(name, 0)
        print(f"| {name} | {ms / 1000:.2f} | {wakeups} |")


if __name__ == "__main__":
    main()
