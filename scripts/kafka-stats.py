#!/usr/bin/env python3
"""Summarises librdkafka statistics (the bridge's kafka_stats_file: one JSON object per line)
into a table per interval: where the producer's records wait before the broker acknowledges
them.

    scripts/kafka-stats.py FILE [--client producer|consumer] [--since EPOCH_S] [--until EPOCH_S]

Columns (librdkafka STATISTICS.md; latencies in ms, from the window since the previous line):
  time        wall clock of the statistics
  queued      records in the client's queues, not yet acknowledged (msg_cnt)
  int p50/p99 time a record waited in librdkafka's partition queue before its batch was
              built (int_latency: linger, backpressure from max.in.flight)
  outbuf p99  time a built request waited for the socket (outbuf_latency)
  rtt p50/p99/max  request round trip: sent until the broker's response (rtt): the broker's
              append, replication and acks=all wait
  inflight    requests sent and awaiting a response, per broker (waitresp_cnt)
  tx req/s    requests sent per second; batch = average records per produced batch
"""
import argparse
import json
import sys
import time


def ms(window, key):
    return window.get(key, 0) / 1000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--client", default="producer", choices=("producer", "consumer"))
    ap.add_argument("--since", type=float, default=0)
    ap.add_argument("--until", type=float, default=float("inf"))
    args = ap.parse_args()

    print("| time | queued | int p50 | int p99 | outbuf p99 | rtt p50 | rtt p99 | rtt max | inflight | tx req/s | batch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    prev_tx = {}
    with open(args.file) as f:
        for n, line in enumerate(f, 1):
            try:
                s = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"{args.file}:{n}: not JSON ({e}); skipped", file=sys.stderr)
                continue
            if s.get("type") != args.client:
                continue
            t = s["time"]
            if not args.since <= t <= args.until:
                continue
            name = s["name"]
            brokers = [b for b in s["brokers"].values() if b.get("nodeid", -1) >= 0]
            for b in brokers:
                key = (name, b["nodeid"])
                tx = b.get("tx", 0)
                rate = tx - prev_tx[key][0] if key in prev_tx else 0
                secs = t - prev_tx[key][1] if key in prev_tx else 0
                prev_tx[key] = (tx, t)
                batches = [tp["batchcnt"]["avg"] for tp in s["topics"].values() if tp["batchcnt"]["cnt"]]
                batch = sum(batches) / len(batches) if batches else 0
                il, ob, rtt = b["int_latency"], b["outbuf_latency"], b["rtt"]
                print(f"| {time.strftime('%H:%M:%S', time.localtime(t))} | {s['msg_cnt']} "
                      f"| {ms(il, 'p50'):.1f} | {ms(il, 'p99'):.1f} | {ms(ob, 'p99'):.1f} "
                      f"| {ms(rtt, 'p50'):.1f} | {ms(rtt, 'p99'):.1f} | {ms(rtt, 'max'):.1f} "
                      f"| {b['waitresp_cnt']} | {rate / secs if secs else 0:.0f} | {batch:.0f} |")


if __name__ == "__main__":
    main()
