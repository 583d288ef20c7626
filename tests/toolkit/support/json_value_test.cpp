// The JSON reader (toolkit/support/json_value.hpp): values and round trips, exact integers,
// escapes, every kind of error with its position, the nesting limit, and readJsonFile's
// messages.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "support/error.hpp"
#include "support/json_value.hpp"

namespace {

using strata::support::JsonError;
using strata::support::JsonValue;
using strata::support::parseJson;

JsonValue parsed(std::string_view text) {
  JsonError e;
  std::optional<JsonValue> v = parseJson(text, &e);
  EXPECT_TRUE(v.has_value()) << text << ": " << e.message;
  return v ? *v : JsonValue();
}

JsonError failure(std::string_view text) {
  JsonError e;
  EXPECT_FALSE(parseJson(text, &e).has_value()) << text;
  return e;
}

TEST(JsonValue, ReadsEveryType) {
  const JsonValue v = parsed(R"( {"n": null, "t": true, "f": false, "x": -1.5e2,
                                  "s": "hi", "a": [1, [2]], "o": {"k": "v"}} )");
  ASSERT_TRUE(v.isObject());
  EXPECT_TRUE(v["n"].isNull());
  EXPECT_TRUE(v["t"].boolean());
  EXPECT_FALSE(v["f"].boolean(true));
  EXPECT_DOUBLE_EQ(v["x"].number(), -150.0);
  EXPECT_EQ(v["x"].numberText(), "-1.5e2");
  EXPECT_EQ(v["s"].string(), "hi");
  ASSERT_EQ(v["a"].items().size(), 2u);
  EXPECT_EQ(v["a"].items()[1].items()[0].unsignedNumber(), 2u);
  EXPECT_EQ(v["o"]["k"].string(), "v");
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_TRUE(v["missing"].isNull());
  EXPECT_EQ(v["s"].number(7), 7);  // another type gives the fallback
}

TEST(JsonValue, ObjectsKeepKeyOrderAndRoundTrip) {
  const std::string text = R"({"z":1,"a":[true,false,null],"m":{"y":"\"q\"\\","b":0.25},"e":[],"o":{}})";
  const JsonValue v = parsed(text);
  ASSERT_EQ(v.members().size(), 5u);
  EXPECT_EQ(v.members()[0].first, "z");
  EXPECT_EQ(v.members()[1].first, "a");
  EXPECT_EQ(v.members()[2].first, "m");
  EXPECT_EQ(v.dump(), text);
  EXPECT_EQ(parsed(v.dump()).dump(), text);
}

TEST(JsonValue, BigIntegersStayExact) {
  // 2^63 + 5 does not fit a double or an int64 exactly; its text and uint64 value must.
  const JsonValue v = parsed(R"({"bytes": 9223372036854775813, "neg": -9223372036854775807})");
  EXPECT_EQ(v["bytes"].numberText(), "9223372036854775813");
  EXPECT_EQ(v["bytes"].unsignedNumber(), 9223372036854775813ull);
  EXPECT_EQ(v["neg"].signedNumber(), -9223372036854775807ll);
  EXPECT_EQ(v.dump(), R"({"bytes":9223372036854775813,"neg":-9223372036854775807})");
  EXPECT_EQ(parsed("18446744073709551615").unsignedNumber(), 18446744073709551615ull);
}

TEST(JsonValue, DecodesEscapes) {
  const JsonValue v = parsed(R"("a\"b\\c\/d\b\f\n\r\t \u00e9 \u20ac \ud83d\ude00 \u0001")");
  EXPECT_EQ(v.string(), "a\"b\\c/d\b\f\n\r\t \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x01");
  // Written back with json.hpp's escapes, it reads back the same.
  EXPECT_EQ(parsed(v.dump()).string(), v.string());
  // Raw UTF-8 passes through.
  EXPECT_EQ(parsed("\"\xc3\xa9\"").string(), "\xc3\xa9");
}

TEST(JsonValue, BuildersAndCopiesAreIndependent) {
  JsonValue o = JsonValue::makeObject();
  o.set("a", JsonValue::makeNumber(1));
  o.set("b", JsonValue::makeString("x"));
  o.set("a", JsonValue::makeNumber(2.5));
  JsonValue copy = o;
  copy.set("c", JsonValue::makeBool(true));
  EXPECT_EQ(o.dump(), R"({"a":2.5,"b":"x"})");
  EXPECT_EQ(copy.dump(), R"({"a":2.5,"b":"x","c":true})");
  JsonValue a = JsonValue::makeArray();
  a.push(JsonValue::makeNumberText("12345678901234567890"));
  a.push(JsonValue::makeNull());
  EXPECT_EQ(a.dump(), "[12345678901234567890,null]");
  EXPECT_EQ(JsonValue::makeNumber(1e300 * 1e300).dump(), "null");
}

