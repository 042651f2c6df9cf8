"""Retry with exponential back-off through DelayBridge, with confluent-kafka.

A consumer of a work topic processes jobs. When a job fails for a reason that may pass (a
service down, a rate limit), the consumer neither sleeps (which stalls its partition and can get
it thrown out of the group) nor drops the job: it produces the job to the delay topic with

    x-delay: BASE_MS * 2**attempt     the back-off, doubling with each attempt
    x-attempt: attempt + 1            how often it has been tried, read back on the next try
    x-target-topic: <work topic>      the bridge hands it back to this very topic

and commits the failed record's offset only after the retry was acknowledged, so a crash in
between processes the job again instead of losing it. The work topic must be listed in the
bridge's `allowed_targets`.

Here the job fails on attempts 0, 1 and 2 and succeeds on attempt 3: it comes back after 1 s,
2 s and 4 s. The example checks that each retry came back no earlier than its back-off (and
within 30 s of it), with its value and headers, and that the waits grew. Exits 1 with a message
when not.

Environment: BOOTSTRAP_SERVERS (localhost:9092), DELAY_TOPIC (delayed), RETRY_TOPIC (the work
topic; jobs), GROUP_ID (the work topic's consumer group; default: a new one per run).
"""

import os
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer

BASE_MS = 1000  # first back-off; attempt n waits BASE_MS * 2**n
SUCCEEDS_ON = 3  # the attempt on which the job stops failing
GRACE_MS = 30_000  # how late a retry may be before the example calls it lost

# Headers the retry sets itself, or that the bridge adds; not carried over from the failed record.
CONTROL_HEADERS = {"x-attempt", "x-delay", "x-deliver-at", "x-target-topic", "x-delay-source"}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def header(headers, name):
    """The last value of a header, like Java's Headers.lastHeader (the bridge reads it so)."""
    value = None
    for key, raw in headers or []:
        if key == name:
            value = raw.decode() if raw is not None else None
    return value


def process(value: str, attempt: int) -> bool:
    """Stands in for the real work: a call that fails until the attempt SUCCEEDS_ON."""
    ok = attempt >= SUCCEEDS_ON
    print(f"attempt {attempt} of job {value!r}: {'done' if ok else 'failed'}")
    return ok


def produce_and_wait(producer, topic, **record):
    """Produces one record and waits for the broker's acknowledgement (acks=all)."""
    errors = []
    producer.produce(topic, on_delivery=lambda err, _msg: errors.append(err), **record)
    if producer.flush(30) != 0 or errors != [None]:
        raise KafkaException(f"producing to {topic}: {errors or 'no acknowledgement in 30 s'}")


def schedule_retry(producer, delay_topic, work_topic, msg, attempt):
    """Sends the failed record back to its own topic through the bridge, BASE_MS * 2**attempt
    from now. Returns the retry record's timestamp (x-delay counts from it)."""
    backoff_ms = BASE_MS * 2**attempt
    headers = [(k, v) for k, v in msg.headers() or [] if k not in CONTROL_HEADERS]
    headers += [
        ("x-attempt", str(attempt + 1)),
        ("x-delay", str(backoff_ms)),
        ("x-target-topic", work_topic),
    ]
    timestamp = now_ms()
    produce_and_wait(producer, delay_topic, key=msg.key(), value=msg.value(), headers=headers,
                     timestamp=timestamp)
    print(f"  retry {attempt + 1} scheduled in {backoff_ms} ms")
    return timestamp


def main() -> int:
    bootstrap = os.environ.get("BOOTSTRAP_SERVERS", "localhost:9092")
    delay_topic = os.environ.get("DELAY_TOPIC", "delayed")
    work_topic = os.environ.get("RETRY_TOPIC", "jobs")
    # A run id in the key: the example ignores jobs of earlier runs in a shared topic.
    run = uuid.uuid4().hex[:8]
    group_id = os.environ.get("GROUP_ID", f"delaybridge-example-retry-{run}")
    key = f"job-{run}"
    value = "charge card for order 42"

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    # The job enters the work topic directly, like any other; only its retries take the detour.
    produce_and_wait(producer, work_topic, key=key, value=value, headers=[("trace-id", run)])

    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "auto.offset.reset": "earliest",
        # Commit by hand, after the retry is safely in the delay topic.
        "enable.auto.commit": False,
    })
    consumer.subscribe([work_topic])
    retried_at = {}  # attempt -> timestamp of the retry record that carries it
    waits = []  # attempt n's wait: from its retry's timestamp to the bridge's delivery of it
    failures = []
    done = False
    deadline = now_ms() + sum(BASE_MS * 2**n for n in range(SUCCEEDS_ON)) + GRACE_MS
    try:
        while not done and now_ms() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            received = now_ms()
            if msg.key() is None or msg.key().decode() != key:
                consumer.commit(message=msg, asynchronous=False)
                continue
            attempt = int(header(msg.headers(), "x-attempt") or 0)
            if attempt > 0:
                problems, waited = check_retry(msg, attempt, received, retried_at, value, run)
                failures += problems
                waits.append(waited)
            if process(msg.value().decode(), attempt):
                done = True
            else:
                retried_at[attempt + 1] = schedule_retry(producer, delay_topic, work_topic, msg,
                                                         attempt)
            consumer.commit(message=msg, asynchronous=False)
    finally:
        consumer.close()

    if not done:
        failures.append(f"{key}: attempt {len(waits) + 1} did not come back within the "
                        f"back-off + {GRACE_MS // 1000} s")
    if done and len(waits) != SUCCEEDS_ON:
        failures.append(f"{key}: succeeded after {len(waits)} retries, expected {SUCCEEDS_ON}")
    if None in waits or any(later <= earlier for earlier, later in zip(waits, waits[1:])):
        failures.append(f"{key}: the waits between retries did not grow: {waits} ms")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"python retry example: {SUCCEEDS_ON} retries delivered after {waits} ms, then done")
    return 0


def check_retry(msg, attempt, received, retried_at, value, trace_id):
    """Every way a retry can differ from what was scheduled, and how long the bridge held it:
    from the retry record's timestamp to the delivered record's (the time the bridge produced
    it), which excludes this consumer's own fetch latency."""
    if attempt not in retried_at:
        return [f"attempt {attempt} arrived, but no such retry was scheduled"], None
    backoff_ms = BASE_MS * 2 ** (attempt - 1)
    _, delivered = msg.timestamp()
    waited = delivered - retried_at[attempt]
    received_after = received - retried_at[attempt]
    print(f"  retry {attempt} delivered after {waited} ms, received after {received_after} ms "
          f"(back-off {backoff_ms} ms), from {header(msg.headers(), 'x-delay-source')}")
    problems = []
    if waited < backoff_ms or received_after < backoff_ms:
        problems.append(f"early: delivered after {waited} ms, received after {received_after} "
                        f"ms, back-off {backoff_ms} ms")
    if received_after > backoff_ms + GRACE_MS:
        problems.append(f"late: received after {received_after} ms, back-off {backoff_ms} ms")
    if msg.value().decode() != value:
        problems.append(f"value {msg.value().decode()!r}, expected {value!r}")
    if header(msg.headers(), "trace-id") != trace_id:
        problems.append(f"trace-id {header(msg.headers(), 'trace-id')!r}, expected {trace_id!r}")
    if header(msg.headers(), "x-delay-source") is None:
        problems.append("no x-delay-source header")
    return [f"retry {attempt}: {p}" for p in problems], waited


if __name__ == "__main__":
    sys.exit(main())
