// OpenStore: opens (recovering) a DelayLogStore for a test; a failure fails the test and returns
// null.
// Thread-safety: plain function.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "storage/delay_log_store.h"

namespace delaybridge::storage::testing {

inline std::unique_ptr<DelayLogStore> OpenStore(
    const std::string& dir, size_t max_open_hours = StoreOptions{}.max_open_hours,
    RecoveryReport* report = nullptr) {
  StoreOptions options;
  options.dir = dir;
  options.max_open_hours = max_open_hours;
  Result<std::unique_ptr<DelayLogStore>> store = DelayLogStore::Open(options, report);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

}  // namespace delaybridge::storage::testing
