// DelayDistribution: how far in the future delaybridge-load schedules each record.
//
// Specs, as given to --delay:
//   fixed:D          every record waits D                       (fixed:2s)
//   uniform:A..B     uniform integer milliseconds in [A, B]     (uniform:0..2s, uniform:1h..30d)
//   mix              seconds-to-days: 50% 1s..60s, 25% 1m..1h, 15% 1h..1d, 10% 1d..30d
// Durations use DurationSpec units (ms, s, m, h, d).
//
// Thread-safety: immutable after Parse; NextMs takes the caller's random engine, so one
// distribution may be shared by threads that each own an engine.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace delaybridge::load {

class DelayDistribution {
 public:
  static Result<DelayDistribution> Parse(std::string_view spec);
  // The distribution of spec "fixed:<delay_ms>".
  static DelayDistribution Fixed(int64_t delay_ms);

  // Draws one delay in milliseconds.
  int64_t NextMs(std::mt19937_64& engine) const;

  int64_t min_ms() const;
  int64_t max_ms() const;
  // Every delay drawn is 0 ms (fixed:0, fixed:0s, uniform:0..0, ...).
  bool always_zero() const { return max_ms() == 0; }
  const std::string& spec() const { return spec_; }

 private:
  // One uniform range [lo_ms, hi_ms] chosen with probability weight / total weight.
  struct Band {
    int64_t lo_ms;
    int64_t hi_ms;
    double weight;
  };

  DelayDistribution(std::string spec, std::vector<Band> bands);

  std::string spec_;
  std::vector<Band> bands_;
  std::vector<double> cumulative_weights_;  // running sums of Band::weight, for the draw
};

}  // namespace delaybridge::load
