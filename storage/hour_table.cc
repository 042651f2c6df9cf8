#include "storage/hour_table.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "storage/heads_file.h"
#include "storage/hour_files.h"

namespace delaybridge::storage {
namespace {

// Parked hours keep a 28.8 KB head table each until the next sync; past this many, they are
// synced early. Bounds their memory to about 30 MB while letting a month of hours (720) be
// appended to between two syncs without early fdatasyncs.
constexpr size_t kMaxParkedHours = 1024;

}  // namespace

HourTable::HourTable(std::string dir, size_t max_open_hours)
    : dir_(std::move(dir)), max_open_hours_(std::max<size_t>(1, max_open_hours)) {}

void HourTable::AddClosed(int64_t epoch_hour, const HourState& state) {
  hours_[epoch_hour] = state;
}

std::vector<int64_t> HourTable::Hours() const {
  std::vector<int64_t> hours;
  hours.reserve(hours_.size());
  for (const auto& [hour, state] : hours_) hours.push_back(hour);
  return hours;
}

std::optional<int64_t> HourTable::FirstHourFrom(int64_t epoch_hour) const {
  auto it = hours_.lower_bound(epoch_hour);
  if (it == hours_.end()) return std::nullopt;
  return it->first;
}

uint64_t HourTable::EntriesOf(int64_t epoch_hour) const {
  if (auto it = open_.find(epoch_hour); it != open_.end()) return it->second->state().entries;
  if (auto it = parked_.find(epoch_hour); it != parked_.end()) {
    return it->second->state().entries;
  }
  return hours_.at(epoch_hour).entries;
}

void HourTable::CheckStates() const {
#ifndef NDEBUG
  assert(open_.size() <= max_open_hours_);
  for (const auto& [hour, appender] : open_) {
    assert(hours_.count(hour) && !parked_.count(hour) && !cached_.count(hour));
  }
  for (const auto& [hour, appender] : parked_) {
    assert(hours_.count(hour) && !cached_.count(hour));
  }
  for (const auto& [hour, cells] : cached_) assert(hours_.count(hour));
  recent_.ForEach([this](int64_t hour, const HourAppender* appender) {
    assert(open_.count(hour) && open_.at(hour).get() == appender);
  });
#endif
}

Status HourTable::EvictLeastRecentlyUsed() {
  auto victim = std::min_element(open_.begin(), open_.end(), [](const auto& a, const auto& b) {
    return a.second->last_used() < b.second->last_used();
  });
  int64_t hour = victim->first;
  std::unique_ptr<HourAppender> appender = std::move(victim->second);
  open_.erase(victim);
  recent_.Forget(hour);
  // An hour with unsynced appends or index entries, or covered by a sync in flight, is parked
  // (no fdatasync now; the next or the running sync covers it, and only then may its head table
  // be saved). Too many parked hours are synced early, which bounds their memory.
  bool unsynced = appender->dirty() || appender->sync_in_flight() || !appender->index_synced();
  Status s = unsynced ? appender->Park() : appender->Close();
  if (!s.ok()) {
    failure_ = s.WithContext("close hour " + HourName(hour));
    return failure_;
  }
  if (unsynced) {
    parked_[hour] = std::move(appender);
    if (parked_.size() > kMaxParkedHours) s = CloseParked();
  } else {
    hours_[hour] = appender->state();
  }
  if (!s.ok()) failure_ = s;
  return s;
}

Result<HourAppender*> HourTable::OpenHour(int64_t epoch_hour, bool* created) {
  if (auto it = open_.find(epoch_hour); it != open_.end()) return it->second.get();
  if (open_.size() >= max_open_hours_) {
    Status s = EvictLeastRecentlyUsed();
    if (!s.ok()) return s;
  }
  if (auto it = parked_.find(epoch_hour); it != parked_.end()) {
    // On failure the hour stays parked, whole: the next sync still covers its appends, and its
    // end is still known (Unpark changes nothing unless both files open).
    if (Status s = it->second->Unpark(); !s.ok()) return s.WithContext("reopen parked hour");
    HourAppender* raw = it->second.get();
    open_[epoch_hour] = std::move(it->second);
    parked_.erase(it);
    CheckStates();
    return raw;
  }
  auto known = hours_.find(epoch_hour);
  Result<std::unique_ptr<HourAppender>> appender =
      known != hours_.end() ? HourAppender::Reopen(dir_, epoch_hour, known->second)
                            : HourAppender::Create(dir_, epoch_hour);
  if (!appender.ok()) return appender.status().WithContext("open hour " + HourName(epoch_hour));
  if (known == hours_.end()) {
    hours_[epoch_hour] = (*appender)->state();
    *created = true;
  }
  cached_.erase(epoch_hour);  // the appender's table is now the live one
  HourAppender* raw = appender->get();
  open_[epoch_hour] = std::move(*appender);
  CheckStates();
  return raw;
}

HourAppender* HourTable::OpenAppender(int64_t epoch_hour) {
  auto it = open_.find(epoch_hour);
  return it == open_.end() ? nullptr : it->second.get();
}

Result<const HeadCells*> HourTable::CellsOf(int64_t epoch_hour) {
  if (auto it = open_.find(epoch_hour); it != open_.end()) return &it->second->cells();
  if (auto it = parked_.find(epoch_hour); it != parked_.end()) return &it->second->cells();
  if (auto it = cached_.find(epoch_hour); it != cached_.end()) {
    it->second.last_used = ++tick_;
    return it->second.cells.get();
  }
  const HourState& state = hours_.at(epoch_hour);
  Result<std::optional<HeadsSlot>> slot =
      LoadHeads(PathsOfHour(dir_, epoch_hour).heads, epoch_hour);
  if (!slot.ok()) return slot.status();
  uint64_t covered = slot->has_value() ? (*slot)->covered : 0;
  if (covered != state.entries) {
    return Status::Corruption(PathsOfHour(dir_, epoch_hour).heads + ": covers " +
                              std::to_string(covered) + " of " + std::to_string(state.entries) +
                              " entries");
  }
  if (cached_.size() >= max_open_hours_) {
    cached_.erase(std::min_element(
        cached_.begin(), cached_.end(),
        [](const auto& a, const auto& b) { return a.second.last_used < b.second.last_used; }));
  }
  CachedCells& entry = cached_[epoch_hour];
  entry.cells = std::make_unique<HeadCells>();
  if (slot->has_value()) *entry.cells = (*slot)->cells;
  entry.last_used = ++tick_;
  CheckStates();
  return entry.cells.get();
}

Status HourTable::Remove(int64_t epoch_hour) {
  // The appender's buffered records are delivered by the caller's own statement: drop them.
  open_.erase(epoch_hour);
  recent_.Forget(epoch_hour);
  parked_.erase(epoch_hour);
  cached_.erase(epoch_hour);
  hours_.erase(epoch_hour);
  CheckStates();
  return RemoveHourFiles(PathsOfHour(dir_, epoch_hour));
}

Status HourTable::StartSyncs(std::vector<PosixFile>* files) {
  for (auto* appenders : {&open_, &parked_}) {
    for (auto& [hour, appender] : *appenders) {
      // A parked hour also waits for its index to be synced before it is closed.
      const bool due = appender->dirty() || (appenders == &parked_ && !appender->index_synced());
      if (!due) continue;
      Status s = appender->StartSync(files);
      if (!s.ok()) {
        AbortSyncs();
        return s.WithContext("sync hour " + HourName(hour));
      }
    }
  }
  return Status::Ok();
}

void HourTable::AbortSyncs() {
  for (auto* appenders : {&open_, &parked_}) {
    for (auto& [hour, appender] : *appenders) {
      if (appender->sync_in_flight()) appender->AbortSync();
    }
  }
}

Status HourTable::FinishSyncs() {
  // Every file the sync covered is durable now: the head tables snapshotted when it started may
  // be written (docs/storage-format.md "Writing and the sync order").
  for (auto* appenders : {&open_, &parked_}) {
    for (auto& [hour, appender] : *appenders) {
      if (!appender->sync_in_flight()) continue;
      Status s = appender->FinishSync();
      if (!s.ok()) return s.WithContext("save head table of hour " + HourName(hour));
    }
  }
  // Parked hours appended to since the sync started stay parked for the next sync (an append to
  // a parked hour unparks it, so only a later eviction can park it dirty again); so do hours
  // parked while open, whose index this sync did not cover.
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (it->second->dirty() || !it->second->index_synced()) {
      ++it;
      continue;
    }
    if (Status s = it->second->Close(); !s.ok()) {
      return s.WithContext("close hour " + HourName(it->first));
    }
    hours_[it->first] = it->second->state();
    it = parked_.erase(it);
  }
  CheckStates();
  return Status::Ok();
}

Status HourTable::CloseParked() {
  for (auto& [hour, appender] : parked_) {
    if (Status s = appender->Close(); !s.ok()) return s.WithContext("close hour " + HourName(hour));
    hours_[hour] = appender->state();
  }
  parked_.clear();
  CheckStates();
  return Status::Ok();
}

Status HourTable::CloseAll() {
  Status s;
  for (auto& [hour, appender] : open_) {
    s = appender->Close();
    if (!s.ok()) break;
    hours_[hour] = appender->state();
  }
  Abandon();
  return s;
}

void HourTable::Abandon() {
  open_.clear();
  recent_.Clear();
  parked_.clear();
}

}  // namespace delaybridge::storage
