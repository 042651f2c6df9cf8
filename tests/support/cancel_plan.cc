#include "tests/support/cancel_plan.h"

#include <algorithm>
#include <sstream>

namespace delaybridge::testing {

std::string RecordId(const std::string& topic, int32_t partition, int64_t offset) {
  return topic + "/" + std::to_string(partition) + "/" + std::to_string(offset);
}

std::vector<ProducedAt> FirstAcknowledged(const std::deque<ProducedAt>& produced, size_t n) {
  std::vector<ProducedAt> acknowledged;
  for (auto it = produced.begin(); it != produced.end() && acknowledged.size() < n; ++it) {
    if (it->offset >= 0) acknowledged.push_back(*it);
  }
  return acknowledged;
}

CancelPlan::Choice CancelPlan::Consider(uint64_t record, int64_t acked_ms, int64_t due_ms) {
  const double draw = std::uniform_real_distribution<double>(0, 1)(rng_);
  const int64_t latest_ms = due_ms - kCancelLeadMs;
  if (draw < in_time_fraction_ && latest_ms >= acked_ms) {
    const int64_t at_ms = std::uniform_int_distribution<int64_t>(acked_ms, latest_ms)(rng_);
    planned_.emplace(at_ms, std::make_pair(record, due_ms));
    return Choice::kInTime;
  }
  if (draw >= in_time_fraction_ && draw < in_time_fraction_ + late_fraction_) {
    late_[record] = Late{due_ms, -1};
    return Choice::kLate;
  }
  return Choice::kNone;
}

std::vector<uint64_t> CancelPlan::TakeDue(int64_t now_ms) {
  std::vector<uint64_t> due;
  while (!planned_.empty() && planned_.begin()->first <= now_ms) {
    const auto [record, due_ms] = planned_.begin()->second;
    sent_[record] = InTime{due_ms, now_ms};
    due.push_back(record);
    planned_.erase(planned_.begin());
  }
  return due;
}

bool CancelPlan::TakeLate(uint64_t record, int64_t sent_ms) {
  auto it = late_.find(record);
  if (it == late_.end() || it->second.sent_ms >= 0) return false;
  it->second.sent_ms = sent_ms;
  return true;
}

bool CancelPlan::MustNotBeDelivered(uint64_t record) const {
  auto it = sent_.find(record);
  return it != sent_.end() && it->second.due_ms - it->second.sent_ms >= kCertainLeadMs;
}

bool CancelPlan::Done(uint64_t records, const std::function<bool(uint64_t)>& delivered) const {
  if (unsent() + late_unsent() > 0) return false;
  for (uint64_t record = 0; record < records; ++record) {
    if (!sent_.contains(record) && !delivered(record)) return false;
  }
  return true;
}

void CancelPlan::ForEachCancelledInTime(const std::function<void(uint64_t, bool)>& mark) const {
  for (const auto& [record, cancel] : sent_) mark(record, MustNotBeDelivered(record));
}

std::optional<int64_t> CancelPlan::CancelSentMs(uint64_t record) const {
  auto it = sent_.find(record);
  if (it == sent_.end()) return std::nullopt;
  return it->second.sent_ms;
}

size_t CancelPlan::late_unsent() const {
  return static_cast<size_t>(std::count_if(
      late_.begin(), late_.end(), [](const auto& entry) { return entry.second.sent_ms < 0; }));
}

size_t CancelPlan::late_sent() const { return late_.size() - late_unsent(); }

size_t CancelPlan::certain() const {
  return static_cast<size_t>(std::count_if(sent_.begin(), sent_.end(), [this](const auto& entry) {
    return MustNotBeDelivered(entry.first);
  }));
}

CancelPlan::Counts CancelPlan::Expected(const std::function<bool(uint64_t)>& delivered) const {
  constexpr int64_t kMsPerHour = 3'600'000;
  Counts counts;
  for (const auto& [record, cancel] : sent_) {
    if (delivered(record)) {
      ++counts.too_late_min;
    } else {
      ++counts.cancelled;
    }
  }
  counts.too_late_max = counts.too_late_min;
  for (const auto& [record, late] : late_) {
    if (late.sent_ms < 0) continue;
    ++counts.too_late_max;
    if (late.sent_ms / kMsPerHour == late.due_ms / kMsPerHour) ++counts.too_late_min;
  }
  return counts;
}

CancelPlan::CounterCheck CancelPlan::CheckCounters(const std::map<std::string, int64_t>& stats,
                                                   const std::function<bool(uint64_t)>& delivered,
                                                   size_t unknown, size_t dead_lettered) const {
  const Counts want = Expected(delivered);
  const auto counter = [&stats](const std::string& name) {
    auto it = stats.find(name);
    return it == stats.end() ? int64_t{-1} : it->second;
  };
  const int64_t too_late = counter("cancel_too_late");
  // The late cancels not counted too late are counted unknown (see Counts).
  const std::vector<std::pair<std::string, int64_t>> exact = {
      {"cancelled", static_cast<int64_t>(want.cancelled)},
      {"cancel_unknown", static_cast<int64_t>(unknown + want.too_late_max) - too_late},
      {"dead_lettered", static_cast<int64_t>(dead_lettered)}};
  CounterCheck check;
  check.summary = "counted cancel_too_late=" + std::to_string(too_late) + " (expected " +
                  std::to_string(want.too_late_min) + ".." + std::to_string(want.too_late_max) +
                  ")";
  if (too_late < static_cast<int64_t>(want.too_late_min) ||
      too_late > static_cast<int64_t>(want.too_late_max)) {
    check.mismatches.push_back("cancel_too_late");
  }
  for (const auto& [name, value] : exact) {
    check.summary += " " + name + "=" + std::to_string(counter(name)) + " (expected " +
                     std::to_string(value) + ")";
    if (counter(name) != value) check.mismatches.push_back(name);
  }
  return check;
}

std::vector<MalformedCancel> MalformedCancels(const std::string& delay_topic, int32_t partition,
                                              const std::string& other_topic) {
  return {
      {"other-partition", RecordId(delay_topic, partition + 1, 0), "names another partition"},
      {"other-topic", RecordId(other_topic, partition, 0), "names another partition"},
      {"no-id", "cancel-everything", "is not <topic>/<partition>/<offset>"},
      {"bad-offset", delay_topic + "/" + std::to_string(partition) + "/last",
       "is not <topic>/<partition>/<offset>"},
      {"offset-ahead", RecordId(delay_topic, partition, 1'000'000'000),
       "names an offset not before"},
      {"null", std::nullopt, "null value"},
  };
}

std::vector<std::string> CheckDeadLetteredCancels(const std::vector<MalformedCancel>& sent,
                                                  const std::vector<DeadLetter>& letters,
                                                  bool once) {
  std::vector<std::string> problems;
  size_t matched = 0;
  for (const MalformedCancel& cancel : sent) {
    size_t copies = 0;
    for (const DeadLetter& letter : letters) {
      if (letter.cancel != cancel.name) continue;
      ++copies;
      const std::string error = letter.delay_error.value_or("<none>");
      if (letter.value != "cancel " + cancel.name || letter.cancel_id != cancel.id) {
        problems.push_back(cancel.name + ": value or x-delay-cancel changed on the way");
      }
      if (error.rfind("x-delay-cancel: ", 0) != 0 ||
          error.find(cancel.reason) == std::string::npos) {
        problems.push_back(cancel.name + ": x-delay-error \"" + error +
                           "\" does not give the reason \"" + cancel.reason + "\"");
      }
    }
    matched += copies;
    if (copies == 0 || (once && copies > 1)) {
      problems.push_back(cancel.name + " dead-lettered " + std::to_string(copies) + " times");
    }
  }
  if (matched != letters.size()) {
    problems.push_back(std::to_string(letters.size() - matched) + " unexpected dead letters");
  }
  return problems;
}

std::map<std::string, int64_t> LastStatsCounters(const std::string& log) {
  std::map<std::string, int64_t> counters;
  const size_t at = log.rfind("stats: ");
  if (at == std::string::npos) return counters;
  const size_t end = std::min(log.find('\n', at), log.find(" | ", at));
  std::istringstream fields(log.substr(at + 7, end == std::string::npos ? end : end - at - 7));
  for (std::string field; fields >> field;) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) continue;
    try {
      counters[field.substr(0, eq)] = std::stoll(field.substr(eq + 1));
    } catch (const std::exception&) {
      // not a number: not a counter
    }
  }
  return counters;
}

std::string CancelCounters(const std::map<std::string, int64_t>& stats) {
  std::string text;
  for (const char* name : {"cancelled", "cancel_too_late", "cancel_unknown", "dead_lettered"}) {
    auto it = stats.find(name);
    // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict on "" + std::string.
    if (!text.empty()) text += ' ';
    text += name;
    text += '=';
    text += it == stats.end() ? std::string("?") : std::to_string(it->second);
  }
  return text;
}

}  // namespace delaybridge::testing
