#include "tools/load/delay_distribution.h"

#include <algorithm>
#include <utility>

#include "tools/load/duration_spec.h"

namespace delaybridge::load {

namespace {

constexpr int64_t kSecondMs = 1000;
constexpr int64_t kMinuteMs = 60 * kSecondMs;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;

Result<std::pair<int64_t, int64_t>> ParseRange(std::string_view text) {
  const size_t dots = text.find("..");
  if (dots == std::string_view::npos) {
    return Status::InvalidArgument("expected A..B, got '" + std::string(text) + "'");
  }
  Result<int64_t> lo = ParseDurationMs(text.substr(0, dots));
  if (!lo.ok()) return lo.status();
  Result<int64_t> hi = ParseDurationMs(text.substr(dots + 2));
  if (!hi.ok()) return hi.status();
  if (*hi < *lo) {
    return Status::InvalidArgument("range '" + std::string(text) + "' ends before it starts");
  }
  return std::make_pair(*lo, *hi);
}

}  // namespace

DelayDistribution::DelayDistribution(std::string spec, std::vector<Band> bands)
    : spec_(std::move(spec)), bands_(std::move(bands)) {
  double total_weight = 0;
  for (const Band& band : bands_) {
    total_weight += band.weight;
    cumulative_weights_.push_back(total_weight);
  }
}

DelayDistribution DelayDistribution::Fixed(int64_t delay_ms) {
  return DelayDistribution("fixed:" + std::to_string(delay_ms), {{delay_ms, delay_ms, 1}});
}

Result<DelayDistribution> DelayDistribution::Parse(std::string_view spec) {
  const std::string context = "--delay '" + std::string(spec) + "'";
  if (spec == "mix") {
    return DelayDistribution(std::string(spec), {{1 * kSecondMs, 60 * kSecondMs, 50},
                                                 {1 * kMinuteMs, 60 * kMinuteMs, 25},
                                                 {1 * kHourMs, 24 * kHourMs, 15},
                                                 {1 * kDayMs, 30 * kDayMs, 10}});
  }
  if (spec.starts_with("fixed:")) {
    Result<int64_t> delay_ms = ParseDurationMs(spec.substr(6));
    if (!delay_ms.ok()) return delay_ms.status().WithContext(context);
    return DelayDistribution(std::string(spec), {{*delay_ms, *delay_ms, 1}});
  }
  if (spec.starts_with("uniform:")) {
    Result<std::pair<int64_t, int64_t>> range = ParseRange(spec.substr(8));
    if (!range.ok()) return range.status().WithContext(context);
    return DelayDistribution(std::string(spec), {{range->first, range->second, 1}});
  }
  return Status::InvalidArgument(context + ": expected fixed:D, uniform:A..B or mix");
}

int64_t DelayDistribution::NextMs(std::mt19937_64& engine) const {
  size_t band_index = 0;
  if (bands_.size() > 1) {
    const double draw =
        std::uniform_real_distribution<double>(0, cumulative_weights_.back())(engine);
    band_index = std::upper_bound(cumulative_weights_.begin(), cumulative_weights_.end(), draw) -
                 cumulative_weights_.begin();
    band_index = std::min(band_index, bands_.size() - 1);
  }
  const Band& band = bands_[band_index];
  if (band.lo_ms == band.hi_ms) return band.lo_ms;
  return std::uniform_int_distribution<int64_t>(band.lo_ms, band.hi_ms)(engine);
}

int64_t DelayDistribution::min_ms() const {
  int64_t lo_ms = bands_.front().lo_ms;
  for (const Band& band : bands_) lo_ms = std::min(lo_ms, band.lo_ms);
  return lo_ms;
}

int64_t DelayDistribution::max_ms() const {
  int64_t hi_ms = bands_.front().hi_ms;
  for (const Band& band : bands_) hi_ms = std::max(hi_ms, band.hi_ms);
  return hi_ms;
}

}  // namespace delaybridge::load
