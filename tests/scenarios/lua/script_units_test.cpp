// The unit parsers and name suggestions scripts rely on.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/script_units.hpp"

namespace sluice::scenario {
namespace {

// Sizes: core/common/byte_size.hpp, tested in tests/core/common/byte_size_test.cpp.

TEST(ParseRate, AcceptsBitsBytesAndPlainNumbers) {
  EXPECT_DOUBLE_EQ(*parse_rate("100Gb/s"), 12.5e9);
  EXPECT_DOUBLE_EQ(*parse_rate("12.5GB/s"), 12.5e9);
  EXPECT_DOUBLE_EQ(*parse_rate("750MB/s"), 750e6);
  EXPECT_DOUBLE_EQ(*parse_rate("2GiB/s"), 2.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(*parse_rate("1000"), 1000.0);
  EXPECT_DOUBLE_EQ(*parse_rate("8Mb/s"), 1e6);
}

TEST(ParseRate, SuggestsBitsPerSecondForNetworkSpellings) {
  for (const char* text : {"100Gbit", "25GbE", "40gbps"}) {
    Result<double> r = parse_rate(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("Gb/s\" for bits per second"), std::string::npos) << r.status().message();
  }
  EXPECT_NE(parse_rate("fast").status().message().find("is not a rate"), std::string::npos);
}

TEST(ParseDuration, AcceptsUnitsAndNanoseconds) {
  EXPECT_EQ(*parse_duration("10ms"), 10 * k_ns_per_ms);
  EXPECT_EQ(*parse_duration("2.5us"), 2500);
  EXPECT_EQ(*parse_duration("1s"), k_ns_per_s);
  EXPECT_EQ(*parse_duration("300"), 300);
  EXPECT_FALSE(parse_duration("10 sec").ok());
  EXPECT_FALSE(parse_duration("soon").ok());
}

TEST(EditDistance, CountsInsertionsDeletionsSubstitutions) {
  EXPECT_EQ(edit_distance("chunck", "chunk"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
}

TEST(ClosestName, SuggestsOnlyNearNames) {
  const std::vector<std::string> names = {"chunk", "count", "chooser"};
  EXPECT_EQ(closest_name("chunck", names), "chunk");
  EXPECT_EQ(closest_name("choser", names), "chooser");
  EXPECT_EQ(closest_name("bandwidth", names), "");
}

TEST(FormatRate, PrintsDecimalBytesPerSecond) {
  EXPECT_EQ(format_rate(12.5e9), "12.5 GB/s");
  EXPECT_EQ(format_rate(750e6), "750 MB/s");
}

ScriptTable table_of(std::map<std::string, ScriptValue> fields) {
  ScriptTable t;
  t.fields = std::move(fields);
  return t;
}

// What the readers below may read (a FieldReader reads only declared fields).
FieldTable fields_of(std::vector<FieldDoc> fields) { return FieldTable{"test", "fields of a test", std::move(fields)}; }

const FieldTable& threads_table() {
  static const FieldTable k = fields_of({count_field("threads", "files", 1, 100, "4", "files in flight")});
  return k;
}

TEST(FieldReader, ListOfScalarsIsASweepAxisAndReturnsTheFirst) {
  auto list = std::make_shared<ScriptTable>();
  list->list = {ScriptValue{std::int64_t{1}}, ScriptValue{std::int64_t{8}}};
  const ScriptTable args = table_of({{"threads", ScriptValue{std::shared_ptr<const ScriptTable>(list)}}});
  FieldReader r(args, "ctx", threads_table());
  EXPECT_EQ(r.count("threads"), 1u);
  ASSERT_EQ(r.sweeps().size(), 1u);
  EXPECT_EQ(r.sweeps()[0].key, "threads");
  EXPECT_EQ(r.sweeps()[0].values.size(), 2u);
  EXPECT_NO_THROW(r.finish());
}

TEST(FieldReader, ChecksEveryElementOfASweep) {
  auto list = std::make_shared<ScriptTable>();
  list->list = {ScriptValue{std::int64_t{1}}, ScriptValue{std::int64_t{0}}};
  const ScriptTable args = table_of({{"threads", ScriptValue{std::shared_ptr<const ScriptTable>(list)}}});
  FieldReader r(args, "ctx", threads_table());
  EXPECT_THROW(r.count("threads"), ScriptError);
}

TEST(FieldReader, UnknownFieldNamesTheClosestKnownOne) {
  const ScriptTable args = table_of({{"thraeds", ScriptValue{std::int64_t{4}}}});
  FieldReader r(args, "sl.workload.file_sweep", threads_table());
  EXPECT_FALSE(r.count("threads").has_value());
  try {
    r.finish();
    FAIL() << "finish accepted an unknown field";
  } catch (const ScriptError& e) {
    EXPECT_STREQ(e.what(), "sl.workload.file_sweep: unknown field \"thraeds\"; did you mean \"threads\"?");
  }
}

TEST(FieldReader, TypesUnitsAndRanges) {
  const ScriptTable args = table_of({{"size", ScriptValue{std::string("1MiB")}},
                                     {"rate", ScriptValue{std::string("100Gb/s")}},
                                     {"flag", ScriptValue{true}},
                                     {"n", ScriptValue{2.0}},
                                     {"bad", ScriptValue{2.5}},
                                     {"nodes", ScriptValue{std::string("all")}}});
  const FieldTable table =
      fields_of({size_field("size", 0, k_gib, "", "a size"), rate_field("rate", "", "a rate"),
                 boolean_field("flag", false, "a flag"), count_field("n", "", 0, 4, "", "a count"),
                 count_field("bad", "", 0, 4, "", "a count"), count_list_field("nodes", "", 0, 4, "", "a list")});
  FieldReader r(args, "ctx", table);
  EXPECT_EQ(r.size("size"), k_mib);
  EXPECT_DOUBLE_EQ(*r.rate("rate"), 12.5e9);
  EXPECT_EQ(r.boolean("flag"), true);
  EXPECT_EQ(r.count("n"), 2u);  // 2.0 is whole
  EXPECT_THROW(r.count("bad"), ScriptError);
  EXPECT_THROW(r.count_list("nodes"), ScriptError);
  // A value of the wrong type for what the table declares.
  const FieldTable wrong =
      fields_of({size_field("flag", 0, k_gib, "", "a size given a boolean"), text_field("n", 10, "", "a text")});
  FieldReader w(args, "ctx", wrong);
  EXPECT_THROW(w.size("flag"), ScriptError);
  EXPECT_THROW(w.text("n"), ScriptError);
}

std::string size_error(const ScriptValue& value, std::uint64_t lo, std::uint64_t hi) {
  const ScriptTable args = table_of({{"chunk", value}});
  const FieldTable table = fields_of({size_field("chunk", lo, hi, "", "a chunk size")});
  FieldReader r(args, "sl.fs.beeond", table);
  try {
    r.size("chunk");
  } catch (const ScriptError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(FieldReader, SizeErrorsNameTheFieldAndTheSpellingToUse) {
  const std::string mb = size_error(ScriptValue{std::string("4MB")}, 0, k_gib);
  EXPECT_NE(mb.find("chunk"), std::string::npos) << mb;
  EXPECT_NE(mb.find("\"4MB\" is not a size, use \"4MiB\" or the number of bytes"), std::string::npos) << mb;
  const std::string range = size_error(ScriptValue{std::string("2MiB")}, 4 * k_kib, k_mib);
  EXPECT_NE(range.find("chunk"), std::string::npos) << range;
  EXPECT_NE(range.find("(4KiB .. 1MiB)"), std::string::npos) << range;
  const std::string negative = size_error(ScriptValue{std::int64_t{-1}}, 0, k_gib);
  EXPECT_NE(negative.find("negative"), std::string::npos) << negative;
  EXPECT_EQ(size_error(ScriptValue{std::string("1.5MiB")}, 0, k_gib), "(accepted)");
}

}  // namespace
}  // namespace sluice::scenario
