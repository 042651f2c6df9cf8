#include "plugin/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace delaybridge::plugin {

namespace {

// Go's ParseFloat reads what std::to_chars writes (shortest round trip), and the format spells
// infinities and NaN its own way.
void AppendValue(std::string* out, double value) {
  if (std::isnan(value)) {
    *out += "NaN";
  } else if (std::isinf(value)) {
    *out += value > 0 ? "+Inf" : "-Inf";
  } else {
    char buffer[32];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out->append(buffer, ec == std::errc() ? end : buffer);
  }
}

// HELP text escapes backslash and newline; label values also the double quote.
void AppendEscaped(std::string* out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else if (quote && c == '"') {
      *out += "\\\"";
    } else {
      *out += c;
    }
  }
}

void AppendLabels(std::string* out, const PrometheusText::Labels& labels) {
  if (labels.empty()) return;
  *out += '{';
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) *out += ',';
    *out += labels[i].first;
    *out += "=\"";
    AppendEscaped(out, labels[i].second, true);
    *out += '"';
  }
  *out += '}';
}

}  // namespace

void PrometheusText::Family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  AppendEscaped(&text_, help, false);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void PrometheusText::Sample(std::string_view name, const Labels& labels, double value) {
  text_ += name;
  AppendLabels(&text_, labels);
  text_ += ' ';
  AppendValue(&text_, value);
  text_ += '\n';
}

void PrometheusText::Histogram(std::string_view name, const Labels& labels,
                               const std::vector<double>& bounds,
                               const std::vector<uint64_t>& at_most, double sum, uint64_t count) {
  const std::string bucket = std::string(name) + "_bucket";
  for (size_t i = 0; i < bounds.size() && i < at_most.size(); ++i) {
    Labels with_bound = labels;
    std::string bound;
    AppendValue(&bound, bounds[i]);
    with_bound.emplace_back("le", std::move(bound));
    Sample(bucket, with_bound, static_cast<double>(at_most[i]));
  }
  Labels infinite = labels;
  infinite.emplace_back("le", "+Inf");
  Sample(bucket, infinite, static_cast<double>(count));
  Sample(std::string(name) + "_sum", labels, sum);
  Sample(std::string(name) + "_count", labels, static_cast<double>(count));
}

}  // namespace delaybridge::plugin
