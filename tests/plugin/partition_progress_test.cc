// PartitionProgress: the low watermark L and late_below LL a new owner of a partition starts
// from. The property that matters: neither ever passes an offset whose record is not finished.
#include "plugin/partition_progress.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace delaybridge::plugin {
namespace {

constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kT0 = 1'800'000'000'000;  // a minute boundary

TEST(PartitionProgressTest, NothingReadMeansNoPosition) {
  PartitionProgress p;
  EXPECT_FALSE(p.has_position());
  p.StartAt(7);
  EXPECT_TRUE(p.has_position());
  const auto s = p.Take({kT0, 0});
  EXPECT_EQ(s.low_watermark, 7);
  EXPECT_EQ(s.late_below, 7);
  EXPECT_EQ(s.ingest_position, 7);
}

TEST(PartitionProgressTest, LowWatermarkIsTheOldestUndeliveredMinute) {
  PartitionProgress p;
  p.AddStored(10, kT0 + 30 * kMinuteMs, false);  // due in 30 minutes
  p.AddStored(11, kT0 + 1000, false);
  p.AddStored(12, kT0 + kMinuteMs + 1000, false);
  EXPECT_EQ(p.Take({kT0, 0}).low_watermark, 10);
  EXPECT_EQ(p.Take({kT0, 0}).ingest_position, 13);
  // The checkpoint passes the first two minutes: 10 still pins L.
  EXPECT_EQ(p.Take({kT0 + 2 * kMinuteMs, 0}).low_watermark, 10);
  EXPECT_EQ(p.Take({kT0 + 31 * kMinuteMs, 0}).low_watermark, 13);
}

TEST(PartitionProgressTest, LateRecordsHoldLateBelowUntilTheCheckpointPassesTheirSecond) {
  PartitionProgress p;
  p.AddStored(20, kT0 + 5000, false);
  p.AddStored(21, kT0 + 1200, true);  // asked for earlier, placed at the time it was stored
  p.AddStored(22, kT0 + 9000, false);
  EXPECT_EQ(p.Take({kT0, 0}).late_below, 21);
  EXPECT_EQ(p.Take({kT0 + 1999, 0}).late_below, 21);
  EXPECT_EQ(p.Take({kT0 + 2000, 0}).late_below, 23);
}

TEST(PartitionProgressTest, DeadLettersHoldBothUntilAcknowledged) {
  PartitionProgress p;
  p.AddDeadLetter(5);
  p.AddStored(6, kT0 + 100, false);
  auto s = p.Take({kT0 + kMinuteMs, 0});
  EXPECT_EQ(s.low_watermark, 5);
  EXPECT_EQ(s.late_below, 5);
  p.DeadLetterAcked(5);
  s = p.Take({kT0 + kMinuteMs, 0});
  EXPECT_EQ(s.low_watermark, 7);
  EXPECT_EQ(s.late_below, 7);
}

TEST(PartitionProgressTest, RecoveredRecordsHoldTheCommittedValuesUntilTheirEnd) {
  PartitionProgress p;
  p.StartAt(500);
  p.AddRecovered(kT0 + 3'600'000, 100, kT0 + 5000, 300);
  EXPECT_EQ(p.Take({kT0, 0}).low_watermark, 100);
  EXPECT_EQ(p.Take({kT0 + 4999, 0}).late_below, 300);
  EXPECT_EQ(p.Take({kT0 + 5000, 0}).late_below, 500);  // late ones were placed before the open
  EXPECT_EQ(p.Take({kT0 + 3'599'999, 0}).low_watermark, 100);
  const auto s = p.Take({kT0 + 3'600'000, 0});
  EXPECT_EQ(s.low_watermark, 500);
  EXPECT_EQ(s.late_below, 500);
}

// A random stream of records, some late, some dead-lettered, delivered in position order with
// acknowledgements in any order: L never passes an unfinished record, and LL never passes an
// unfinished late or dead-lettered one.
TEST(PartitionProgressTest, NeverPassesAnUnfinishedRecord) {
  std::mt19937_64 rng(7);
  PartitionProgress p;
  struct Pending {
    int64_t offset;
    bool late_or_dead;
  };
  std::multimap<RecordPosition, Pending> stored;  // by position
  std::map<int64_t, bool> dead_letters;           // offset -> acknowledged
  int64_t now = kT0;
  RecordPosition checkpoint{kT0, 0};
  for (int64_t offset = 0; offset < 20'000; ++offset) {
    now += static_cast<int64_t>(rng() % 20);
    const uint64_t kind = rng() % 10;
    if (kind == 0) {
      p.AddDeadLetter(offset);
      dead_letters[offset] = false;
    } else {
      const int64_t requested = now + static_cast<int64_t>(rng() % 300'000) - 60'000;
      const int64_t placed = std::max({requested, now, checkpoint.deliver_at_ms});
      const bool late = placed != requested;
      p.AddStored(offset, placed, late);
      stored.emplace(RecordPosition{placed, static_cast<uint32_t>(offset)}, Pending{offset, late});
    }
    // Deliver what is due (the delivery side lags by up to 3 s), acknowledge some dead letters.
    const int64_t delivered_until = now - static_cast<int64_t>(rng() % 3000);
    while (!stored.empty() && stored.begin()->first.deliver_at_ms <= delivered_until) {
      stored.erase(stored.begin());
    }
    for (auto& [o, acked] : dead_letters) acked = acked || rng() % 4 == 0;
    checkpoint = stored.empty() ? RecordPosition{now, 0}
                                : std::min(stored.begin()->first, RecordPosition{now, 0});
    const auto s = p.Take(checkpoint);
    for (const auto& [position, pending] : stored) {
      ASSERT_LE(s.low_watermark, pending.offset);
      if (pending.late_or_dead) {
        ASSERT_LE(s.late_below, pending.offset);
      }
    }
    for (const auto& [o, acked] : dead_letters) {
      if (acked) continue;
      ASSERT_LE(s.low_watermark, o);
      ASSERT_LE(s.late_below, o);
    }
    for (auto it = dead_letters.begin(); it != dead_letters.end();) {
      if (it->second) p.DeadLetterAcked(it->first);
      it = it->second ? dead_letters.erase(it) : std::next(it);
    }
  }
}

}  // namespace
}  // namespace delaybridge::plugin
