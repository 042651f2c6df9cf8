#include "tests/support/delay_workload.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

#include "tests/support/cancel_plan.h"
#include "tests/support/murmur2.h"
#include "tests/support/now_ms.h"

namespace delaybridge::testing {
namespace {

constexpr size_t kMaxListed = 10;
constexpr char kIdHeader[] = "workload-id";
constexpr char kSourceHeader[] = "x-delay-source";
constexpr char kProbePrefix[] = "probe=";

// Header styles, drawn with the weights in kStyleWeights.
enum Style : int {
  kDelayOnly = 0,  // x-delay, counted from the record timestamp the test sets
  kDeliverAtOnly,  // x-deliver-at
  kBoth,           // both; x-deliver-at must win (x-delay says something earlier)
  kZeroDelay,      // x-delay: 0
  kNoHeader,       // no delay header: deliver now
};
constexpr int kStyleWeights[] = {40, 40, 10, 5, 5};
// With a minimum delay: no deliver-now styles.
constexpr int kDelayedStyleWeights[] = {40, 40, 10, 0, 0};

bool IsControlHeader(const std::string& name) {
  return name == "x-delay" || name == "x-deliver-at" || name == "x-target-topic";
}

void Note(DeliveryReport& report, const std::string& problem) {
  if (report.problems.size() < kMaxListed) report.problems.push_back(problem);
}

// "<delay topic>/<partition>/<offset>" with both numbers decimal.
bool WellFormedSource(const std::string& value, const std::string& delay_topic) {
  if (value.rfind(delay_topic + "/", 0) != 0) return false;
  const std::string rest = value.substr(delay_topic.size() + 1);
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == rest.size()) return false;
  return std::all_of(rest.begin(), rest.end(), [](char c) { return c == '/' || isdigit(c); }) &&
         std::count(rest.begin(), rest.end(), '/') == 1;
}

// Key, start of the value and headers, for a problem's description.
std::string Describe(const TestRecord& record) {
  std::string text = "key=";
  text += record.key.value_or("<null>");
  text += " value=";
  text += record.value ? record.value->substr(0, 40) : std::string("<null>");
  text += " headers:";
  for (const TestHeader& header : record.headers) {
    text += " ";
    text += header.name;
    text += "=";
    text += header.value.value_or("<null>");
  }
  return text;
}

}  // namespace

std::string LatenessSummary::ToString() const {
  std::ostringstream out;
  out << "n=" << count << " p50=" << p50_ms << "ms p99=" << p99_ms << "ms max=" << max_ms << "ms";
  return out.str();
}

LatenessSummary Summarize(std::vector<int64_t>& samples_ms) {
  LatenessSummary summary;
  summary.count = samples_ms.size();
  if (samples_ms.empty()) return summary;
  std::sort(samples_ms.begin(), samples_ms.end());
  auto at = [&](double q) {
    return samples_ms[std::min(samples_ms.size() - 1, static_cast<size_t>(q * samples_ms.size()))];
  };
  summary.p50_ms = at(0.50);
  summary.p99_ms = at(0.99);
  summary.max_ms = samples_ms.back();
  return summary;
}

std::string DeliveryReport::ToString() const {
  std::ostringstream out;
  out << "expected=" << expected << " delivered=" << delivered << " missing=" << missing()
      << " duplicates=" << duplicates << " early=" << early << " wrong_topic=" << wrong_topic
      << " wrong_partition=" << wrong_partition << " wrong_content=" << wrong_content
      << " unknown=" << unknown;
  if (cancelled + delivered_though_cancelled + delivered_despite_cancel > 0) {
    out << " cancelled=" << cancelled
        << " delivered_though_cancelled=" << delivered_though_cancelled
        << " delivered_despite_cancel=" << delivered_despite_cancel;
  }
  out << "\n  lateness at the broker (target timestamp - deliver_at): "
      << produce_lateness.ToString()
      << "\n  lateness at the consumer (received - deliver_at): " << receive_lateness.ToString();
  if (!missing_ids.empty()) {
    out << "\n  missing ids:";
    for (int64_t id : missing_ids) out << " " << id;
  }
  for (const std::string& problem : problems) out << "\n  " << problem;
  return out.str();
}

DelayWorkload::DelayWorkload(WorkloadSpec spec) : spec_(std::move(spec)), rng_(spec_.seed) {}

size_t DelayWorkload::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ledger_.size();
}

int64_t DelayWorkload::DeliverAtMs(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ledger_.at(static_cast<size_t>(id)).deliver_at_ms;
}

