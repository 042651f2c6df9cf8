// Command delayed-delivery sends delayed records through DelayBridge with franz-go.
//
// It produces two records to the delay topic, one with x-delay (milliseconds after the record's
// timestamp) and one with x-deliver-at (Unix epoch milliseconds), then consumes the target topic
// and checks that each arrived on time, with its key, value and trace-id header, plus the
// x-delay-source header naming the delay-topic record it came from. It exits 1 with a message
// when not.
//
// Environment: BOOTSTRAP_SERVERS (localhost:9092), DELAY_TOPIC (delayed), TARGET_TOPIC
// (delivered): the defaults match the bridge's shipped config.yaml. GROUP_ID: the consumer group
// (default: a new one per run).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// grace is how late a record may be before the example calls it lost.
const grace = 30 * time.Second

// sent is what was produced, and so what the consumer must see.
type sent struct {
	value   string
	traceID string
	due     time.Time
	source  string // topic/partition/offset of the delay-topic record
}

func main() {
	if failures := run(); len(failures) > 0 {
		for _, f := range failures {
			fmt.Fprintln(os.Stderr, "FAIL", f)
		}
		os.Exit(1)
	}
	fmt.Println("go example: both records delivered on time and intact")
}

func run() []string {
	bootstrap := env("BOOTSTRAP_SERVERS", "localhost:9092")
	delayTopic := env("DELAY_TOPIC", "delayed")
	targetTopic := env("TARGET_TOPIC", "delivered")
	// A run id in every key: the example ignores records of earlier runs in a shared topic.
	runID := randomID()
	groupID := env("GROUP_ID", "delaybridge-example-go-"+runID)

	client, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(bootstrap, ",")...),
		kgo.ConsumerGroup(groupID),
		kgo.ConsumeTopics(targetTopic),
		// A new group starts at the beginning, so nothing delivered before it joined is missed.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		return []string{"creating the client: " + err.Error()}
	}
	defer client.Close()
	ctx := context.Background()

	// The record's timestamp is set here, not left to the client, so the due time of an
	// x-delay record (timestamp + delay) is known exactly.
	now := time.Now().Truncate(time.Millisecond)
	pending := map[string]*sent{}
	reminderKey, invoiceKey := "order-42-"+runID, "invoice-7-"+runID
	pending[reminderKey] = &sent{value: "payment reminder for order 42", traceID: runID + "-a",
		due: now.Add(3 * time.Second)}
	pending[invoiceKey] = &sent{value: "invoice 7 is due", traceID: runID + "-b",
		due: now.Add(4 * time.Second)}
	delays := map[string]kgo.RecordHeader{
		reminderKey: {Key: "x-delay", Value: []byte("3000")},
		invoiceKey:  {Key: "x-deliver-at", Value: []byte(strconv.FormatInt(pending[invoiceKey].due.UnixMilli(), 10))},
	}
	for _, key := range []string{reminderKey, invoiceKey} {
		s := pending[key]
		record := &kgo.Record{
			Topic:     delayTopic,
			Key:       []byte(key),
			Value:     []byte(s.value),
			Timestamp: now,
			Headers:   []kgo.RecordHeader{{Key: "trace-id", Value: []byte(s.traceID)}, delays[key]},
		}
		// ProduceSync waits for the broker's acknowledgement (acks=all by default). franz-go
		// retries without end by default; the context bounds the wait.
		produceCtx, cancelProduce := context.WithTimeout(ctx, 30*time.Second)
		err := client.ProduceSync(produceCtx, record).FirstErr()
		cancelProduce()
		if err != nil {
			return []string{"producing " + key + ": " + err.Error()}
		}
		// The bridge names the delay-topic record it delivered in x-delay-source.
		s.source = fmt.Sprintf("%s/%d/%d", record.Topic, record.Partition, record.Offset)
		fmt.Printf("sent %s with %s: %s as %s, due at %d\n", key, delays[key].Key,
			delays[key].Value, s.source, s.due.UnixMilli())
	}

	var failures []string
	pollCtx, cancel := context.WithDeadline(ctx, now.Add(4*time.Second+grace))
	defer cancel()
	for len(pending) > 0 && pollCtx.Err() == nil {
		fetches := client.PollFetches(pollCtx)
		for _, fetchErr := range fetches.Errors() {
			if !errors.Is(fetchErr.Err, context.DeadlineExceeded) {
				return append(failures, fmt.Sprintf("consuming %s: %v", fetchErr.Topic, fetchErr.Err))
			}
		}
		received := time.Now()
		fetches.EachRecord(func(r *kgo.Record) {
			key := string(r.Key)
			if s, ok := pending[key]; ok {
				delete(pending, key)
				failures = append(failures, check(r, s, received)...)
			}
		})
	}
	for key, s := range pending {
		failures = append(failures, fmt.Sprintf("%s: not delivered to %s within %s after its due time %d",
			key, targetTopic, grace, s.due.UnixMilli()))
	}
	return failures
}

// check returns every way the delivered record differs from what was sent.
func check(r *kgo.Record, s *sent, received time.Time) []string {
	key := string(r.Key)
	fmt.Printf("received %s from %s-%d at %d (record timestamp %d): %d ms after due\n", key,
		r.Topic, r.Partition, received.UnixMilli(), r.Timestamp.UnixMilli(),
		received.Sub(s.due).Milliseconds())
	var problems []string
	// The delivered record's timestamp is when the bridge produced it: never before due.
	if r.Timestamp.Before(s.due) || received.Before(s.due) {
		problems = append(problems, fmt.Sprintf("early: timestamp %d, received %d, due %d",
			r.Timestamp.UnixMilli(), received.UnixMilli(), s.due.UnixMilli()))
	}
	if received.After(s.due.Add(grace)) {
		problems = append(problems, fmt.Sprintf("late: received %s after due", received.Sub(s.due)))
	}
	if string(r.Value) != s.value {
		problems = append(problems, fmt.Sprintf("value %q, expected %q", r.Value, s.value))
	}
	if got, _ := lastHeader(r, "trace-id"); got != s.traceID {
		problems = append(problems, fmt.Sprintf("trace-id header %q, expected %q", got, s.traceID))
	}
	if got, ok := lastHeader(r, "x-delay-source"); !ok || got != s.source {
		problems = append(problems, fmt.Sprintf("x-delay-source %q (present: %t), expected %q",
			got, ok, s.source))
	}
	for i := range problems {
		problems[i] = key + ": " + problems[i]
	}
	return problems
}

// lastHeader returns a header's last value, like Java's Headers.lastHeader (the bridge reads
// headers so).
func lastHeader(r *kgo.Record, name string) (string, bool) {
	value, found := "", false
	for _, h := range r.Headers {
		if h.Key == name {
			value, found = string(h.Value), true
		}
	}
	return value, found
}

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
