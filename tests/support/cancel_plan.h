// What the cancel tests of both suites (mock cluster and real broker) share: a record's id as a
// cancel names it, the seeded plan of which records to cancel and when, malformed cancels and
// their dead letters, and the counters of the bridge's stats line.
//
// Thread-safety: a CancelPlan has one owner thread; the functions are pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/support/test_record.h"

namespace delaybridge::testing {

inline constexpr const char* kCancelHeader = "x-delay-cancel";

// "<topic>/<partition>/<offset>": a delay-topic record's id, the one its delivery carries in
// x-delay-source and a cancel of it names.
std::string RecordId(const std::string& topic, int32_t partition, int64_t offset);

// The first (up to) n of these records that were acknowledged, in order.
std::vector<ProducedAt> FirstAcknowledged(const std::deque<ProducedAt>& produced, size_t n);

// CancelPlan: which records a cancel test cancels, and when, from a seed. A record is cancelled
// in time (at a random moment between its acknowledgement and kCancelLeadMs before it falls
// due), late (right after its delivery is seen: the bridge must count it too late), or not at
// all. The plan remembers when each cancel went out and works out what the bridge must do.
//
// Why the margins: a cancel the bridge reads shortly before its target falls due may find it in
// flight, and then it is legitimately too late; the margins leave room for a sanitizer build on
// two cores shared with a broker and the fuzzers. Cancels are planned kCancelLeadMs ahead; one that
// went out kCertainLeadMs or more ahead (the test loop may send it a little after its moment) is
// certain: its target must never be delivered, even across a kill -9 (docs/bridge.md,
// "Cancelling a pending record": a durable cancel survives it, and after a restart the cancels
// produced before the assignment are read before any target is loaded). One sent closer may go
// either way; the counters still match exactly, because whether its target was delivered is
// seen.
class CancelPlan {
 public:
  static constexpr int64_t kCancelLeadMs = 4'000;
  static constexpr int64_t kCertainLeadMs = 3'000;

  enum class Choice { kNone, kInTime, kLate };

  CancelPlan(uint64_t seed, double in_time_fraction, double late_fraction)
      : rng_(seed), in_time_fraction_(in_time_fraction), late_fraction_(late_fraction) {}

  // Decides for a record acknowledged at acked_ms and due at due_ms (records are numbered by
  // the test). A record due too soon to be cancelled kCancelLeadMs ahead is not cancelled in
  // time.
  Choice Consider(uint64_t record, int64_t acked_ms, int64_t due_ms);
  // The in-time cancels whose moment has come by now_ms, earliest first; they count as sent at
  // now_ms.
  std::vector<uint64_t> TakeDue(int64_t now_ms);
  // True once for a record planned to be cancelled late: call it when its delivery is seen, and
  // send the cancel. sent_ms: when it goes out.
  bool TakeLate(uint64_t record, int64_t sent_ms);
  // True for a record whose in-time cancel went out kCertainLeadMs or more before it fell due:
  // it must never be delivered.
  bool MustNotBeDelivered(uint64_t record) const;
  bool CancelledInTime(uint64_t record) const { return sent_.contains(record); }
  // When record's in-time cancel went out; nullopt when it did not.
  std::optional<int64_t> CancelSentMs(uint64_t record) const;
  // Every cancel went out, and each of records 0..records-1 not cancelled in time was
  // delivered: what a test waits for.
  bool Done(uint64_t records, const std::function<bool(uint64_t)>& delivered) const;
  // Calls mark(record, MustNotBeDelivered(record)) for every record cancelled in time.
  void ForEachCancelledInTime(const std::function<void(uint64_t, bool)>& mark) const;
  size_t unsent() const { return planned_.size(); }  // in-time cancels still to send
  size_t late_unsent() const;                        // late ones whose delivery is not seen yet
  size_t in_time_sent() const { return sent_.size(); }
  size_t late_sent() const;
  size_t certain() const;  // in-time cancels MustNotBeDelivered