int64_t DelayWorkload::CreatedMs(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ledger_.at(static_cast<size_t>(id)).created_ms;
}

void DelayWorkload::SetSource(int64_t id, int32_t partition, int64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  ledger_.at(static_cast<size_t>(id)).source = RecordId(spec_.delay_topic, partition, offset);
}

void DelayWorkload::Cancel(int64_t id, bool certain) {
  std::lock_guard<std::mutex> lock(mu_);
  ledger_.at(static_cast<size_t>(id)).cancel =
      certain ? ExpectedRecord::Cancel::kCancelled : ExpectedRecord::Cancel::kMaybe;
}

TestRecord DelayWorkload::Next() {
  std::lock_guard<std::mutex> lock(mu_);
  const int* weights = spec_.min_delay_ms > 0 ? kDelayedStyleWeights : kStyleWeights;
  std::discrete_distribution<int> style(weights, weights + std::size(kStyleWeights));
  std::uniform_int_distribution<int64_t> delay(spec_.min_delay_ms, spec_.max_delay_ms);
  const int s = style(rng_);
  const bool alt = !spec_.alt_target.empty() && rng_() % 5 == 0;
  return Build(static_cast<int64_t>(ledger_.size()), delay(rng_), s, alt);
}

TestRecord DelayWorkload::NextWithDelay(int64_t delay_ms, bool deliver_at_style) {
  std::lock_guard<std::mutex> lock(mu_);
  return Build(static_cast<int64_t>(ledger_.size()), delay_ms,
               deliver_at_style ? kDeliverAtOnly : kDelayOnly, false);
}

TestRecord DelayWorkload::Build(int64_t id, int64_t delay_ms, int style, bool alt_target) {
  const int64_t now_ms = NowMs();
  TestRecord out;
  out.topic = spec_.delay_topic;
  ExpectedRecord expected;
  expected.created_ms = now_ms;
  expected.topic = alt_target ? spec_.alt_target : spec_.default_target;

  if (rng_() % 20 != 0) out.key = "key-" + std::to_string(rng_() % spec_.key_space);
  // A tombstone and an empty value pass through as they are.
  switch (rng_() % 40) {
    case 0:
      break;
    case 1:
      out.value = "";
      break;
    default:
      out.value = std::string(16 + rng_() % 240, 'x');
      for (char& c : *out.value) c = static_cast<char>('a' + rng_() % 26);
  }

  std::vector<TestHeader> user = {{kIdHeader, std::to_string(id)},
                                  {"trace-id", "t" + std::to_string(id)}};
  if (rng_() % 3 == 0) user.push_back({"empty", std::nullopt});
  if (rng_() % 5 == 0) {
    user.push_back({"dup", "first"});
    user.push_back({"dup", "second"});
  }

  switch (style) {
    case kDelayOnly:
      out.timestamp_ms = now_ms;
      out.headers.push_back({"x-delay", std::to_string(delay_ms)});
      expected.deliver_at_ms = now_ms + delay_ms;
      break;
    case kDeliverAtOnly:
      out.headers.push_back({"x-deliver-at", std::to_string(now_ms + delay_ms)});
      expected.deliver_at_ms = now_ms + delay_ms;
      break;
    case kBoth:
      out.timestamp_ms = now_ms;
      out.headers.push_back({"x-delay", std::to_string(delay_ms / 2)});
      out.headers.push_back({"x-deliver-at", std::to_string(now_ms + delay_ms)});
      expected.deliver_at_ms = now_ms + delay_ms;
      break;
    case kZeroDelay:
      out.headers.push_back({"x-delay", "0"});
      expected.deliver_at_ms = now_ms;
      break;
    default:
      expected.deliver_at_ms = now_ms;
      break;
  }
  // Control headers go anywhere among the user's; the bridge must strip them wherever they are.
  if (alt_target) out.headers.push_back({"x-target-topic", spec_.alt_target});
  for (TestHeader& header : user) {
    out.headers.insert(out.headers.begin() + static_cast<long>(rng_() % (out.headers.size() + 1)),
                       std::move(header));
  }
  for (const TestHeader& header : out.headers) {
    if (!IsControlHeader(header.name)) expected.headers.push_back(header);
  }
  expected.key = out.key;
  expected.value = out.value;
  ledger_.push_back(std::move(expected));
  return out;
}

