#include "tessera/util/text_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {
namespace {

namespace fs = std::filesystem;

using namespace std::string_literals;

TEST(TextIo, ToDoubleReadsTheWholeFieldOrNothing) {
  const double kInf = HUGE_VAL;
  struct Case {
    std::string text;
    std::optional<double> want;  // nullopt: not a number
  };
  const std::vector<Case> cases = {
      {"3", 3},
      {"1.5", 1.5},
      {"-1", -1},
      {"6.5e2", 650},
      {"0", 0},
      {"inf", kInf},
      {"1e400", kInf},    // out of range: a number, not finite
      {"-1e400", -kInf},  // and with its sign
      {"1e-400", 0.0},    // underflow rounds to zero
      {"", std::nullopt},
      {" 3 ", std::nullopt},  // callers trim first
      {" 3", std::nullopt},
      {"3 ", std::nullopt},
      {"+3", std::nullopt},
      {"3x", std::nullopt},
      {"abc", std::nullopt},
      {"0x10", std::nullopt},
      {"1,5", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ToDouble(c.text), c.want) << "'" << c.text << "'";
  }
  // NaN compares unequal to itself: check it apart.
  for (const char* text : {"nan", "NaN", "-nan"}) {
    const std::optional<double> v = ToDouble(text);
    ASSERT_TRUE(v.has_value()) << text;
    EXPECT_TRUE(std::isnan(*v)) << text;
  }
}

TEST(TextIo, ToPortTakesOneToFiveDigitsWithin1To65535) {
  EXPECT_EQ(ToPort("1"), 1);
  EXPECT_EQ(ToPort("8080"), 8080);
  EXPECT_EQ(ToPort("65535"), 65535);
  EXPECT_EQ(ToPort("00080"), 80);
  for (const char* bad : {"", "0", "65536", "99999", "000080", "+80", "-1", " 80", "80 ", "8o",
                          "4294967377", "0x50"}) {
    EXPECT_EQ(ToPort(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(TextIo, GroupThousandsSeparatesEveryThreeDigits) {
  EXPECT_EQ(GroupThousands(0), "0");
  EXPECT_EQ(GroupThousands(999), "999");
  EXPECT_EQ(GroupThousands(8063), "8,063");
  EXPECT_EQ(GroupThousands(1234567), "1,234,567");
  EXPECT_EQ(GroupThousands(-100), "-100");
  EXPECT_EQ(GroupThousands(-72351), "-72,351");
}

TEST(TextIo, SplitLinesAcceptsLfCrlfAndNoFinalNewline) {
  struct Case {
    std::string text;
    ByteOrderMark bom;
    // Owned: a view of `kBom + "a,b"` would outlive its temporary.
    std::vector<std::string> want;
  };
  const std::string kBom = "\xEF\xBB\xBF";
  const std::vector<Case> cases = {
      {"", ByteOrderMark::kStrip, {}},
      {"a", ByteOrderMark::kStrip, {"a"}},
      {"a\n", ByteOrderMark::kStrip, {"a"}},
      {"a\nb", ByteOrderMark::kStrip, {"a", "b"}},
      {"a\r\nb\r\n", ByteOrderMark::kStrip, {"a", "b"}},
      {"a\r\nb\r", ByteOrderMark::kStrip, {"a", "b"}},
      {"a\r\r\n", ByteOrderMark::kStrip, {"a\r"}},  // only one '\r' is a line end
      {"\n\n", ByteOrderMark::kStrip, {"", ""}},
      {"a\n\n \nb\n", ByteOrderMark::kStrip, {"a", "", " ", "b"}},
      {kBom + "a,b\r\n1,2\r\n", ByteOrderMark::kStrip, {"a,b", "1,2"}},
      {kBom + "a,b\r\n", ByteOrderMark::kKeep, {kBom + "a,b"}},
      {"a\xEF\xBB\xBF", ByteOrderMark::kStrip, {"a\xEF\xBB\xBF"}},  // only a leading one
  };
  for (const Case& c : cases) {
    const std::vector<TextLine> lines = SplitLines(c.text, c.bom);
    std::vector<std::string> texts;
    for (size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i].number, static_cast<int>(i) + 1) << "'" << c.text << "'";
      texts.emplace_back(lines[i].text);
    }
    EXPECT_EQ(texts, c.want) << "'" << c.text << "'";
  }
}

TEST(TextIo, SplitCsvFieldsKeepsEmptyFieldsAndTrims) {
  struct Case {
    std::string line;
    std::vector<std::string_view> want;
  };
  const std::vector<Case> cases = {
      {"", {""}},
      {"a", {"a"}},
      {"a,b,c", {"a", "b", "c"}},
      {"a,", {"a", ""}},
      {",a", {"", "a"}},
      {",,", {"", "", ""}},
      {" a , \tb\t,  ", {"a", "b", ""}},
      {"N/A, 418.5 ,0", {"N/A", "418.5", "0"}},
      {"\"a,b\"", {"\"a", "b\""}},  // no quoting: every ',' separates
      {"a\r,b", {"a\r", "b"}},      // only spaces and tabs are trimmed
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SplitCsvFields(c.line), c.want) << "'" << c.line << "'";
  }
}

TEST(TextIo, TrimAndIsBlankKnowOnlySpacesAndTabs) {
  struct Case {
    std::string text;
    std::string_view trimmed;
  };
  const std::vector<Case> cases = {
      {"", ""},     {" ", ""},          {" \t ", ""}, {"a", "a"},
      {" a ", "a"}, {"\ta b\t", "a b"}, {"\r", "\r"}, {" a\r\n", "a\r\n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Trim(c.text), c.trimmed) << "'" << c.text << "'";
    EXPECT_EQ(IsBlank(c.text), c.trimmed.empty()) << "'" << c.text << "'";
  }
}

TEST(TextIo, EscapeShowsControlBytesAndShortensLongValues) {
  struct Case {
    std::string value, escaped;
  };
  const std::vector<Case> cases = {
      {"", ""},
      {"resnet50", "resnet50"},
      {"a\r", "a\\x0d"},
      {"a\0b"s, "a\\x00b"},
      {"\t\x7f", "\\x09\\x7f"},
      {"caf\xC3\xA9", "caf\xC3\xA9"},  // UTF-8 passes as is
      {std::string(80, 'x'), std::string(80, 'x')},
      {std::string(81, 'x'), std::string(80, 'x') + "..."},
      // Bytes that are not UTF-8, and C1 controls (CSI is one), are escaped.
      {"a\xff\xfe", "a\\xff\\xfe"},
      {"\xC3", "\\xc3"},                    // a cut sequence
      {"\xC0\xAF", "\\xc0\\xaf"},           // an overlong '/'
      {"\xED\xA0\x80", "\\xed\\xa0\\x80"},  // a surrogate
      {"\xC2\x9B"
       "2J",
       "\\xc2\\x9b"
       "2J"},                   // C1 CSI
      {"\x1b[2J", "\\x1b[2J"},  // ESC
      {"\xE2\x82\xAC \xF0\x9F\x98\x80", "\xE2\x82\xAC \xF0\x9F\x98\x80"},
      // Shortened at a character boundary, never inside one.
      {std::string(79, 'x') + "\xC3\xA9!", std::string(79, 'x') + "\xC3\xA9..."},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(EscapeForMessage(c.value), c.escaped);
    EXPECT_EQ(QuoteForMessage(c.value), "'" + c.escaped + "'");
  }
}

TEST(TextIo, EscapeMessageKeepsLinesAndUtf8) {
  EXPECT_EQ(EscapeMessage("a\0b\nc\r\x1b\xff caf\xC3\xA9"s),
            "a\\x00b\nc\\x0d\\x1b\\xff caf\xC3\xA9");
  EXPECT_EQ(EscapeMessage(std::string(200, 'x')), std::string(200, 'x'));
}

TEST(TextIo, FieldErrorNamesSourceLineAndField) {
  const Status s = FieldError("p.csv", 3, "rate\r", "must be > 0, got '-1'");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "p.csv:3: field 'rate\\x0d': must be > 0, got '-1'");
}

TEST(TextIo, ReadTextFileReadsBytesOrNamesThePath) {
  const fs::path dir = fs::temp_directory_path() / ("tessera_text_io_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "crlf.csv").string();
  const std::string content = "a,b\r\n1,\0\r\n"s;
  std::ofstream(path, std::ios::binary) << content;

  Result<std::string> read = ReadTextFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, content);  // byte for byte: CRLF and NUL kept

  const std::string missing = (dir / "missing.csv").string();
  Result<std::string> absent = ReadTextFile(missing);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(absent.status().message(), missing + ": no such file or directory");

  Result<std::string> directory = ReadTextFile(dir.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kIoError);
  EXPECT_EQ(directory.status().message(), dir.string() + ": is a directory, expected a file");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera
