#include "tests/plugin/delay_workload.h"

#include <algorithm>
#include <set>

#include "tests/support/cancel_plan.h"
#include "tests/support/murmur2.h"

namespace delaybridge::testing {

namespace {
constexpr const char* kSeqHeader = "seq";
}

std::string DeliveryCheck::Summary() const {
  std::string s =
      "delivered=" + std::to_string(delivered) + " missing=" + std::to_string(missing.size()) +
      " duplicated=" + std::to_string(duplicates.size()) +
      " errors=" + std::to_string(errors.size()) +
      (cancelled + delivered_despite_cancel == 0
           ? std::string()
           : " cancelled=" + std::to_string(cancelled) +
                 " delivered_despite_cancel=" + std::to_string(delivered_despite_cancel)) +
      " lateness p50=" + std::to_string(p50_lateness_ms) +
      "ms p99=" + std::to_string(p99_lateness_ms) + "ms max=" + std::to_string(max_lateness_ms) +
      "ms";
  for (size_t i = 0; i < std::min<size_t>(errors.size(), 10); ++i) s += "\n  " + errors[i];
  return s;
}

TestRecord DelayWorkload::Next(int64_t now_ms, int64_t max_delay_ms, int64_t min_delay_ms) {
  const uint64_t seq = next_seq_++;
  const int64_t delay_ms =
      min_delay_ms +
      static_cast<int64_t>(rng_() % static_cast<uint64_t>(max_delay_ms - min_delay_ms + 1));
  TestRecord r;
  r.topic = delay_topic_;
  r.timestamp_ms = now_ms;
  ExpectedDelivery e;
  e.topic = target_topic_;
  e.deliver_at_ms = now_ms + delay_ms;
  e.produced_at_ms = now_ms;
  if (seq % 53 != 0) r.key = "key-" + std::to_string(rng_() % 1000);  // some null keys
  if (seq % 41 == 0) {
    r.value.reset();  // a tombstone passes through too
  } else if (seq % 43 == 0) {
    r.value = "";
  } else {
    r.value = "value-" + std::to_string(seq) + std::string(rng_() % 100, 'x');
  }
  r.headers.push_back({kSeqHeader, std::to_string(seq)});
  if (seq % 2 == 0) {
    r.headers.push_back({"x-delay", std::to_string(delay_ms)});
  } else {
    r.headers.push_back({"x-deliver-at", std::to_string(now_ms + delay_ms)});
  }
  r.headers.push_back({"trace", std::to_string(rng_())});
  if (seq % 7 == 0) r.headers.push_back({"null-header", std::nullopt});
  if (seq % 5 == 0) {
    r.headers.push_back({"x-target-topic", alt_topic_});
    e.topic = alt_topic_;
  }
  e.key = r.key;
  e.value = r.value;
  for (const auto& h : r.headers) {
    if (h.name != "x-delay" && h.name != "x-deliver-at" && h.name != "x-target-topic") {
      e.headers.push_back(h);
    }
  }
  expected_[seq] = std::move(e);
  return r;
}

std::optional<uint64_t> DelayWorkload::SeqOf(const TestRecord& record) {
  const auto seq = record.Header(kSeqHeader);
  if (!seq) return std::nullopt;
  return std::stoull(*seq);
}

void DelayWorkload::SetSource(uint64_t seq, int32_t partition, int64_t offset) {
  expected_.at(seq).source = RecordId(delay_topic_, partition, offset);
}

void DelayWorkload::Cancel(uint64_t seq, bool certain) {
  expected_.at(seq).cancel =
      certain ? ExpectedDelivery::Cancel::kCancelled : ExpectedDelivery::Cancel::kMaybe;
}

size_t DelayWorkload::DistinctDelivered(const std::vector<TestRecord>& delivered) const {
  std::set<uint64_t> seen;
  for (const auto& r : delivered) {
    if (auto seq = r.Header(kSeqHeader)) seen.insert(std::stoull(*seq));
  }
  return seen.size();
}

DeliveryCheck DelayWorkload::Check(const std::vector<TestRecord>& delivered) const {
  DeliveryCheck check;
  std::map<uint64_t, size_t> copies;
  std::vector<int64_t> lateness;
  std::set<std::string> source_ids;
  for (const auto& r : delivered) {
    const auto seq_text = r.Header(kSeqHeader);
    if (!seq_text) {
      check.errors.push_back("a record without seq header in " + r.topic);
      continue;
    }
    const uint64_t seq = std::stoull(*seq_text);
    auto it = expected_.find(seq);
    if (it == expected_.end()) {
      check.errors.push_back("unknown seq " + *seq_text);
      continue;
    }
    const ExpectedDelivery& e = it->second;
    const std::string who = "seq " + *seq_text + ": ";
    if (++copies[seq] > 1) continue;  // content checked on the first copy
    if (e.cancel == ExpectedDelivery::Cancel::kCancelled) {
      check.errors.push_back(who + "delivered at " + std::to_string(r.timestamp_ms) +
                             " though cancelled well before it fell due at " +
                             std::to_string(e.deliver_at_ms));
    }
    if (r.topic != e.topic) check.errors.push_back(who + "went to " + r.topic + ", not " + e.topic);
    if (r.timestamp_ms < e.deliver_at_ms) {
      check.errors.push_back(who + "EARLY by " + std::to_string(e.deliver_at_ms - r.timestamp_ms) +
                             " ms");
    }
    lateness.push_back(r.timestamp_ms - e.deliver_at_ms);
    if (r.key != e.key) check.errors.push_back(who + "key differs");
    if (r.value != e.value) check.errors.push_back(who + "value differs");
    // Delivered headers: the expected ones, then x-delay-source.
    std::vector<TestHeader> headers = r.headers;
    if (headers.empty() || headers.back().name != "x-delay-source" || !headers.back().value) {
      check.errors.push_back(who + "no trailing x-delay-source header");
    } else {
      const std::string& source = *headers.back().value;
      if (source.rfind(delay_topic_ + "/", 0) != 0 || !source_ids.insert(source).second ||
          (!e.source.empty() && source != e.source)) {
        check.errors.push_back(who + "bad or repeated x-delay-source " + source +
                               (e.source.empty() ? "" : ", produced as " + e.source));
      }
      headers.pop_back();
    }
    if (headers != e.headers) check.errors.push_back(who + "headers differ");
    if (e.key && r.partition != JavaPartitionForKey(*e.key, target_partitions_)) {
      check.errors.push_back(who + "partition " + std::to_string(r.partition) + ", murmur2 says " +
                             std::to_string(JavaPartitionForKey(*e.key, target_partitions_)));
    }
  }
  for (const auto& [seq, e] : expected_) {
    auto it = copies.find(seq);
    if (it == copies.end()) {
      if (e.cancel == ExpectedDelivery::Cancel::kNone) {
        check.missing.push_back(seq);
      } else {
        ++check.cancelled;
      }
    } else if (e.cancel == ExpectedDelivery::Cancel::kMaybe) {
      ++check.delivered_despite_cancel;
    }
    if (it != copies.end() && it->second > 1) {
      check.duplicates[seq] = it->second - 1;
    }
  }
  check.delivered = copies.size();
  if (!lateness.empty()) {
    std::sort(lateness.begin(), lateness.end());
    check.p50_lateness_ms = lateness[lateness.size() / 2];
    check.p99_lateness_ms = lateness[lateness.size() * 99 / 100];
    check.max_lateness_ms = lateness.back();
  }
  return check;
}

}  // namespace delaybridge::testing