DeliveryReport DelayWorkload::CheckDeliveries(
    const std::vector<TestRecord>& received,
    const std::map<std::string, int32_t>& partitions) const {
  std::lock_guard<std::mutex> lock(mu_);
  DeliveryReport report;
  report.expected = ledger_.size();
  std::vector<std::vector<const TestRecord*>> copies(ledger_.size());
  std::map<std::string, int64_t> id_by_source;  // each x-delay-source names one record
  std::vector<int64_t> produce_lateness;
  std::vector<int64_t> receive_lateness;

  for (const TestRecord& record : received) {
    if (record.value && record.value->starts_with(kProbePrefix)) continue;
    const std::optional<int64_t> id = WorkloadId(record);
    if (!id || *id < 0 || static_cast<size_t>(*id) >= ledger_.size()) {
      ++report.unknown;
      Note(report, "unknown record on " + record.topic + ": " + Describe(record));
      continue;
    }
    copies[*id].push_back(&record);
    const ExpectedRecord& want = ledger_[*id];
    const std::string where = "id " + std::to_string(*id) + " (" + record.topic + "/" +
                              std::to_string(record.partition) + "@" +
                              std::to_string(record.offset) + ")";
    if (want.cancel == ExpectedRecord::Cancel::kCancelled && copies[*id].size() == 1) {
      ++report.delivered_though_cancelled;
      Note(report, where + " delivered though cancelled well before its deliver_at " +
                       std::to_string(want.deliver_at_ms));
    }

    if (record.timestamp_ms < want.deliver_at_ms || record.received_at_ms < want.deliver_at_ms) {
      ++report.early;
      Note(report, where + " early: deliver_at " + std::to_string(want.deliver_at_ms) +
                       ", target timestamp " + std::to_string(record.timestamp_ms) + ", received " +
                       std::to_string(record.received_at_ms));
    }
    produce_lateness.push_back(record.timestamp_ms - want.deliver_at_ms);
    receive_lateness.push_back(record.received_at_ms - want.deliver_at_ms);

    if (record.topic != want.topic) {
      ++report.wrong_topic;
      Note(report, where + " expected on topic " + want.topic);
    } else if (want.key) {
      const auto it = partitions.find(record.topic);
      const int32_t expected_partition =
          it == partitions.end() ? -1 : JavaPartitionForKey(*want.key, it->second);
      if (record.partition != expected_partition) {
        ++report.wrong_partition;
        Note(report, where + " key " + *want.key + " belongs in partition " +
                         std::to_string(expected_partition));
      }
    }

    // The bridge appends x-delay-source after the record's own headers.
    std::vector<TestHeader> user_headers = record.headers;
    bool source_ok = false;
    if (!user_headers.empty() && user_headers.back().name == kSourceHeader &&
        user_headers.back().value) {
      const std::string& source = *user_headers.back().value;
      const int64_t named = id_by_source.emplace(source, *id).first->second;
      source_ok = WellFormedSource(source, spec_.delay_topic) && named == *id &&
                  (want.source.empty() || source == want.source);
      user_headers.pop_back();
    }
    if (record.key != want.key || record.value != want.value || user_headers != want.headers ||
        !source_ok) {
      ++report.wrong_content;
      Note(report, where + " content differs (key/value/headers/x-delay-source" +
                       (want.source.empty() ? "" : " " + want.source) + "): " + Describe(record));
    }
  }

  for (size_t id = 0; id < copies.size(); ++id) {
    const ExpectedRecord::Cancel cancel = ledger_[id].cancel;
    if (copies[id].empty() && cancel != ExpectedRecord::Cancel::kNone) {
      ++report.cancelled;  // not owed
      continue;
    }
    if (cancel == ExpectedRecord::Cancel::kMaybe) ++report.delivered_despite_cancel;
    if (copies[id].empty()) {
      if (report.missing_ids.size() < kMaxListed) {
        report.missing_ids.push_back(static_cast<int64_t>(id));
      }
      continue;
    }
    ++report.delivered;
    if (copies[id].size() > 1) {
      report.duplicates += copies[id].size() - 1;
      auto& all = report.duplicated[static_cast<int64_t>(id)];
      for (const TestRecord* copy : copies[id]) all.push_back(*copy);
    }
  }
  report.expected -= report.cancelled;
  report.produce_lateness = Summarize(produce_lateness);
  report.receive_lateness = Summarize(receive_lateness);
  return report;
}

TestRecord ProbeRecord(const std::string& delay_topic, const std::string& tag) {
  TestRecord probe;
  probe.topic = delay_topic;
  probe.key = "probe";
  probe.value = std::string(kProbePrefix) + tag;
  return probe;
}

std::optional<int64_t> WorkloadId(const TestRecord& record) {
  const std::optional<std::string> text = record.Header(kIdHeader);
  if (!text) return std::nullopt;
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), id);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return id;
}

}  // namespace delaybridge::testing
