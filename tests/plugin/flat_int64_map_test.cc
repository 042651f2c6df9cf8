// FlatInt64Map against std::unordered_map under random inserts, lookups and erasures: keys
// from a narrow range (long probe runs, erasures shifting entries back across the array's end)
// and from the whole int64_t range; growth to a hundred thousand keys and the shrink after.
#include "plugin/flat_int64_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <unordered_map>

namespace delaybridge::plugin {
namespace {

TEST(FlatInt64MapTest, InsertsFindsAndErases) {
  FlatInt64Map<std::string> map;
  EXPECT_EQ(map.Find(7), nullptr);
  EXPECT_FALSE(map.Erase(7));
  auto [value, inserted] = map.TryEmplace(7);
  ASSERT_TRUE(inserted);
  EXPECT_EQ(*value, "");
  *value = "seven";
  EXPECT_FALSE(map.TryEmplace(7).second);
  EXPECT_EQ(*map.TryEmplace(7).first, "seven");
  ASSERT_TRUE(map.TryEmplace(0).second);  // the key an empty slot holds
  ASSERT_TRUE(map.TryEmplace(std::numeric_limits<int64_t>::min()).second);
  EXPECT_EQ(map.size(), 3u);
  EXPECT_TRUE(map.contains(0));
  EXPECT_TRUE(map.Erase(0));
  EXPECT_FALSE(map.contains(0));
  EXPECT_FALSE(map.Erase(0));
  EXPECT_EQ(*map.Find(7), "seven");
  EXPECT_TRUE(map.contains(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(map.size(), 2u);
}

TEST(FlatInt64MapTest, AgreesWithUnorderedMapUnderRandomOperations) {
  for (const uint32_t seed : {1u, 2u, 3u})
    for (const uint64_t key_range : {uint64_t{64}, uint64_t{5000}, uint64_t{0}}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", key range " + std::to_string(key_range));
      std::mt19937_64 rng(seed);
      FlatInt64Map<int64_t> map;
      std::unordered_map<int64_t, int64_t> model;
      const auto random_key = [&] {
        return static_cast<int64_t>(key_range == 0 ? rng() : rng() % key_range);
      };
      for (int step = 0; step < 200'000; ++step) {
        const int64_t key = random_key();
        switch (rng() % 3) {
          case 0: {
            auto [value, inserted] = map.TryEmplace(key);
            auto [it, model_inserted] = model.try_emplace(key, 0);
            ASSERT_EQ(inserted, model_inserted);
            ASSERT_EQ(*value, it->second);
            *value = it->second = step;
            break;
          }
          case 1:
            ASSERT_EQ(map.Erase(key), model.erase(key) == 1);
            break;
          default: {
            const int64_t* value = map.Find(key);
            const auto it = model.find(key);
            ASSERT_EQ(value != nullptr, it != model.end());
            if (value != nullptr) {
              ASSERT_EQ(*value, it->second);
            }
          }
        }
        ASSERT_EQ(map.size(), model.size());
      }
      size_t visited = 0;
      map.ForEach([&](int64_t key, const int64_t& value) {
        ++visited;
        ASSERT_TRUE(model.contains(key));
        ASSERT_EQ(value, model.at(key));
      });
      EXPECT_EQ(visited, model.size());
    }
}

TEST(FlatInt64MapTest, ShrinksAfterAPeak) {
  FlatInt64Map<int64_t> map;
  for (int64_t key = 0; key < 100'000; ++key) *map.TryEmplace(key).first = key;
  const size_t peak = map.capacity();
  EXPECT_GE(peak, 200'000u);
  for (int64_t key = 0; key < 99'990; ++key) ASSERT_TRUE(map.Erase(key));
  EXPECT_LE(map.capacity(), 128u);
  for (int64_t key = 99'990; key < 100'000; ++key) ASSERT_EQ(*map.Find(key), key);
}

}  // namespace
}  // namespace delaybridge::plugin
