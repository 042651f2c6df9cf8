// DelayLogStore on a real filesystem that fills up: an append the disk cannot take fails and
// adds nothing, a group commit that cannot write its buffers fails and leaves the store usable,
// and once there is room again the same records go in, exactly once, and survive a reopen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/delay_log_store.h"
#include "tests/storage/open_store.h"
#include "tests/support/small_filesystem.h"

namespace delaybridge::storage {
namespace {

constexpr int64_t kHourStartMs = 1'800'000'000'000;

std::string Payload(int i) { return "record-" + std::to_string(i) + std::string(1000, 'p'); }

std::vector<std::string> ReadAll(DelayLogStore& store, int seconds) {
  std::vector<std::string> payloads;
  for (int s = 0; s < seconds; ++s) {
    std::vector<StoredRecord> records;
    EXPECT_TRUE(store.ReadSecond(kHourStartMs / 1000 + s, &records).ok());
    for (const StoredRecord& r : records) payloads.push_back(r.payload);
  }
  return payloads;
}

TEST(FullDiskTest, AppendsFailCleanlyAndGoOnOnceThereIsRoom) {
  delaybridge::testing::SmallFilesystem disk("full_disk_test", 4 * 1024 * 1024);
  if (!disk.mounted()) GTEST_SKIP() << disk.error();
  const std::string dir = disk.path() + "/store";
  auto store = testing::OpenStore(dir);
  ASSERT_NE(store, nullptr);
  int appended = 0;
  for (; appended < 100; ++appended) {
    ASSERT_TRUE(store->Append(kHourStartMs + appended * 10, Payload(appended)).ok());
  }
  ASSERT_TRUE(store->Sync().ok());
  ASSERT_TRUE(disk.Fill());

  // Appends go into the write buffer until it must be written; then the disk refuses.
  Status refused;
  for (int attempts = 0; attempts < 10'000 && refused.ok(); ++attempts) {
    auto result = store->Append(kHourStartMs + appended * 10, Payload(appended));
    if (result.ok()) {
      ++appended;
    } else {
      refused = result.status();
    }
  }
  ASSERT_FALSE(refused.ok()) << "the full disk never refused an append";
  EXPECT_NE(refused.message().find("No space left on device"), std::string::npos)
      << refused.ToString();
  const uint64_t sequence = store->last_sequence();
  EXPECT_FALSE(store->Append(kHourStartMs + appended * 10, Payload(appended)).ok());
  EXPECT_EQ(store->last_sequence(), sequence);  // nothing half added
  EXPECT_FALSE(store->Sync().ok());             // its buffers cannot be written either

  disk.Free();
  ASSERT_TRUE(store->Append(kHourStartMs + appended * 10, Payload(appended)).ok());
  ++appended;
  ASSERT_TRUE(store->Sync().ok()) << "the store stayed usable";
  EXPECT_EQ(store->durable_sequence(), store->last_sequence());
  ASSERT_TRUE(store->Close().ok());

  auto reopened = testing::OpenStore(dir);
  ASSERT_NE(reopened, nullptr);
  const std::vector<std::string> payloads = ReadAll(*reopened, appended / 100 + 1);
  ASSERT_EQ(payloads.size(), static_cast<size_t>(appended));
  for (int i = 0; i < appended; ++i) EXPECT_EQ(payloads[i], Payload(i)) << i;
}

}  // namespace
}  // namespace delaybridge::storage
