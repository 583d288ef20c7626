// support::JsonWriter (toolkit/support/json_writer.hpp): values written as jsonString and
// jsonNumber write them, keys in the order given, the layout's rule, and misuse refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/json.hpp"
#include "support/json_value.hpp"
#include "support/json_writer.hpp"

namespace {

using strata::support::JsonWriter;

// The text of a document holding one object, written by `body`.
template <class F>
std::string object(F body, int digits = 17) {
  JsonWriter w(digits);
  w.object();
  body(w);
  return w.end().text();
}

TEST(JsonWriter, ScalarsAsTheOldCodeWroteThem) {
  // Named, not temporaries: GCC's -Wmaybe-uninitialized misreads an empty optional temporary.
  const std::optional<int> none = std::nullopt, some = 7;
  const std::string text = object([&](JsonWriter& w) {
    w.field("s", "a\"b\\c\nd\te\x01 \xc3\xa9").field("t", true).field("f", false);
    w.field("u", std::uint64_t{18446744073709551615u}).field("i", -3).field("n", 0.1);
    w.field("nan", std::nan("")).field("inf", std::numeric_limits<double>::infinity());
    w.null("z").field("none", none).field("some", some);
  });
  EXPECT_EQ(text,
            "{\n  \"s\": \"a\\\"b\\\\c\\nd\\te\\u0001 \xc3\xa9\", \"t\": true, \"f\": false,"
            " \"u\": 18446744073709551615, \"i\": -3,\n  \"n\": 0.10000000000000001, \"nan\": null,"
            " \"inf\": null, \"z\": null, \"none\": null, \"some\": 7\n}\n");
}

TEST(JsonWriter, StringsEscapedAsJsonString) {
  std::string every;
  for (int c = 1; c < 128; ++c) every += static_cast<char>(c);
  JsonWriter w;
  w.item(every);
  EXPECT_EQ(w.text(), strata::support::jsonString(every) + "\n");
}

TEST(JsonWriter, DoublesWithTheDigitsAsked) {
  EXPECT_EQ(object([](JsonWriter& w) { w.field("x", 2.0 / 3); }, 9), "{\"x\": 0.666666667}\n");
  EXPECT_EQ(object([](JsonWriter& w) { w.field("x", 2.0 / 3, 4).field("y", 1e21, 6); }),
            "{\"x\": 0.6667, \"y\": 1e+21}\n");
  EXPECT_EQ(object([](JsonWriter& w) { w.array("v", std::vector<double>{0.5, 1.0 / 3}); }, 3),
            "{\n  \"v\": [0.5, 0.333]\n}\n");  // an object holding a container
  EXPECT_EQ(object([](JsonWriter& w) {
              w.fixed("a", 1.5, 0).fixed("b", 0.1234567, 4).fixed("c", std::nan(""), 2);
            }),
            "{\"a\": 2, \"b\": 0.1235, \"c\": null}\n");
}

TEST(JsonWriter, ContainersNestAndKeepTheirOrder) {
  const std::string text = object([](JsonWriter& w) {
    w.field("format", "x-1").array("empty", std::vector<int>{}).object("o").end();
    w.array("rows");
    w.object().field("b", 2).field("a", 1).end();
    w.array(std::vector<unsigned>{3, 4});
    w.end().array("names", std::vector<std::string>{"p", "q"});
  });
  EXPECT_EQ(text,
            "{\n"
            "  \"format\": \"x-1\",\n"
            "  \"empty\": [],\n"
            "  \"o\": {},\n"
            "  \"rows\": [\n"
            "    {\"b\": 2, \"a\": 1},\n"
            "    [3, 4]\n"
            "  ],\n"
            "  \"names\": [\"p\", \"q\"]\n"
            "}\n");
  const auto parsed = strata::support::parseJson(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->dump(),
            R"({"format":"x-1","empty":[],"o":{},"rows":[{"b":2,"a":1},[3,4]],"names":["p","q"]})");
}

TEST(JsonWriter, LongScalarListsPackedInto100Columns) {
  std::vector<std::uint64_t> v(200);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i * 1000;
  const std::string text = object([&v](JsonWriter& w) { w.array("v", v); });
  std::size_t lines = 0, from = 0;
  for (std::size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1, ++lines)
    EXPECT_LE(nl - from, 100u) << text.substr(from, nl - from);
  EXPECT_GT(lines, 10u);
  EXPECT_LT(lines, 25u);  // packed, not one a line
  const auto parsed = strata::support::parseJson(text);
  ASSERT_TRUE(parsed);
  ASSERT_EQ((*parsed)["v"].items().size(), v.size());
  EXPECT_EQ((*parsed)["v"].items()[199].unsignedNumber(), 199000u);
}

TEST(JsonWriter, MisuseRefused) {
  JsonWriter a;
  a.object();
  EXPECT_THROW(a.item(1), std::logic_error);       // an element in an object
  EXPECT_THROW((void)a.text(), std::logic_error);  // still open
  a.array("v");
  EXPECT_THROW(a.field("k", 1), std::logic_error);  // a member in an array
  a.end().end();
  EXPECT_THROW(a.end(), std::logic_error);
  EXPECT_THROW(a.field("k", 1), std::logic_error);  // after the document
  EXPECT_THROW((void)JsonWriter().text(), std::logic_error);
}

}  // namespace