TEST(JsonValue, SyntaxErrorsSayWhere) {
  const JsonError e = failure("{\n  \"a\": 1,\n  \"b\" 2\n}");
  EXPECT_FALSE(e.truncated);
  EXPECT_EQ(e.line, 3u);
  EXPECT_EQ(e.column, 7u);
  EXPECT_EQ(e.offset, 18u);
  EXPECT_NE(e.message.find("':'"), std::string::npos) << e.message;
}

TEST(JsonValue, EveryKindOfBadTextIsRefused) {
  for (const char* bad : {"", "   ", "nul", "tru", "{\"a\":1", "[1,2", "\"abc", "{\"a\"",
                          "[1,", "-", "1.", "1e", "\"\\u12", "\"\\ud83d"}) {
    const JsonError e = failure(bad);
    EXPECT_TRUE(e.truncated) << "'" << bad << "': " << e.message;
  }
  for (const char* bad : {"nulx", "[1 2]", "{1:2}", "{\"a\":1,}", "[1,]", "01", "+1", ".5",
                          "\"a\\x\"", "\"\\u12g4\"", "\"\\ude00\"", "\"\\ud83d\\u0041\"",
                          "\"tab\there\"", "'a'", "[1]]", "{} {}", "1 x"}) {
    const JsonError e = failure(bad);
    EXPECT_FALSE(e.truncated) << "'" << bad << "': " << e.message;
    EXPECT_FALSE(e.message.empty());
  }
}

TEST(JsonValue, TrailingGarbageIsAnErrorAtItsOffset) {
  const JsonError e = failure("{\"a\": [1]}  xyz");
  EXPECT_EQ(e.offset, 12u);
  EXPECT_EQ(e.column, 13u);
  EXPECT_FALSE(e.truncated);
  EXPECT_NE(e.message.find("after the JSON value"), std::string::npos) << e.message;
}

TEST(JsonValue, NestingIsLimitedTo256Levels) {
  const std::string ok = std::string(256, '[') + std::string(256, ']');
  EXPECT_TRUE(parseJson(ok).has_value());
  const std::string deep = std::string(257, '[') + std::string(257, ']');
  const JsonError e = failure(deep);
  EXPECT_NE(e.message.find("256"), std::string::npos) << e.message;
  EXPECT_EQ(e.offset, 256u);
  // Far deeper is the same error, not a stack overflow.
  std::string huge;
  for (int i = 0; i < 200000; ++i) huge += "{\"a\":";
  EXPECT_NE(failure(huge).message.find("256"), std::string::npos);
}

// readJsonFile: the messages name the file and what is wrong.
class JsonFile : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("strata-json-test-" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string messageOf(const std::string& path) {
    try {
      strata::support::readJsonFile(path);
    } catch (const strata::support::Error& e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST_F(JsonFile, ReadsAGoodFile) {
  const JsonValue v = strata::support::readJsonFile(write("ok.json", "{\"format\": \"x\"}\n"));
  EXPECT_EQ(v["format"].string(), "x");
}

TEST_F(JsonFile, TruncatedFileSaysWhereItEnds) {
  const std::string p = write("cut.json", "{\"format\": \"strata-compare-1\", \"a\": [1, 2");
  EXPECT_EQ(messageOf(p), p + ": truncated: the JSON ends at byte 41 before the document is complete");
}

TEST_F(JsonFile, NotJsonSaysLineAndColumn) {
  const std::string p = write("bad.json", "{\n\"a\": tru3}");
  EXPECT_EQ(messageOf(p), p + ": not JSON at line 2, column 9: expected 'true'");
}

TEST_F(JsonFile, EmptyAndMissingFiles) {
  const std::string empty = write("empty.json", "");
  EXPECT_EQ(messageOf(empty), empty + ": is empty");
  const std::string missing = (dir_ / "absent.json").string();
  EXPECT_EQ(messageOf(missing), missing + ": cannot read: No such file or directory");
  EXPECT_EQ(messageOf(dir_.string()).rfind(dir_.string() + ": cannot read: ", 0), 0u);
}

}  // namespace
