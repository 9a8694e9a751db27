// The tree's one size grammar and spelling (core/common/byte_size.hpp): what
// scripts, --set, the mount flags and calibrate's --fit-piece accept, and
// how sizes are printed.
#include "core/common/byte_size.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace sluice {
namespace {

std::string message_of(std::string_view text) {
  const Result<std::uint64_t> r = parse_size(text);
  EXPECT_FALSE(r.ok()) << text << " was accepted as " << (r.ok() ? *r : 0);
  EXPECT_EQ(r.status().code(), StatusCode::invalid_argument) << text;
  return r.status().message();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ParseSize, AcceptsBinaryUnitsAndWholeBytes) {
  EXPECT_EQ(*parse_size("4MiB"), 4 * k_mib);
  EXPECT_EQ(*parse_size("64KiB"), 64 * k_kib);
  EXPECT_EQ(*parse_size("4GiB"), 4 * k_gib);
  EXPECT_EQ(*parse_size("2TiB"), 2 * k_tib);
  EXPECT_EQ(*parse_size("512B"), 512u);
  EXPECT_EQ(*parse_size("4096"), 4096u);
  EXPECT_EQ(*parse_size("0"), 0u);
  EXPECT_EQ(*parse_size("1 GiB"), k_gib);  // spaces between number and unit
  EXPECT_EQ(*parse_size("16  MiB"), 16 * k_mib);
}

TEST(ParseSize, AcceptsFractionsThatAreWholeBytes) {
  EXPECT_EQ(*parse_size("1.5MiB"), 1536 * k_kib);
  EXPECT_EQ(*parse_size("0.5KiB"), 512u);
  EXPECT_EQ(*parse_size(".25GiB"), k_gib / 4);
  EXPECT_EQ(*parse_size("2.KiB"), 2 * k_kib);
  EXPECT_EQ(*parse_size("1.0B"), 1u);
  EXPECT_TRUE(contains(message_of("1.5B"), "\"1.5B\" is not a whole number of bytes"));
  EXPECT_TRUE(contains(message_of("0.1KiB"), "whole number of bytes"));
}

TEST(ParseSize, ReadsWholeNumbersExactlyUpTo2To64) {
  EXPECT_EQ(*parse_size("9007199254740993"), 9007199254740993ULL);  // 2^53 + 1: a double would round it
  EXPECT_EQ(*parse_size("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(*parse_size("16777215TiB"), 16777215ULL * k_tib);
  EXPECT_TRUE(contains(message_of("18446744073709551616"), "too large"));
  EXPECT_TRUE(contains(message_of("16777216TiB"), "\"16777216TiB\" is too large a size"));
  EXPECT_TRUE(contains(message_of("99999999TiB"), "too large"));
  EXPECT_TRUE(contains(message_of("16777216.5TiB"), "too large"));
}

TEST(ParseSize, RefusesDecimalAndAmbiguousSuffixesSayingWhatToWrite) {
  const std::string mb = message_of("4MB");
  EXPECT_EQ(mb, "\"4MB\" is not a size, use \"4MiB\" or the number of bytes: \"MB\" may mean 1000^2 or 1024^2 bytes");
  EXPECT_TRUE(contains(message_of("64KB"), "\"64KB\" is not a size, use \"64KiB\" or the number of bytes"));
  EXPECT_TRUE(contains(message_of("64k"), "\"k\" may mean 1000 or 1024 bytes"));
  EXPECT_TRUE(contains(message_of("1M"), "use \"1MiB\" or the number of bytes"));
  EXPECT_TRUE(contains(message_of("2gb"), "use \"2GiB\" or the number of bytes"));
  EXPECT_TRUE(contains(message_of("2GB"), "\"GB\" may mean 1000^3 or 1024^3 bytes"));
  EXPECT_TRUE(contains(message_of("1TB"), "use \"1TiB\""));
  EXPECT_TRUE(contains(message_of("16 MB"), "use \"16 MiB\""));
}

TEST(ParseSize, RefusesMisspelledUnitsWithTheSpelling) {
  const std::string mib = message_of("4mib");
  EXPECT_TRUE(contains(mib, "\"4mib\" is not a size, use \"4MiB\" (sizes are B, KiB, MiB, GiB, TiB")) << mib;
  EXPECT_FALSE(contains(mib, "may mean")) << "a wrong case is not ambiguous: " << mib;
  EXPECT_TRUE(contains(message_of("4Mi"), "use \"4MiB\""));
  EXPECT_TRUE(contains(message_of("512bytes"), "use \"512B\""));
  EXPECT_TRUE(contains(message_of("512b"), "use \"512B\""));
}

TEST(ParseSize, RefusesWhatIsNotASize) {
  for (const char* text : {"", "lots", "MiB", "-1", "-4MiB", "+4MiB", "1e6", "1.2.3MiB", ".", " 4MiB", "4MiB ",
                           "4 MiBs", "0x10", "4PiB", "4 KiB/s"}) {
    const std::string m = message_of(text);
    EXPECT_TRUE(contains(m, "\"" + std::string(text) + "\" is not a size")) << text << ": " << m;
  }
  EXPECT_TRUE(contains(message_of("-1"), "a size is 0 or more bytes"));
  EXPECT_TRUE(contains(message_of(""), "(sizes are B, KiB, MiB, GiB, TiB or a whole number of bytes)"));
}

TEST(FormatSize, PrintsTheLargestUnitOfWholeQuarters) {
  EXPECT_EQ(format_size(64 * k_kib), "64KiB");
  EXPECT_EQ(format_size(1536 * k_kib), "1.5MiB");
  EXPECT_EQ(format_size(5 * k_gib / 4), "1.25GiB");
  EXPECT_EQ(format_size(7 * k_tib / 4), "1.75TiB");
  EXPECT_EQ(format_size(4 * k_mib), "4MiB");
  EXPECT_EQ(format_size(1536), "1.5KiB");
  EXPECT_EQ(format_size(1000), "1000B");
  EXPECT_EQ(format_size(1023), "1023B");
  EXPECT_EQ(format_size(k_mib + 1), "1048577B");
  EXPECT_EQ(format_size(0), "0B");
  EXPECT_EQ(format_size(std::numeric_limits<std::uint64_t>::max()), "18446744073709551615B");
  EXPECT_EQ(format_size(std::numeric_limits<std::uint64_t>::max() - k_tib / 4 + 1), "16777215.75TiB");
}

TEST(FormatSize, SpacedSpellingForProse) {
  EXPECT_EQ(format_size(k_gib, SizeSpelling::spaced), "1 GiB");
  EXPECT_EQ(format_size(1536 * k_kib, SizeSpelling::spaced), "1.5 MiB");
  EXPECT_EQ(format_size(16777236, SizeSpelling::spaced), "16777236 B");
}

TEST(FormatSize, ReadsBackThroughTheGrammar) {
  const std::vector<std::uint64_t> sizes = {0,
                                            1,
                                            1000,
                                            3 * k_kib / 4,
                                            k_kib,
                                            1536 * k_kib,
                                            5 * k_gib / 4,
                                            3 * k_tib,
                                            9007199254740993ULL,
                                            std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t bytes : sizes) {
    for (SizeSpelling spelling : {SizeSpelling::compact, SizeSpelling::spaced}) {
      const std::string text = format_size(bytes, spelling);
      const Result<std::uint64_t> back = parse_size(text);
      ASSERT_TRUE(back.ok()) << text << ": " << back.status().message();
      EXPECT_EQ(*back, bytes) << text;
    }
  }
}

TEST(SplitNumberAndUnit, SplitsTheLeadingNumber) {
  double number = 0;
  std::string_view unit;
  ASSERT_TRUE(split_number_and_unit("12.5 GB/s", number, unit));
  EXPECT_DOUBLE_EQ(number, 12.5);
  EXPECT_EQ(unit, "GB/s");
  ASSERT_TRUE(split_number_and_unit("300", number, unit));
  EXPECT_DOUBLE_EQ(number, 300);
  EXPECT_EQ(unit, "");
  EXPECT_FALSE(split_number_and_unit("ms", number, unit));
  EXPECT_FALSE(split_number_and_unit("1.2.3s", number, unit));
  EXPECT_FALSE(split_number_and_unit("", number, unit));
}

}  // namespace
}  // namespace sluice
