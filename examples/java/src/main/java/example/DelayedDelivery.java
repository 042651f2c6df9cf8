package example;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;

/**
 * Delayed delivery through DelayBridge with the plain Apache Kafka Java client.
 *
 * <p>Produces two records to the delay topic: one with {@code x-delay} (milliseconds after the
 * record's timestamp), one with {@code x-deliver-at} (Unix epoch milliseconds). Then consumes the
 * target topic and checks that each record arrived on time, intact, with {@code x-delay-source},
 * in the partition this producer would have chosen for its key. Exits 1 with a message when not.
 *
 * <p>Environment: BOOTSTRAP_SERVERS (localhost:9092), DELAY_TOPIC (delayed), TARGET_TOPIC
 * (delivered): the defaults match the bridge's shipped config.yaml. GROUP_ID: the consumer group
 * (default: a new one per run).
 */
public final class DelayedDelivery {
  /** How late a record may be before the example calls it lost. */
  private static final Duration GRACE = Duration.ofSeconds(30);

  /** What was sent, and what the consumer must therefore see. */
  private record Sent(String key, String value, String traceId, long dueMs, String source) {}

  private static final List<String> failures = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    String bootstrap = env("BOOTSTRAP_SERVERS", "localhost:9092");
    String delayTopic = env("DELAY_TOPIC", "delayed");
    String targetTopic = env("TARGET_TOPIC", "delivered");
    // A run id in every key: the example ignores records of earlier runs in a shared topic.
    String run = UUID.randomUUID().toString().substring(0, 8);
    String groupId = env("GROUP_ID", "delaybridge-example-java-" + run);

    Map<String, Sent> pending = new HashMap<>();
    int targetPartitions;
    Properties producerConfig = new Properties();
    producerConfig.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    producerConfig.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    producerConfig.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig)) {
      // The record's timestamp is set here, not left to the client, so the due time of an
      // x-delay record (timestamp + delay) is known exactly.
      long now = System.currentTimeMillis();
      Sent reminder = send(producer, delayTopic, now, "order-42-" + run,
          "payment reminder for order 42", run + "-a", "x-delay", "3000", now + 3000);
      long deliverAt = now + 4000;
      Sent invoice = send(producer, delayTopic, now, "invoice-7-" + run, "invoice 7 is due",
          run + "-b", "x-deliver-at", Long.toString(deliverAt), deliverAt);
      pending.put(reminder.key(), reminder);
      pending.put(invoice.key(), invoice);
      // What this producer's partitioner divides by for the target topic.
      targetPartitions = producer.partitionsFor(targetTopic).size();
    }

    Properties consumerConfig = new Properties();
    consumerConfig.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    consumerConfig.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    // A new group starts at the beginning, so nothing delivered before it joined is missed.
    consumerConfig.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    consumerConfig.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    consumerConfig.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    long deadline = pending.values().stream().mapToLong(Sent::dueMs).max().orElseThrow()
        + GRACE.toMillis();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerConfig)) {
      consumer.subscribe(List.of(targetTopic));
      while (!pending.isEmpty() && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
          long receivedAt = System.currentTimeMillis();
          Sent sent = pending.remove(record.key());
          if (sent != null) check(record, sent, receivedAt, targetPartitions);
        }
      }
    }
    for (Sent missing : pending.values()) {
      failures.add(missing.key() + ": not delivered to " + targetTopic + " within "
          + GRACE.toSeconds() + " s after its due time " + missing.dueMs());
    }
    if (!failures.isEmpty()) {
      failures.forEach(f -> System.err.println("FAIL " + f));
      System.exit(1);
    }
    System.out.println("java example: both records delivered on time and intact");
  }

  /** Produces one record with a delay header and a user header, and waits for the broker's ack. */
  private static Sent send(KafkaProducer<String, String> producer, String topic, long timestampMs,
      String key, String value, String traceId, String delayHeader, String delayValue, long dueMs)
      throws Exception {
    RecordHeaders headers = new RecordHeaders();
    headers.add("trace-id", traceId.getBytes(StandardCharsets.UTF_8));
    headers.add(delayHeader, delayValue.getBytes(StandardCharsets.UTF_8));
    ProducerRecord<String, String> record =
        new ProducerRecord<>(topic, null, timestampMs, key, value, headers);
    RecordMetadata sent = producer.send(record).get();
    System.out.printf("sent %s with %s: %s to %s-%d@%d, due at %d%n", key, delayHeader,
        delayValue, sent.topic(), sent.partition(), sent.offset(), dueMs);
    // The bridge names the delay-topic record it delivered in x-delay-source.
    String source = sent.topic() + "/" + sent.partition() + "/" + sent.offset();
    return new Sent(key, value, traceId, dueMs, source);
  }

  private static void check(ConsumerRecord<String, String> record, Sent sent, long receivedAt,
      int partitions) {
    String key = sent.key();
    System.out.printf("received %s from %s-%d at %d (record timestamp %d): %d ms after due%n",
        key, record.topic(), record.partition(), receivedAt, record.timestamp(),
        receivedAt - sent.dueMs());
    // The delivered record's timestamp is when the bridge produced it: never before due.
    if (record.timestamp() < sent.dueMs() || receivedAt < sent.dueMs()) {
      failures.add(key + ": early: timestamp " + record.timestamp() + ", received " + receivedAt
          + ", due " + sent.dueMs());
    }
    if (receivedAt > sent.dueMs() + GRACE.toMillis()) {
      failures.add(key + ": late: received " + (receivedAt - sent.dueMs()) + " ms after due");
    }
    if (!sent.value().equals(record.value())) {
      failures.add(key + ": value \"" + record.value() + "\", expected \"" + sent.value() + "\"");
    }
    String traceId = lastHeader(record, "trace-id");
    if (!sent.traceId().equals(traceId)) {
      failures.add(key + ": trace-id header " + traceId + ", expected " + sent.traceId());
    }
    String source = lastHeader(record, "x-delay-source");
    if (!sent.source().equals(source)) {
      failures.add(key + ": x-delay-source " + source + ", expected " + sent.source());
    }
    // The bridge delivers to the partition Kafka's Java producer picks for a keyed record:
    // murmur2 of the serialized key, made positive, modulo the partition count. So a key's
    // delayed records and its records produced directly share a partition and keep their order.
    byte[] keyBytes = key.getBytes(StandardCharsets.UTF_8);
    int expected = Utils.toPositive(Utils.murmur2(keyBytes)) % partitions;
    if (record.partition() != expected) {
      failures.add(key + ": partition " + record.partition() + ", but the Java producer picks "
          + expected + " of " + partitions);
    }
  }

  private static String lastHeader(ConsumerRecord<?, ?> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null || header.value() == null
        ? null
        : new String(header.value(), StandardCharsets.UTF_8);
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }
}
