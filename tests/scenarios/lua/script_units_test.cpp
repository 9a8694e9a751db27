// The unit parsers and name suggestions scripts rely on.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/script_units.hpp"

namespace sluice::scenario {
namespace {

TEST(ParseSize, AcceptsBinaryUnitsAndWholeBytes) {
  EXPECT_EQ(*parse_size("64KiB"), 64 * k_kib);
  EXPECT_EQ(*parse_size("1.5MiB"), 1536 * k_kib);
  EXPECT_EQ(*parse_size("4GiB"), 4 * k_gib);
  EXPECT_EQ(*parse_size("2TiB"), 2 * k_tib);
  EXPECT_EQ(*parse_size("512B"), 512u);
  EXPECT_EQ(*parse_size("1000"), 1000u);
  EXPECT_EQ(*parse_size("16 MiB"), 16 * k_mib);
}

TEST(ParseSize, RefusesDecimalAndAmbiguousSuffixesWithTheSpellingToUse) {
  Result<std::uint64_t> kb = parse_size("64KB");
  ASSERT_FALSE(kb.ok());
  EXPECT_NE(kb.status().message().find("use \"64KiB\""), std::string::npos) << kb.status().message();
  EXPECT_NE(parse_size("1M").status().message().find("use \"1MiB\""), std::string::npos);
  EXPECT_NE(parse_size("2gb").status().message().find("use \"2GiB\""), std::string::npos);
  EXPECT_FALSE(parse_size("lots").ok());
  EXPECT_FALSE(parse_size("").ok());
  EXPECT_FALSE(parse_size("1.2.3MiB").ok());
  EXPECT_NE(parse_size("1.5B").status().message().find("whole number of bytes"), std::string::npos);
  EXPECT_NE(parse_size("99999999TiB").status().message().find("too large"), std::string::npos);
}

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

TEST(FormatSize, PrintsTheShortestExactBinaryUnit) {
  EXPECT_EQ(format_size(64 * k_kib), "64KiB");
  EXPECT_EQ(format_size(1536 * k_kib), "1.5MiB");
  EXPECT_EQ(format_size(1000), "1000B");
  EXPECT_EQ(format_rate(12.5e9), "12.5 GB/s");
  EXPECT_EQ(format_rate(750e6), "750 MB/s");
}

ScriptTable table_of(std::map<std::string, ScriptValue> fields) {
  ScriptTable t;
  t.fields = std::move(fields);
  return t;
}

TEST(FieldReader, ListOfScalarsIsASweepAxisAndReturnsTheFirst) {
  auto list = std::make_shared<ScriptTable>();
  list->list = {ScriptValue{std::int64_t{1}}, ScriptValue{std::int64_t{8}}};
  const ScriptTable args = table_of({{"threads", ScriptValue{std::shared_ptr<const ScriptTable>(list)}}});
  FieldReader r(args, "ctx");
  EXPECT_EQ(r.count("threads", 1, 100), 1u);
  ASSERT_EQ(r.sweeps().size(), 1u);
  EXPECT_EQ(r.sweeps()[0].key, "threads");
  EXPECT_EQ(r.sweeps()[0].values.size(), 2u);
  EXPECT_NO_THROW(r.finish());
}

TEST(FieldReader, ChecksEveryElementOfASweep) {
  auto list = std::make_shared<ScriptTable>();
  list->list = {ScriptValue{std::int64_t{1}}, ScriptValue{std::int64_t{0}}};
  const ScriptTable args = table_of({{"threads", ScriptValue{std::shared_ptr<const ScriptTable>(list)}}});
  FieldReader r(args, "ctx");
  EXPECT_THROW(r.count("threads", 1, 100), ScriptError);
}

TEST(FieldReader, UnknownFieldNamesTheClosestKnownOne) {
  const ScriptTable args = table_of({{"thraeds", ScriptValue{std::int64_t{4}}}});
  FieldReader r(args, "sl.workload.file_sweep");
  EXPECT_FALSE(r.count("threads", 1, 100).has_value());
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
  FieldReader r(args, "ctx");
  EXPECT_EQ(r.size("size"), k_mib);
  EXPECT_DOUBLE_EQ(*r.rate("rate"), 12.5e9);
  EXPECT_EQ(r.boolean("flag"), true);
  EXPECT_EQ(r.count("n", 0, 4), 2u);  // 2.0 is whole
  EXPECT_THROW(r.count("bad", 0, 4), ScriptError);
  EXPECT_THROW(r.count_list("nodes", 0, 4), ScriptError);
  EXPECT_THROW(r.size("flag"), ScriptError);
  EXPECT_THROW(r.text("n"), ScriptError);
}

}  // namespace
}  // namespace sluice::scenario
