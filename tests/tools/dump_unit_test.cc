// Unit tests of delaylog-dump's parts: the JSON string escaper (checked by a strict JSON
// parser), the JSON checker itself, times, command-line parsing, byte previews, and payloads
// decoded by kind with the records their cancels name.
#include <gtest/gtest.h>

#include "tests/tools/dump_json_check.h"
#include "tools/dump/byte_preview.h"
#include "tools/dump/dump_options.h"
#include "tools/dump/dump_time.h"
#include "tools/dump/json_line.h"
#include "tools/dump/stored_payload.h"

namespace delaybridge::dump {
namespace {

// The string as decoded by the checker, after JsonString and wrapping in an object.
std::optional<std::string> RoundTrip(std::string_view bytes) {
  std::string line = JsonLine("t").Str("s", bytes).Finish();
  auto fields = JsonObjectFields(line);
  if (!fields) return std::nullopt;
  return (*fields)["s"];
}

TEST(JsonStringTest, EscapesQuotesBackslashesAndEveryControlCharacter) {
  EXPECT_EQ(JsonString("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonString("\n\r\t"), R"("\n\r\t")");
  EXPECT_EQ(JsonString(std::string("\0\x01\x1f\x7f", 4)), R"("\u0000\u0001\u001f\u007f")");
  for (int c = 0; c < 0x20; ++c) {
    std::string bytes(1, static_cast<char>(c));
    ASSERT_EQ(RoundTrip(bytes), bytes) << "control character " << c;
  }
}

TEST(JsonStringTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  std::string text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";  // é € 😀
  EXPECT_EQ(JsonString(text), "\"" + text + "\"");
  EXPECT_EQ(RoundTrip(text), text);
  const std::string kReplacement = "\xef\xbf\xbd";
  struct Case {
    std::string bytes;
    std::string decoded;
  } cases[] = {
      {"\xff", kReplacement},                                        // never valid
      {"a\x80z", "a" + kReplacement + "z"},                          // lone continuation byte
      {"\xc3", kReplacement},                                        // cut sequence at the end
      {"\xc3(", kReplacement + "("},                                 // cut sequence in the middle
      {"\xc0\xaf", kReplacement + kReplacement},                     // overlong '/'
      {"\xed\xa0\x80", kReplacement + kReplacement + kReplacement},  // surrogate U+D800
      {"\xf4\x90\x80\x80", kReplacement + kReplacement + kReplacement + kReplacement},  // >10FFFF
  };
  for (const Case& c : cases) {
    std::optional<std::string> decoded = RoundTrip(c.bytes);
    ASSERT_TRUE(decoded.has_value()) << JsonString(c.bytes);
    EXPECT_EQ(*decoded, c.decoded) << JsonString(c.bytes);
  }
}

TEST(JsonStringTest, EveryByteStringOfTwoBytesGivesValidJson) {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      std::string bytes = {static_cast<char>(a), static_cast<char>(b)};
      ASSERT_TRUE(RoundTrip(bytes).has_value()) << "bytes " << a << " " << b;
    }
  }
}

TEST(JsonLineTest, BuildsOneObjectWithTypedMembers) {
  std::string line = JsonLine("hour")
                         .Str("name", "x")
                         .Int("neg", -5)
                         .Uint("big", 18446744073709551615ull)
                         .Bool("yes", true)
                         .Null("nothing")
                         .Raw("list", "[1,{\"a\":null}]")
                         .Finish();
  EXPECT_EQ(line, R"({"type":"hour","name":"x","neg":-5,"big":18446744073709551615,"yes":true,)"
                  R"("nothing":null,"list":[1,{"a":null}]})");
  auto fields = JsonObjectFields(line);
  ASSERT_TRUE(fields.has_value());
  EXPECT_EQ((*fields)["type"], "hour");
  EXPECT_EQ((*fields)["neg"], "-5");
  EXPECT_EQ((*fields)["list"], "[1,{\"a\":null}]");
}

TEST(JsonCheckTest, RejectsInvalidJson) {
  for (const char* bad : {"", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\":01}", "{\"a\":1.}",
                          "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\\x\"}",
                          "{\"a\":\"\\ud800\"}", "{\"a\":tru}", "{} {}", "[1]", "{'a':1}"}) {
    EXPECT_FALSE(JsonObjectFields(bad).has_value()) << bad;
  }
  EXPECT_TRUE(JsonObjectFields(" {\"a\":[-0.5e+3,\"\\ud83d\\ude00\",{}]} ").has_value());
}

TEST(DumpTimeTest, FormatsIsoWithMilliseconds) {
  EXPECT_EQ(IsoMs(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(IsoMs(1795000000250), "2026-11-18T11:06:40.250Z");
  EXPECT_EQ(IsoMs(253402300799999), "9999-12-31T23:59:59.999Z");
}

TEST(DumpTimeTest, ParsesSecondsAsEpochOrIso) {
  EXPECT_EQ(ParseSecondArg("1795000000").value(), 1795000000);
  EXPECT_EQ(ParseSecondArg("2026-11-18T11:06:40Z").value(), 1795000000);
  EXPECT_EQ(ParseSecondArg("2026-11-18T11:06:40").value(), 1795000000);
  EXPECT_EQ(ParseSecondArg("2026-11-18T11:06:40.999Z").value(), 1795000000);
  for (const char* bad :
       {"", "-5", "17950000x0", "2026-11-18T09:06", "2026-11-18T09:60:00", "2026-02-30T09:06:40",
        "2026-11-18T11:06:40.1234", "2026-11-18 09:06:40", "99999999999999"}) {
    Result<int64_t> parsed = ParseSecondArg(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("--second"), std::string::npos);
  }
}

TEST(DumpTimeTest, ParsesHours) {
  EXPECT_EQ(ParseHourArg("2026-11-18T11").value(), 1795000000 / 3600);
  EXPECT_FALSE(ParseHourArg("2026-11-18T24").ok());
  EXPECT_FALSE(ParseHourArg("2026-11-18").ok());
}

TEST(DumpOptionsTest, ParsesEveryMode) {
  Result<DumpOptions> summary = ParseDumpOptions({"/s"});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->mode, DumpMode::kSummary);
  EXPECT_EQ(summary->path, "/s");

  Result<DumpOptions> find = ParseDumpOptions({"--json", "--find-source", "a/b/3/7", "/s"});
  ASSERT_TRUE(find.ok()) << find.status().ToString();
  EXPECT_EQ(find->mode, DumpMode::kFindSource);
  EXPECT_EQ(find->source_topic, "a/b");  // only the last two fields are split off
  EXPECT_EQ(find->source_partition, 3);
  EXPECT_EQ(find->source_offset, 7);
  EXPECT_TRUE(find->json);

  Result<DumpOptions> second =
      ParseDumpOptions({"/s", "--second", "1795000000", "--hex", "--full"});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->epoch_second, 1795000000);
  EXPECT_TRUE(second->hex && second->full);

  Result<DumpOptions> key = ParseDumpOptions({"--find-key", "-dash-key", "/s"});
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->key, "-dash-key");
  EXPECT_EQ(ParseDumpOptions({"--verify", "/s"})->mode, DumpMode::kVerify);
  EXPECT_EQ(ParseDumpOptions({"--help"})->mode, DumpMode::kHelp);
}

TEST(DumpOptionsTest, RejectsUsageErrorsWithAReason) {
  std::vector<std::vector<std::string>> bad = {
      {},
      {"--bogus", "/s"},
      {"/s", "/t"},
      {"/s", "--hour"},
      {"/s", "--hour", "2026-11-18"},
      {"/s", "--second", "yesterday"},
      {"/s", "--verify", "--hour", "2026-11-18T11"},
      {"/s", "--find-source", "topic/1"},
      {"/s", "--find-source", "/1/2"},
      {"/s", "--find-source", "t/-1/2"},
      {"/s", "--find-source", "t/1/x"},
  };
  for (const auto& args : bad) {
    Result<DumpOptions> parsed = ParseDumpOptions(args);
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    ASSERT_FALSE(parsed.ok()) << joined;
    EXPECT_EQ(parsed.status().code(), Status::Code::kInvalidArgument);
    EXPECT_FALSE(parsed.status().message().empty());
  }
}

TEST(BytePreviewTest, EscapesAndCuts) {
  EXPECT_EQ(PrintablePreview("order-17", 64), "order-17");
  EXPECT_EQ(PrintablePreview(std::string("a\0\x1b[2J\\\n\xc3", 9), 64),
            "a\\x00\\x1b[2J\\\\\\n\\xc3");
  EXPECT_EQ(PrintablePreview("abcdef", 4), "abcd...(+2 bytes)");
  EXPECT_EQ(PrintablePreview("{\"a\":1}", 0), R"({\"a\":1})");
  EXPECT_EQ(PrintablePreview("abcdef", 0), "abcdef");
  EXPECT_EQ(HexBytes("\x01\xab", 0), "01ab");
  EXPECT_EQ(HexBytes("abc", 2), "6162...(+1 bytes)");
}

plugin::StoredCancel CancelOf(int64_t target_offset) {
  return {.source_topic = "delayed",
          .source_partition = 3,
          .cancel_offset = target_offset + 10,
          .target_offset = target_offset,
          .cancel_timestamp_ms = 1795000000000};
}

plugin::DelayedRecord RecordOf(int64_t source_offset) {
  plugin::DelayedRecord record;
  record.target_topic = "orders";
  record.source_topic = "delayed";
  record.source_partition = 3;
  record.source_offset = source_offset;
  return record;
}

TEST(StoredPayloadTest, DecodesEachKindByItsFirstByte) {
  plugin::DelayedRecord record = RecordOf(7);
  Result<StoredPayload> as_record =
      DecodeStoredPayload(Status::Ok(), plugin::EncodeDelayedRecord(record));
  ASSERT_TRUE(as_record.ok()) << as_record.status().ToString();
  EXPECT_EQ(std::get<plugin::DelayedRecord>(*as_record), record);
  EXPECT_EQ(KindName(Status::Ok(), plugin::EncodeDelayedRecord(record)), "record");

  const std::string cancel = plugin::EncodeStoredCancel(CancelOf(7));
  Result<StoredPayload> as_cancel = DecodeStoredPayload(Status::Ok(), cancel);
  ASSERT_TRUE(as_cancel.ok()) << as_cancel.status().ToString();
  EXPECT_EQ(std::get<plugin::StoredCancel>(*as_cancel), CancelOf(7));
  EXPECT_EQ(KindName(Status::Ok(), cancel), "cancel");
}

TEST(StoredPayloadTest, ReportsWhatDoesNotDecode) {
  struct Case {
    Status read;
    std::string payload;
    std::string says;
    std::string kind;
  } cases[] = {
      {Status::Ok(), "short", "stored cancel:", "cancel"},
      {Status::Ok(), "", "delayed record:", "record"},
      {Status::Ok(), "rest", "unknown kind: first byte 7", "unknown"},
      {Status::Ok(), "", "empty payload", "unknown"},
      {Status::Corruption("x.log at offset 24: record fails its checksum"), "", "checksum",
       "unknown"},
  };
  for (const Case& c : cases) {
    Result<StoredPayload> decoded = DecodeStoredPayload(c.read, c.payload);
    ASSERT_FALSE(decoded.ok()) << c.says;
    EXPECT_EQ(decoded.status().code(), Status::Code::kCorruption);
    EXPECT_NE(decoded.status().message().find(c.says), std::string::npos)
        << decoded.status().ToString();
    EXPECT_EQ(KindName(c.read, c.payload), c.kind) << c.says;
  }
}

TEST(CancelTargetsTest, NamesItsTargetInItsOwnSecondOnly) {
  CancelTargets cancels;
  cancels.Add(1795000000, CancelOf(7));
  cancels.AddIfCancel(1795000002, plugin::EncodeStoredCancel(CancelOf(9)));
  cancels.AddIfCancel(1795000002, plugin::EncodeStoredCancel(CancelOf(8)));
  EXPECT_TRUE(cancels.Cancels(1795000000, 7));
  EXPECT_TRUE(cancels.Cancels(1795000002, 8));
  EXPECT_TRUE(cancels.Cancels(1795000002, 9));
  EXPECT_FALSE(cancels.Cancels(1795000001, 7));  // a copy of the target in another second
  EXPECT_FALSE(cancels.Cancels(1795000002, 7));
  EXPECT_FALSE(cancels.Cancels(1795000000, 17));  // the cancel's own offset
  cancels.Add(1795000000, CancelOf(7));           // read again after a crash: the same target
  EXPECT_TRUE(cancels.Cancels(1795000000, 7));
  EXPECT_TRUE(cancels.HasSecond(1795000000));
  EXPECT_FALSE(cancels.HasSecond(1795000001));
  EXPECT_TRUE(cancels.HasSecond(1795000002));
  EXPECT_FALSE(cancels.HasSecond(1795000003));
}

TEST(CancelTargetsTest, IgnoresRecordsAndCancelsThatDoNotDecode) {
  CancelTargets cancels;
  cancels.AddIfCancel(1795000000, plugin::EncodeDelayedRecord(RecordOf(7)));
  std::string cut = plugin::EncodeStoredCancel(CancelOf(7));
  cancels.AddIfCancel(1795000000, cut.substr(0, cut.size() - 1));
  EXPECT_FALSE(cancels.Cancels(1795000000, 7));
  EXPECT_TRUE(cancels.empty());
  EXPECT_FALSE(cancels.HasSecond(1795000000));
}

}  // namespace
}  // namespace delaybridge::dump
