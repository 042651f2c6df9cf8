#include "plugin/schedule_inbox.h"

#include <utility>

namespace delaybridge::plugin {

bool ScheduleInbox::Put(std::vector<DueRecord> batch, int64_t earliest_due_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  batches_.push_back(std::move(batch));
  if (wake_up_asked_) return false;
  if (looks_by_ms_ && earliest_due_ms >= *looks_by_ms_ + kPromiseMarginMs) return false;
  wake_up_asked_ = true;
  return true;
}

std::vector<std::vector<DueRecord>> ScheduleInbox::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  wake_up_asked_ = false;
  return std::exchange(batches_, {});
}

bool ScheduleInbox::Promise(std::optional<int64_t> looks_by_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  looks_by_ms_ = looks_by_ms;
  return !batches_.empty();
}

}  // namespace delaybridge::plugin
