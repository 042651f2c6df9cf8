// SourceOffsetIndex against std::unordered_multimap under random adds and removes (with
// repeated offsets, and offsets that share home slots), and its growth and shrinking.
#include "plugin/source_offset_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <vector>

namespace delaybridge::plugin {
namespace {

std::vector<uint64_t> Sorted(std::vector<uint64_t> tokens) {
  std::sort(tokens.begin(), tokens.end());
  return tokens;
}

std::vector<uint64_t> ModelFind(const std::unordered_multimap<int64_t, uint64_t>& model,
                                int64_t offset) {
  std::vector<uint64_t> tokens;
  auto [first, last] = model.equal_range(offset);
  for (auto it = first; it != last; ++it) tokens.push_back(it->second);
  return Sorted(tokens);
}

TEST(SourceOffsetIndexTest, FindsEveryTokenOfAnOffsetAndNothingRemoved) {
  SourceOffsetIndex index;
  EXPECT_TRUE(index.Find(7).empty());
  EXPECT_FALSE(index.Remove(7, 1));
  index.Add(7, 1);
  index.Add(7, 2);  // the same record stored twice
  index.Add(8, 3);
  EXPECT_EQ(Sorted(index.Find(7)), (std::vector<uint64_t>{1, 2}));
  EXPECT_FALSE(index.Remove(7, 3));
  EXPECT_TRUE(index.Remove(7, 1));
  EXPECT_EQ(index.Find(7), (std::vector<uint64_t>{2}));
  EXPECT_EQ(index.Find(8), (std::vector<uint64_t>{3}));
  EXPECT_EQ(index.size(), 2u);
}

TEST(SourceOffsetIndexTest, AgreesWithAMultimapUnderRandomAddsAndRemoves) {
  for (const uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    SourceOffsetIndex index;
    std::unordered_multimap<int64_t, uint64_t> model;
    std::vector<std::pair<int64_t, uint64_t>> live;
    uint64_t next_token = 0;
    for (int step = 0; step < 200'000; ++step) {
      // Phases of growth and of draining, so the table grows and shrinks many times.
      const bool grow = (step / 20'000) % 2 == 0;
      if (live.empty() || rng() % 100 < (grow ? 70u : 30u)) {
        // Offsets from a narrow range repeat; multiples of 64 share home slots in a small table.
        const int64_t offset = rng() % 2 == 0 ? static_cast<int64_t>(rng() % 5'000)
                                              : static_cast<int64_t>(rng() % 100) * 64;
        index.Add(offset, next_token);
        model.emplace(offset, next_token);
        live.emplace_back(offset, next_token);
        ++next_token;
      } else {
        const size_t at = rng() % live.size();
        const auto [offset, token] = live[at];
        live[at] = live.back();
        live.pop_back();
        ASSERT_TRUE(index.Remove(offset, token));
        auto [first, last] = model.equal_range(offset);
        model.erase(std::find_if(first, last, [&](const auto& e) { return e.second == token; }));
      }
      if (step % 997 == 0) {
        for (int64_t offset = 0; offset < 6'400; offset += 13) {
          ASSERT_EQ(Sorted(index.Find(offset)), ModelFind(model, offset)) << "offset " << offset;
        }
      }
      ASSERT_EQ(index.size(), model.size());
    }
    for (const auto& [offset, token] : live) ASSERT_TRUE(index.Remove(offset, token));
    EXPECT_TRUE(index.empty());
  }
}

TEST(SourceOffsetIndexTest, GrowsPastThreeQuartersAndShrinksWhenDrained) {
  SourceOffsetIndex index;
  for (int64_t i = 0; i < 100'000; ++i) index.Add(i, static_cast<uint64_t>(i));
  EXPECT_GE(index.capacity() * 3, 100'000u * 4);
  EXPECT_LE(index.capacity(), 262'144u);
  for (int64_t i = 0; i < 99'990; ++i) ASSERT_TRUE(index.Remove(i, static_cast<uint64_t>(i)));
  EXPECT_LE(index.capacity(), 128u);
  for (int64_t i = 99'990; i < 100'000; ++i) {
    EXPECT_EQ(index.Find(i), (std::vector<uint64_t>{static_cast<uint64_t>(i)}));
  }
}

}  // namespace
}  // namespace delaybridge::plugin
