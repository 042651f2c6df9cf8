// OutstandingPositions against std::set under random adds and removes: positions spread over a
// few milliseconds (many per millisecond), ordinals mostly rising as a store appends them, some
// out of order, some added again, removed in random order and in order; and a million
// positions in one millisecond removed oldest first (the drain of records due together).
#include "plugin/outstanding_positions.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "plugin/delivery_tracker.h"

namespace delaybridge::plugin {
namespace {

TEST(OutstandingPositionsTest, KeepsASetAndItsSmallestElement) {
  OutstandingPositions set;
  EXPECT_EQ(set.smallest(), std::nullopt);
  EXPECT_TRUE(set.Add({2000, 5}));
  EXPECT_TRUE(set.Add({1000, 9}));
  EXPECT_TRUE(set.Add({1000, 3}));  // out of order within its millisecond
  EXPECT_FALSE(set.Add({1000, 9}));
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(set.smallest(), (RecordPosition{1000, 3}));
  EXPECT_FALSE(set.Remove({1000, 4}));
  EXPECT_TRUE(set.Remove({1000, 3}));
  EXPECT_FALSE(set.Remove({1000, 3}));
  EXPECT_EQ(set.smallest(), (RecordPosition{1000, 9}));
  EXPECT_TRUE(set.Add({1000, 3}));  // again, after its removal
  EXPECT_EQ(set.smallest(), (RecordPosition{1000, 3}));
  EXPECT_TRUE(set.Remove({1000, 3}));
  EXPECT_TRUE(set.Remove({1000, 9}));
  EXPECT_EQ(set.smallest(), (RecordPosition{2000, 5}));
  EXPECT_TRUE(set.Remove({2000, 5}));
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.smallest(), std::nullopt);
}

TEST(OutstandingPositionsTest, AgreesWithStdSetUnderRandomAddsAndRemoves) {
  // Few milliseconds: many positions each. Many: most emptied and created again, often below
  // the smallest or above it.
  for (const uint32_t seed : {1u, 2u, 3u, 4u})
    for (const int64_t milliseconds : {8, 3000}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(milliseconds) + " ms");
      std::mt19937 rng(seed);
      OutstandingPositions set;
      std::set<RecordPosition> model;
      uint32_t next_ordinal = 0;
      for (int step = 0; step < 100'000; ++step) {
        const uint32_t op = rng() % 100;
        RecordPosition p{static_cast<int64_t>(rng() % milliseconds), 0};
        if (op < 45) {
          p.ordinal = next_ordinal++;  // appended: rising
        } else if (op < 55) {
          p.ordinal = static_cast<uint32_t>(rng() % (next_ordinal + 1));  // out of order, or again
        } else if (op < 70 && !model.empty()) {
          p = *model.begin();  // delivered in order
        } else if (!model.empty()) {
          const auto ordinal = static_cast<uint32_t>(rng() % (next_ordinal + 1));
          auto it = model.lower_bound(RecordPosition{p.deliver_at_ms, ordinal});
          if (it == model.end()) it = model.begin();
          p = *it;  // acknowledged out of order
        }
        if (op < 55) {
          ASSERT_EQ(set.Add(p), model.insert(p).second) << ToString(p);
        } else {
          ASSERT_EQ(set.Remove(p), model.erase(p) == 1) << ToString(p);
          // A position never added (or gone) is refused.
          const RecordPosition absent{p.deliver_at_ms, next_ordinal + 7};
          ASSERT_FALSE(set.Remove(absent));
        }
        ASSERT_EQ(set.size(), model.size());
        ASSERT_EQ(set.smallest(),
                  model.empty() ? std::nullopt : std::optional<RecordPosition>(*model.begin()));
      }
    }
}

// One record stays outstanding (a target being retried) while records of a hundred thousand
// later milliseconds come and go: each emptied millisecond leaves the order, which rebuilds.
TEST(OutstandingPositionsTest, MillisecondsEmptiedAboveAStuckRecordLeaveTheOrder) {
  OutstandingPositions set;
  ASSERT_TRUE(set.Add({1000, 7}));
  for (int64_t ms = 2000; ms < 102'000; ++ms) {
    ASSERT_TRUE(set.Add({ms, 0}));
    ASSERT_TRUE(set.Add({ms, 1}));
    ASSERT_EQ(set.smallest(), (RecordPosition{1000, 7}));
    ASSERT_TRUE(set.Remove({ms, 1}));
    ASSERT_TRUE(set.Remove({ms, 0}));
  }
  EXPECT_EQ(set.size(), 1u);
  EXPECT_LE(set.order_entries(), 2 * 1 + 64 + 1u);
  ASSERT_TRUE(set.Remove({1000, 7}));
  EXPECT_EQ(set.smallest(), std::nullopt);
  EXPECT_EQ(set.order_entries(), 0u);
}

TEST(OutstandingPositionsTest, AMillionInOneMillisecondRemovedOldestFirst) {
  OutstandingPositions set;
  constexpr uint32_t kCount = 1'000'000;
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_TRUE(set.Add({5000, i}));
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(set.smallest(), (RecordPosition{5000, i}));
    ASSERT_TRUE(set.Remove({5000, i}));
  }
  EXPECT_TRUE(set.empty());
}

}  // namespace
}  // namespace delaybridge::plugin
