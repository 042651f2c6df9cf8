// Finding a record by a key that grows with arrival order (DelayLogStore::FindInHour): in an
// hour being appended to (unsynced appends included), a parked one, a closed one after a
// reopen, and over a damaged entry on the search path.
#include "storage/arrival_search.h"

#include <gtest/gtest.h>

#include <random>

#include "storage/coding.h"
#include "storage/delay_log_store.h"
#include "storage/format.h"
#include "tests/storage/open_store.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

using delaybridge::testing::TempDir;
using testing::OpenStore;

constexpr int64_t kBaseMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z, an hour boundary
constexpr int64_t kHour = kBaseMs / kMsPerHour;

// A payload holding its key as a little-endian u64, as the bridge's hold a source offset.
std::string KeyPayload(uint64_t key) {
  std::string payload;
  PutFixed64(&payload, key);
  return payload;
}

ArrivalOrder ByKey(uint64_t sought) {
  return [sought](std::string_view payload) {
    const uint64_t key = DecodeFixed64(payload.data());
    return sought < key ? -1 : (sought > key ? 1 : 0);
  };
}

std::optional<FoundRecord> Find(DelayLogStore& store, int64_t hour, uint64_t key) {
  auto found = store.FindInHour(hour, ByKey(key));
  EXPECT_TRUE(found.ok()) << found.status().ToString();
  return found.ok() ? *found : std::nullopt;
}

// Keys 0, 3, 6, ... (every third), each placed at a random second of the hour.
void AppendEveryThirdKey(DelayLogStore& store, int64_t hour, int count, std::mt19937& random) {
  for (int i = 0; i < count; ++i) {
    const int64_t deliver_at_ms = hour * kMsPerHour + random() % kMsPerHour;
    ASSERT_TRUE(store.Append(deliver_at_ms, KeyPayload(3 * i)).ok());
  }
}

TEST(ArrivalSearchTest, FindsEveryKeyAndNoOtherInAnOpenHourBeforeAndAfterSync) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::mt19937 random(5);
  ASSERT_NO_FATAL_FAILURE(AppendEveryThirdKey(*store, kHour, 5000, random));
  for (int pass = 0; pass < 2; ++pass) {
    for (uint64_t key = 0; key < 15000; key += 7) {
      const std::optional<FoundRecord> found = Find(*store, kHour, key);
      ASSERT_EQ(found.has_value(), key % 3 == 0) << "key " << key;
      if (!found) continue;
      EXPECT_EQ(found->position, key / 3);
      EXPECT_EQ(DecodeFixed64(found->payload.data()), key);
      EXPECT_EQ(HourOfMs(found->deliver_at_ms), kHour);
    }
    ASSERT_TRUE(store->Sync().ok());  // the second pass reads synced files
  }
  EXPECT_FALSE(Find(*store, kHour + 1, 0).has_value());  // an hour that is not there
}

TEST(ArrivalSearchTest, FindsKeysInParkedAndClosedHours) {
  TempDir dir;
  std::mt19937 random(6);
  {
    // One open hour at a time: appending to the second hour parks the first, unsynced.
    auto store = OpenStore(dir.path(), /*max_open_hours=*/1);
    ASSERT_NO_FATAL_FAILURE(AppendEveryThirdKey(*store, kHour, 300, random));
    ASSERT_TRUE(store->Append((kHour + 1) * kMsPerHour, KeyPayload(900)).ok());
    EXPECT_EQ(Find(*store, kHour, 297)->position, 99u);
    EXPECT_EQ(Find(*store, kHour + 1, 900)->position, 0u);
    ASSERT_TRUE(store->Close().ok());
  }
  auto reopened = OpenStore(dir.path());
  EXPECT_EQ(Find(*reopened, kHour, 3)->position, 1u);
  EXPECT_FALSE(Find(*reopened, kHour, 4).has_value());
}

TEST(ArrivalSearchTest, ADamagedEntryOnTheSearchPathIsCorruption) {
  TempDir dir;
  std::mt19937 random(7);
  {
    auto store = OpenStore(dir.path());
    ASSERT_NO_FATAL_FAILURE(AppendEveryThirdKey(*store, kHour, 100, random));
    ASSERT_TRUE(store->Close().ok());
  }
  // The first probe is the last entry, the next one entry 49 (of 0..98): damage its checksum.
  const std::string index = dir.path() + "/2026-11-22T16.idx";
  auto file = PosixFile::Open(index, PosixFile::Mode::kReadWrite);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file->WriteAt(IndexEntryOffset(49) + 28, std::string(4, '\xff')).ok());
  auto store = OpenStore(dir.path());
  auto found = store->FindInHour(kHour, ByKey(3));
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), Status::Code::kCorruption);
  EXPECT_NE(found.status().message().find("entry 49"), std::string::npos)
      << found.status().ToString();
}

}  // namespace
}  // namespace delaybridge::storage
