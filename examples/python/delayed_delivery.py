"""Delayed delivery through DelayBridge with confluent-kafka.

Produces two records to the delay topic, one with ``x-delay`` (milliseconds after the record's
timestamp) and one with ``x-deliver-at`` (Unix epoch milliseconds), then consumes the target
topic and checks that each arrived on time, with its key, value and ``trace-id`` header, plus the
``x-delay-source`` header naming the delay-topic record it came from. Exits 1 with a message when
not.

Environment: BOOTSTRAP_SERVERS (localhost:9092), DELAY_TOPIC (delayed), TARGET_TOPIC
(delivered): the defaults match the bridge's shipped config.yaml. GROUP_ID: the consumer group
(default: a new one per run).
"""

import os
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer

GRACE_MS = 30_000  # how late a record may be before the example calls it lost


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def header(headers, name):
    """The last value of a header, like Java's Headers.lastHeader (the bridge reads it so)."""
    value = None
    for key, raw in headers or []:
        if key == name:
            value = raw.decode() if raw is not None else None
    return value


def produce_delayed(producer, topic, key, value, trace_id, delay_header, due_ms, timestamp_ms):
    """Produces one record and waits for the broker's ack; returns what the consumer must see."""
    delay_value = str(due_ms - timestamp_ms if delay_header == "x-delay" else due_ms)
    acked = {}

    def on_delivery(err, msg):
        acked["error"] = err
        if err is None:
            acked["source"] = f"{msg.topic()}/{msg.partition()}/{msg.offset()}"

    # The record's timestamp is set here, not left to the client, so the due time of an x-delay
    # record (timestamp + delay) is known exactly.
    producer.produce(
        topic,
        key=key,
        value=value,
        headers=[("trace-id", trace_id), (delay_header, delay_value)],
        timestamp=timestamp_ms,
        on_delivery=on_delivery,
    )
    if producer.flush(30) != 0 or "source" not in acked:
        raise SystemExit(f"FAIL {key}: not acknowledged by the broker within 30 s: "
                         f"{acked.get('error')}")
    print(f"sent {key} with {delay_header}: {delay_value} as {acked['source']}, due at {due_ms}")
    # The bridge names the delay-topic record it delivered in x-delay-source.
    return {"value": value, "trace_id": trace_id, "due_ms": due_ms, "source": acked["source"]}


def check(msg, sent, received_ms):
    """Every way the delivered record can differ from what was sent."""
    key = msg.key().decode()
    _, timestamp_ms = msg.timestamp()
    late_ms = received_ms - sent["due_ms"]
    print(f"received {key} from {msg.topic()}-{msg.partition()} at {received_ms} "
          f"(record timestamp {timestamp_ms}): {late_ms} ms after due")
    problems = []
    # The delivered record's timestamp is when the bridge produced it: never before due.
    if timestamp_ms < sent["due_ms"] or received_ms < sent["due_ms"]:
        problems.append(f"early: timestamp {timestamp_ms}, received {received_ms}, "
                        f"due {sent['due_ms']}")
    if late_ms > GRACE_MS:
        problems.append(f"late: received {late_ms} ms after due")
    value = msg.value().decode() if msg.value() is not None else None
    if value != sent["value"]:
        problems.append(f"value {value!r}, expected {sent['value']!r}")
    trace_id = header(msg.headers(), "trace-id")
    if trace_id != sent["trace_id"]:
        problems.append(f"trace-id header {trace_id!r}, expected {sent['trace_id']!r}")
    source = header(msg.headers(), "x-delay-source")
    if source != sent["source"]:
        problems.append(f"x-delay-source {source!r}, expected {sent['source']!r}")
    return [f"{key}: {p}" for p in problems]


def main() -> int:
    bootstrap = os.environ.get("BOOTSTRAP_SERVERS", "localhost:9092")
    delay_topic = os.environ.get("DELAY_TOPIC", "delayed")
    target_topic = os.environ.get("TARGET_TOPIC", "delivered")
    # A run id in every key: the example ignores records of earlier runs in a shared topic.
    run = uuid.uuid4().hex[:8]
    group_id = os.environ.get("GROUP_ID", f"delaybridge-example-python-{run}")

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    now = now_ms()
    pending = {
        f"order-42-{run}": produce_delayed(producer, delay_topic, f"order-42-{run}",
                                           "payment reminder for order 42", f"{run}-a",
                                           "x-delay", now + 3000, now),
        f"invoice-7-{run}": produce_delayed(producer, delay_topic, f"invoice-7-{run}",
                                            "invoice 7 is due", f"{run}-b",
                                            "x-deliver-at", now + 4000, now),
    }

    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        # A new group starts at the beginning, so nothing delivered before it joined is missed.
        "auto.offset.reset": "earliest",
    })
    consumer.subscribe([target_topic])
    failures = []
    deadline = max(s["due_ms"] for s in pending.values()) + GRACE_MS
    try:
        while pending and now_ms() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            received = now_ms()
            sent = pending.pop(msg.key().decode() if msg.key() else None, None)
            if sent is not None:
                failures += check(msg, sent, received)
    finally:
        consumer.close()
    failures += [f"{key}: not delivered to {target_topic} within {GRACE_MS // 1000} s after "
                 f"its due time {sent['due_ms']}" for key, sent in pending.items()]
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    if failures:
        return 1
    print("python example: both records delivered on time and intact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
