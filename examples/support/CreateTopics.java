// Creates Kafka topics for examples/run-example.sh with the Admin API of the kafka-clients jar
// that the test broker's libs carry (run as a single-file program: java -cp 'LIBS/*' THIS_FILE).
//
//   java -cp '.cache/kafka/4.1.1/libs/*' examples/support/CreateTopics.java BOOTSTRAP NAME:PARTITIONS...
//
// The broker does not create topics on first use (auto.create.topics.enable=false), so every
// topic gets an explicit partition count here. Exits 1 with the broker's error when one fails.

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

public class CreateTopics {
  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: CreateTopics BOOTSTRAP NAME:PARTITIONS...");
      System.exit(2);
    }
    List<NewTopic> topics = new ArrayList<>();
    for (int i = 1; i < args.length; i++) {
      int colon = args[i].lastIndexOf(':');
      String name = args[i].substring(0, colon);
      int partitions = Integer.parseInt(args[i].substring(colon + 1));
      // One broker: replication factor 1 (Optional.empty() would take the broker's default).
      topics.add(new NewTopic(name, Optional.of(partitions), Optional.of((short) 1)));
    }
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]))) {
      admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      System.err.println("creating topics " + topics + " on " + args[0] + ": " + e);
      System.exit(1);
    }
    for (NewTopic topic : topics) {
      System.out.println("created " + topic.name() + " (" + topic.numPartitions() + " partitions)");
    }
  }
}
