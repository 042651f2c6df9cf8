#include "tools/load/load_report.h"

#include <gtest/gtest.h>

namespace delaybridge::load {
namespace {

LoadReport CleanReport() {
  LoadReport report;
  report.mode = "bridge";
  report.bootstrap = "127.0.0.1:9092";
  report.delay_spec = "fixed:1s";
  report.header_style = "x-delay";
  report.consumed = true;
  report.attempted = report.produced = report.delivered = 3;
  report.broker_timestamp_type = "LogAppendTime";
  for (int64_t us : {1'000, 2'000, 3'000}) report.consume_lateness.Record(us);
  return report;
}

TEST(LoadReport, CleanRunExitsZero) { EXPECT_EQ(CleanReport().ExitCode(), 0); }

TEST(LoadReport, AnyLossDuplicateOrEarlyExitsOne) {
  for (auto damage :
       {+[](LoadReport& r) { r.lost = 1; }, +[](LoadReport& r) { r.duplicates = 1; },
        +[](LoadReport& r) { r.early = 1; }, +[](LoadReport& r) { r.produce_failed = 1; },
        +[](LoadReport& r) { r.group_waited = true; }}) {
    LoadReport report = CleanReport();
    damage(report);
    EXPECT_EQ(report.ExitCode(), 1);
  }
}

TEST(LoadReport, JsonCarriesCountsAndPercentilesInMilliseconds) {
  const std::string json = FormatJson(CleanReport());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  for (const char* field : {"\"produced\":3", "\"delivered\":3", "\"lost\":0", "\"duplicates\":0",
                            "\"early\":0", "\"p50\":2.0", "\"max\":3.000",
                            "\"broker_timestamp_type\":\"LogAppendTime\"", "\"exit_code\":0"}) {
    EXPECT_NE(json.find(field), std::string::npos) << field << " in " << json;
  }
}

TEST(LoadReport, ProduceOnlyRunsOmitDeliveryFields) {
  LoadReport report = CleanReport();
  report.consumed = false;
  EXPECT_EQ(FormatJson(report).find("\"delivered\""), std::string::npos);
  EXPECT_EQ(FormatText(report).find("delivered"), std::string::npos);
}

TEST(LoadReport, QuotesAreEscaped) {
  LoadReport report = CleanReport();
  report.bootstrap = "a\"b";
  EXPECT_NE(FormatJson(report).find("\"a\\\"b\""), std::string::npos);
}

}  // namespace
}  // namespace delaybridge::load
