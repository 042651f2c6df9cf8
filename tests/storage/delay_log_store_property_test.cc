// Property test of DelayLogStore against an in-memory model: random appends across many hours
// and seconds (hot seconds, past hours, far-future hours), interleaved with syncs, reads and
// close/reopen, with so few open hours allowed that the LRU churns constantly. Every second
// must read back exactly its records in arrival order with intact bytes.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "storage/delay_log_reader.h"
#include "storage/delay_log_store.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

using delaybridge::testing::TempDir;

constexpr int64_t kNowMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z
constexpr int64_t kHourMs = 3'600'000;

struct ModelRecord {
  int64_t deliver_at_ms;
  std::string payload;
};
using Model = std::map<int64_t, std::vector<ModelRecord>>;  // epoch second -> arrival order

class PropertyRun {
 public:
  PropertyRun(uint32_t seed, const std::string& dir) : random_(seed), dir_(dir) { Reopen(); }

  void Reopen() {
    if (store_ != nullptr) {
      ASSERT_TRUE(store_->Close().ok());
    }
    store_.reset();
    StoreOptions options;
    options.dir = dir_;
    options.max_open_hours = 1 + random_() % 3;
    RecoveryReport report;
    Result<std::unique_ptr<DelayLogStore>> store = DelayLogStore::Open(options, &report);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (const auto& p : report.problems)
      ADD_FAILURE() << p.file << "@" << p.offset << " " << p.what;
    store_ = std::move(store).value();
    EXPECT_EQ(report.records, records_);
  }

  int64_t PickDeliverAtMs() {
    switch (random_() % 6) {
      case 0:  // one hot second gets a large share of everything
        return kNowMs + 7'000 + random_() % 1000;
      case 1:  // the past: hours before now
        return kNowMs - static_cast<int64_t>(random_() % (48 * kHourMs));
      case 2:  // far future: up to ten years ahead
        return kNowMs + static_cast<int64_t>(random_() % (10ll * 365 * 24)) * kHourMs +
               random_() % kHourMs;
      default:  // the next 40 hours, clustered on few seconds per hour
        return kNowMs + static_cast<int64_t>(random_() % 40) * kHourMs + (random_() % 20) * 1000 +
               random_() % 1000;
    }
  }

  std::string PickPayload() {
    size_t size = random_() % 10 == 0 ? 70'000 + random_() % 1000 : random_() % 200;
    std::string payload(size, '\0');
    for (char& c : payload) c = static_cast<char>(random_());
    return payload;
  }

  void Append() {
    int64_t at = PickDeliverAtMs();
    std::string payload = PickPayload();
    Result<AppendResult> r = store_->Append(at, payload);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<ModelRecord>& second = model_[r->second];
    EXPECT_EQ(r->second, at / 1000);
    EXPECT_EQ(r->ordinal, second.size());
    EXPECT_EQ(r->sequence, store_->last_sequence());
    second.push_back({at, std::move(payload)});
    records_ += 1;
  }

  void CheckSecond(int64_t second) {
    std::vector<StoredRecord> out;
    Status s = store_->ReadSecond(second, &out);
    ASSERT_TRUE(s.ok()) << s.ToString();
    auto it = model_.find(second);
    size_t expected = it == model_.end() ? 0 : it->second.size();
    ASSERT_EQ(out.size(), expected) << "second " << second;
    for (size_t k = 0; k < out.size(); ++k) {
      EXPECT_EQ(out[k].ordinal, k);
      EXPECT_EQ(out[k].deliver_at_ms, it->second[k].deliver_at_ms);
      EXPECT_TRUE(out[k].payload == it->second[k].payload) << "second " << second << " #" << k;
    }
    Result<uint32_t> count = store_->CountInSecond(second);
    ASSERT_TRUE(count.ok());
    EXPECT_EQ(*count, expected);
  }

  void CheckNextNonEmpty() {
    int64_t from = PickDeliverAtMs() / 1000;
    int64_t limit = from + static_cast<int64_t>(random_() % (3 * 24 * 3600));
    Result<std::optional<int64_t>> next = store_->NextNonEmptySecond(from, limit);
    ASSERT_TRUE(next.ok());
    auto it = model_.lower_bound(from);
    std::optional<int64_t> expected;
    if (it != model_.end() && it->first < limit) expected = it->first;
    EXPECT_EQ(*next, expected) << "from " << from << " limit " << limit;
  }

  void Step() {
    uint32_t dice = random_() % 100;
    if (dice < 80) {
      Append();
    } else if (dice < 88) {
      uint64_t before = store_->last_sequence();
      ASSERT_TRUE(store_->Sync().ok());
      EXPECT_EQ(store_->durable_sequence(), before);
    } else if (dice < 95) {
      if (model_.empty()) return;
      auto it = model_.begin();
      std::advance(it, random_() % model_.size());
      CheckSecond(it->first);
    } else if (dice < 99) {
      CheckNextNonEmpty();
    } else {
      Reopen();
    }
  }

  void CheckEverything() {
    for (const auto& [second, records] : model_) CheckSecond(second);
    std::vector<int64_t> hours = store_->Hours();
    std::vector<int64_t> model_hours;
    for (const auto& [second, records] : model_) {
      if (model_hours.empty() || model_hours.back() != second / 3600) {
        model_hours.push_back(second / 3600);
      }
    }
    EXPECT_EQ(hours, model_hours);
  }

  void VerifyWithReader() {
    ASSERT_TRUE(store_->Close().ok());
    store_.reset();
    Result<std::unique_ptr<DelayLogReader>> reader = DelayLogReader::Open(dir_);
    ASSERT_TRUE(reader.ok());
    Result<VerifyReport> report = (*reader)->Verify();
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    for (const auto& p : report->problems)
      ADD_FAILURE() << p.file << "@" << p.offset << " " << p.what;
    EXPECT_EQ(report->records_ok, records_);
  }

 private:
  std::mt19937_64 random_;
  std::string dir_;
  std::unique_ptr<DelayLogStore> store_;
  Model model_;
  uint64_t records_ = 0;
};

TEST(DelayLogStorePropertyTest, SecondsReadBackExactlyWhatWasAppended) {
  for (uint32_t seed : {1u, 2u, 3u, 20261122u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TempDir dir("storage-test", TempDir::Place::kMemory);
    PropertyRun run(seed, dir.path());
    for (int step = 0; step < 1200 && !HasFatalFailure(); ++step) run.Step();
    run.CheckEverything();
    run.Reopen();
    run.CheckEverything();
    run.VerifyWithReader();
  }
}

}  // namespace
}  // namespace delaybridge::storage
