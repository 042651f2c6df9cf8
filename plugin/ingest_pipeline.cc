#include "plugin/ingest_pipeline.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "plugin/dead_letter.h"

namespace delaybridge::plugin {

namespace {

constexpr int64_t kRetryMinMs = 100;    // held records: first retry of the store
constexpr int64_t kRetryMaxMs = 5'000;  // held records: back-off cap

}  // namespace

IngestPipeline::IngestPipeline(boost::asio::io_context& io, Settings settings,
                               PartitionStores& stores, RecordHandover& delivery, Hooks hooks,
                               Logger& logger, WarningThrottle& warnings, const Clock& clock)
    : settings_(std::move(settings)),
      stores_(stores),
      delivery_(delivery),
      hooks_(std::move(hooks)),
      logger_(logger),
      warnings_(warnings),
      clock_(clock),
      retry_timer_(io) {}

void IngestPipeline::Take(std::vector<IncomingRecord> records) {
  std::vector<DueRecord> due;
  LastPartition last;
  for (auto& record : records) {
    if (failed_) break;
    // Behind a held record, in order (consumption is paused, but a fetched batch may still come).
    if (!held_.empty()) {
      held_.push_back(std::move(record));
      continue;
    }
    if (Status s = Ingest(record, last, &due); !s.ok()) Hold(std::move(record), s);
  }
  delivery_.Schedule(std::move(due));
}

void IngestPipeline::DropHeld(const std::vector<TopicPartitionId>& partitions) {
  std::erase_if(held_, [&partitions](const IncomingRecord& r) {
    return std::find(partitions.begin(), partitions.end(),
                     TopicPartitionId{r.topic, r.partition}) != partitions.end();
  });
  if (held_.empty()) retry_timer_.cancel();
}

void IngestPipeline::Hold(IncomingRecord record, const Status& why) {
  ++counts_.append_failures;
  held_.push_back(std::move(record));
  if (held_.size() > 1) return;  // the retry is armed
  held_since_ms_ = clock_.now_ms();
  retry_ms_ = kRetryMinMs;
  logger_.Warn(why.ToString() + ": pausing consumption until the store takes records again " +
               "(deliveries go on; retrying with back-off up to " + std::to_string(kRetryMaxMs) +
               " ms)");
  hooks_.held_changed();
  ScheduleRetry();
}

void IngestPipeline::ScheduleRetry() {
  retry_timer_.expires_after(std::chrono::milliseconds(retry_ms_));
  retry_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) RetryHeld();
  });
}

void IngestPipeline::RetryHeld() {
  if (held_.empty()) return;
  std::vector<DueRecord> due;
  LastPartition last;
  while (!held_.empty() && !failed_) {
    if (Status s = Ingest(held_.front(), last, &due); !s.ok()) {
      ++counts_.append_failures;
      retry_ms_ = std::min(2 * retry_ms_, kRetryMaxMs);
      warnings_.Warn(s.ToString() + ": " + std::to_string(held_.size()) +
                     " records wait, consumption paused; retrying in " + std::to_string(retry_ms_) +
                     " ms");
      ScheduleRetry();
      break;
    }
    held_.pop_front();
  }
  delivery_.Schedule(std::move(due));
  if (!held_.empty() || failed_) return;
  logger_.Info("the stores take records again after " +
               std::to_string(clock_.now_ms() - held_since_ms_) + " ms: resuming consumption");
  hooks_.held_changed();
}

void IngestPipeline::LookUp(const IncomingRecord& in, LastPartition& last) const {
  if (last.id && in.partition == last.id->partition && in.topic == last.id->topic) return;
  last.id = TopicPartitionId{in.topic, in.partition};
  auto it = stores_.find(*last.id);
  last.store = it == stores_.end() ? nullptr : it->second.get();
  // A store is only made for a partition of a routed (subscribed) topic.
  last.default_target = last.store ? &settings_.routes.at(in.topic) : nullptr;
}

