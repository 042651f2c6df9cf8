// SourceOffsetMarker: the value survives a reopen, and a damaged file is ignored rather than
// trusted.
#include "plugin/source_offset_marker.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

TEST(SourceOffsetMarkerTest, FreshDirectoryHasNoValue) {
  testing::TempDir dir("marker_test");
  auto marker = SourceOffsetMarker::Open(dir.path());
  ASSERT_TRUE(marker.ok()) << marker.status().ToString();
  EXPECT_EQ(marker->recovered(), std::nullopt);
}

TEST(SourceOffsetMarkerTest, LastWriteIsRecovered) {
  testing::TempDir dir("marker_test");
  {
    auto marker = SourceOffsetMarker::Open(dir.path());
    ASSERT_TRUE(marker.ok());
    ASSERT_TRUE(marker->Write(17).ok());
    ASSERT_TRUE(marker->Write(123'456'789'000).ok());
  }
  auto marker = SourceOffsetMarker::Open(dir.path());
  ASSERT_TRUE(marker.ok());
  EXPECT_EQ(marker->recovered(), 123'456'789'000);
}

TEST(SourceOffsetMarkerTest, DamagedFileIsIgnored) {
  testing::TempDir dir("marker_test");
  {
    auto marker = SourceOffsetMarker::Open(dir.path());
    ASSERT_TRUE(marker.ok());
    ASSERT_TRUE(marker->Write(99).ok());
  }
  {
    std::fstream f(dir.File(kSourceOffsetMarkerFileName),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(9);
    f.put('\x01');  // the check half no longer matches
  }
  auto marker = SourceOffsetMarker::Open(dir.path());
  ASSERT_TRUE(marker.ok());
  EXPECT_EQ(marker->recovered(), std::nullopt);
}

}  // namespace
}  // namespace delaybridge::plugin
