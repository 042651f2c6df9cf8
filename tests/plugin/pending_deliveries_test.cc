// PendingDeliveries: tokens of removed entries go stale even when the slot is reused, so a late
// delivery report can never touch the wrong record.
#include "plugin/pending_deliveries.h"

#include <gtest/gtest.h>

namespace delaybridge::plugin {
namespace {

PendingDelivery Delivery(int64_t deliver_at_ms) {
  DelayedRecord r;
  r.requested_deliver_at_ms = deliver_at_ms;
  return PendingDelivery{TopicPartitionId{"delayed", 0},
                         RecordPosition{deliver_at_ms, 0},
                         EncodedRecord::Encode(r),
                         DeliveryForm::kRecord,
                         0,
                         false,
                         {}};
}

TEST(PendingDeliveriesTest, AddFindRemove) {
  PendingDeliveries p;
  const uint64_t a = p.Add(Delivery(1));
  const uint64_t b = p.Add(Delivery(2));
  EXPECT_EQ(p.size(), 2u);
  ASSERT_NE(p.Find(a), nullptr);
  EXPECT_EQ(p.Find(b)->position->deliver_at_ms, 2);
  p.Remove(a);
  EXPECT_EQ(p.Find(a), nullptr);
  EXPECT_EQ(p.size(), 1u);
  p.Remove(a);  // twice is harmless
  EXPECT_EQ(p.size(), 1u);
}

TEST(PendingDeliveriesTest, ReusedSlotGetsANewToken) {
  PendingDeliveries p;
  const uint64_t old_token = p.Add(Delivery(1));
  p.Remove(old_token);
  const uint64_t new_token = p.Add(Delivery(9));
  EXPECT_NE(new_token, old_token);
  EXPECT_EQ(p.Find(old_token), nullptr);
  ASSERT_NE(p.Find(new_token), nullptr);
  EXPECT_EQ(p.Find(new_token)->position->deliver_at_ms, 9);
  EXPECT_EQ(p.Find(uint64_t{12345} << 32 | 77), nullptr);  // never issued
  int seen = 0;
  p.ForEach([&](uint64_t token, PendingDelivery&) {
    EXPECT_EQ(token, new_token);
    ++seen;
  });
  EXPECT_EQ(seen, 1);
}

}  // namespace
}  // namespace delaybridge::plugin