Status IngestPipeline::Ingest(const IncomingRecord& in, LastPartition& last,
                              std::vector<DueRecord>* due) {
  LookUp(in, last);
  if (last.store == nullptr) {
    // A record fetched just before its partition was revoked; its offset is not committed,
    // so the partition's new owner reads it again.
    logger_.Warn("ignoring " + in.topic + "/" + std::to_string(in.partition) + "/" +
                 std::to_string(in.offset) + ": partition not assigned");
    return Status::Ok();
  }
  PartitionStore& store = *last.store;
  if (auto last_added = store.offsets().last_added(); last_added && in.offset <= *last_added) {
    // Fetched again in this run: librdkafka resumes a paused partition from the last stored
    // offset (auto store is off), not from the last record it returned.
    ++counts_.refetched;
    return Status::Ok();
  }
  if (auto below = store.stored_below(); below && in.offset < *below) {
    // Stored before a crash whose offset commit was lost: storing it again would deliver twice.
    SkipFinished(store, in.offset, counts_.already_stored);
    return Status::Ok();
  }
  const int64_t now_ms = clock_.now_ms();
  IngestDecision decision = DecideIngest(in, *last.default_target, settings_.policy, now_ms);
  if (auto* cancel = std::get_if<CancelRequested>(&decision)) {
    return Cancel(store, cancel->cancel, due);
  }
  if (auto* rejected = std::get_if<Rejected>(&decision)) {
    // Dead-lettered by the previous owner, or now.
    if (store.FinishedRejected(in.offset)) {
      SkipFinished(store, in.offset, counts_.already_finished);
      return Status::Ok();
    }
    return DeadLetter(store, in, rejected->reason);
  }
  auto& accepted = std::get<Accepted>(decision);
  if (store.Finished(in.offset, accepted.encoded.requested_deliver_at_ms())) {
    // Read again after a failover or restart: the committed progress says it was delivered
    // (or dead-lettered) already.
    SkipFinished(store, in.offset, counts_.already_finished);
    return Status::Ok();
  }
  if (store.Behind(accepted.encoded.requested_deliver_at_ms())) {
    DeliverBehind(store, in, std::move(accepted.encoded));
    return Status::Ok();
  }
  auto appended = store.Append(accepted.encoded, now_ms);
  if (!appended.ok() && appended.status().code() == Status::Code::kInvalidArgument) {
    // The store refuses this record (e.g. a due time past year 9999): bad input, not a fault.
    if (store.FinishedRejected(in.offset)) {
      SkipFinished(store, in.offset, counts_.already_finished);
      return Status::Ok();
    }
    return DeadLetter(store, in, "record: " + appended.status().message());
  }
  if (!appended.ok() && appended.status().code() == Status::Code::kFailedPrecondition) {
    // The store cannot be used any more (a failed fdatasync): only a reopen recovers it. Not
    // committed, so nothing is lost: the record is read again after the restart.
    Fail(appended.status().WithContext("append " + accepted.encoded.SourceId()));
    return Status::Ok();
  }
  if (!appended.ok()) {
    // A full disk, out of descriptors: nothing was appended, the record waits (Hold).
    return appended.status().WithContext("append " + accepted.encoded.SourceId() + " to store " +
                                         store.id().ToString());
  }
  ++counts_.stored;
  if (const std::optional<RecordPosition>& position = *appended) {
    due->push_back(DueRecord{store.id(), *position, std::move(accepted.encoded)});
  }
  return Status::Ok();
}

void IngestPipeline::SkipFinished(PartitionStore& store, int64_t offset, uint64_t& counter) {
  ++counter;
  store.offsets().AddSettled(offset);
  store.progress().AddFinished(offset);
}

Status IngestPipeline::DeadLetter(PartitionStore& store, const IncomingRecord& in,
                                  const std::string& reason) {
  ++counts_.dead_lettered;
  store.offsets().AddDeadLettered(in.offset);
  store.progress().AddDeadLetter(in.offset);
  DelayedRecord letter = MakeDeadLetter(in, reason, settings_.dead_letter_topic);
  logger_.Warn("dead letter " + letter.SourceId() + " -> " + settings_.dead_letter_topic + ": " +
               reason);
  delivery_.ProduceNow(store.id(), EncodedRecord::Encode(letter), DeliveryForm::kDeadLetter);
  return Status::Ok();
}

