// PrometheusText: writes metrics in the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): for each metric family a
// `# HELP` and a `# TYPE` line, then its samples, one a line, label values escaped.
//
// Thread-safety: none; build on one thread, then Take() the text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace delaybridge::plugin {

class PrometheusText {
 public:
  using Labels = std::vector<std::pair<std::string_view, std::string>>;

  // Starts a family: type is "counter", "gauge" or "histogram". Its samples follow.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  void Sample(std::string_view name, double value) { Sample(name, {}, value); }

  // One histogram series of the current family: bucket i counts the observations at most
  // bounds[i] (cumulative, non-decreasing), then the +Inf bucket (count), _sum and _count.
  void Histogram(std::string_view name, const Labels& labels, const std::vector<double>& bounds,
                 const std::vector<uint64_t>& at_most, double sum, uint64_t count);

  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
};

}  // namespace delaybridge::plugin