  // What the bridge must count for these cancels, given which targets were delivered: cancelled
  // for in-time cancels whose target was not delivered, too late for the others and the late
  // ones. A late cancel sent in a later clock hour than its target fell due in may count as
  // unknown instead: the lookup searches the hours from the delivered watermark's on, and a
  // delivered hour's files may be gone (docs/bridge.md, "Cancelling a pending record"). So
  // too_late lies in [too_late_min, too_late_max], and the rest of too_late_max counts unknown.
  struct Counts {
    size_t cancelled = 0;
    size_t too_late_min = 0;
    size_t too_late_max = 0;
  };
  Counts Expected(const std::function<bool(uint64_t)>& delivered) const;

  // Compares the counters of a stats line (LastStatsCounters) with Expected(delivered), given
  // `unknown` more cancels naming no record (counted unknown) and `dead_lettered` malformed ones.
  // summary shows both; mismatches names the counters that differ.
  struct CounterCheck {
    std::string summary;
    std::vector<std::string> mismatches;
  };
  CounterCheck CheckCounters(const std::map<std::string, int64_t>& stats,
                             const std::function<bool(uint64_t)>& delivered, size_t unknown,
                             size_t dead_lettered) const;

 private:
  struct InTime {
    int64_t due_ms = 0;
    int64_t sent_ms = 0;
  };
  struct Late {
    int64_t due_ms = 0;
    int64_t sent_ms = -1;  // -1: not sent
  };
  std::mt19937_64 rng_;
  double in_time_fraction_;
  double late_fraction_;
  std::multimap<int64_t, std::pair<uint64_t, int64_t>> planned_;  // at_ms -> record, due_ms
  std::map<uint64_t, InTime> sent_;
  std::map<uint64_t, Late> late_;
};

// A cancel the bridge must dead-letter: sent to the partition MalformedCancels was given, with
// value "cancel <name>" and header "cancel: <name>".
struct MalformedCancel {
  std::string name;
  std::optional<std::string> id;  // its x-delay-cancel
  std::string reason;             // in its dead letter's x-delay-error, after "x-delay-cancel: "
};

// One of each kind, for cancels sent to partition (of delay_topic, which has another partition
// above it): naming another partition, another topic, an id that does not parse (twice), an
// offset not below its own, and a null id.
std::vector<MalformedCancel> MalformedCancels(const std::string& delay_topic, int32_t partition,
                                              const std::string& other_topic);

// What a record of the dead-letter topic arrived with.
struct DeadLetter {
  std::optional<std::string> value;
  std::optional<std::string> cancel;       // its "cancel" header
  std::optional<std::string> cancel_id;    // its x-delay-cancel
  std::optional<std::string> delay_error;  // its x-delay-error
};

// What is wrong with the dead letters, given the malformed cancels sent: each must arrive
// intact, with its reason, once (at least once when !once: after a crash), and nothing else.
std::vector<std::string> CheckDeadLetteredCancels(const std::vector<MalformedCancel>& sent,
                                                  const std::vector<DeadLetter>& letters,
                                                  bool once);

// The numbers both suites' cancel tests run with (the "Done when").
struct CancelTestShape {
  static constexpr int kBatches = 20;  // each flushed, so the cancels know the offsets
  static constexpr int kRecordsPerBatch = 500;
  static constexpr std::chrono::milliseconds kBatchPause{150};  // 10,000 records in about 3 s
  static constexpr int64_t kMinDelayMs = 5'000;
  static constexpr int64_t kMaxDelayMs = 30'000;
  static constexpr double kInTimeFraction = 0.30;
  static constexpr double kLateFraction = 0.04;   // of all records: about 300 cancels too late
  static constexpr size_t kCancelsOfCancels = 5;  // each counted unknown
};

// The counters (name=value) of the last "stats: " line in a bridge log, up to its first " | "
// (the lateness summaries that follow repeat names such as count=). Empty when there is none.
std::map<std::string, int64_t> LastStatsCounters(const std::string& log);
// "cancelled=N cancel_too_late=N cancel_unknown=N dead_lettered=N" from those counters.
std::string CancelCounters(const std::map<std::string, int64_t>& stats);

}  // namespace delaybridge::testing