Status IngestPipeline::Cancel(PartitionStore& store, const StoredCancel& cancel,
                              std::vector<DueRecord>* due) {
  auto result = store.ApplyCancel(cancel);
  if (!result.ok() && result.status().code() == Status::Code::kFailedPrecondition) {
    // The store cannot be used any more (a failed fdatasync); the cancel is read again after the
    // restart.
    Fail(result.status().WithContext("cancel " + cancel.TargetId()));
    return Status::Ok();
  }
  // A full disk, out of descriptors, a read error: the cancel waits (Hold).
  if (!result.ok()) return result.status().WithContext("store " + store.id().ToString());
  for (const std::string& damage : result->damage) {
    ++counts_.corrupt_records;
    logger_.Error("store " + store.id().ToString() + ": finding " + cancel.TargetId() +
                  " met damage, searched its hour second by second: " + damage);
  }
  using Verdict = PartitionStore::CancelVerdict;
  bool counted = result->verdict == Verdict::kCancelled;
  if (result->loaded_at_ms) {
    // Appended with this consumer batch: not handed over yet.
    const auto in_batch = [&](const DueRecord& r) {
      return r.store == store.id() && r.source_offset == cancel.target_offset;
    };
    for (const DueRecord& r : *due) {
      if (in_batch(r)) store.Acknowledge(r.position);
    }
    if (std::erase_if(*due, in_batch) > 0) counted = true;
    // Commands run in order: the rest of the batch goes first, then the cancel.
    delivery_.Schedule(std::move(*due));
    due->clear();
    delivery_.Cancel(store.id(), cancel.target_offset, counted);
  }
  if (counted) {
    ++counts_.cancelled;
  } else if (result->verdict == Verdict::kTooLate) {
    CancelTooLate(store.id(), cancel.target_offset);
  } else if (result->verdict == Verdict::kUnknown) {
    ++counts_.cancel_unknown;
    warnings_.Warn("cancel " + cancel.SourceId() + ": no record " + cancel.TargetId() +
                   " is pending here (never accepted, itself a cancel, or delivered and its "
                   "hour's files removed)");
  }
  return Status::Ok();
}

void IngestPipeline::ApplyCancelAnswers(const std::vector<AckBatch::CancelAnswer>& answers) {
  for (const auto& answer : answers) {
    auto it = stores_.find(answer.store);
    if (it == stores_.end()) continue;  // revoked meanwhile: its next owner reads the cancel again
    // Finished without a delivery: the watermark may pass it.
    for (const RecordPosition& position : answer.cancelled_at) it->second->Acknowledge(position);
    if (answer.counted) continue;
    if (answer.cancelled_at.empty()) {
      CancelTooLate(answer.store, answer.target_offset);
    } else {
      ++counts_.cancelled;
    }
  }
}

void IngestPipeline::CancelTooLate(const TopicPartitionId& store, int64_t target_offset) {
  ++counts_.cancel_too_late;
  warnings_.Warn("cancel of " + store.topic + "/" + std::to_string(store.partition) + "/" +
                 std::to_string(target_offset) +
                 " came too late: it was delivered already, or is being produced");
}

void IngestPipeline::DeliverBehind(PartitionStore& store, const IncomingRecord& in,
                                   EncodedRecord record) {
  ++counts_.delivered_behind;
  // Settled (for the marker) and finished (for the progress) once the transaction commits.
  store.offsets().AddDeadLettered(in.offset);
  store.progress().AddDeadLetter(in.offset);
  delivery_.ProduceNow(store.id(), std::move(record), DeliveryForm::kRecord);
}

void IngestPipeline::Fail(const Status& status) {
  failed_ = true;
  hooks_.fail(status);
}

}  // namespace delaybridge::plugin
