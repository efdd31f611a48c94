// Checks the SVG emitters' tests share: occurrences of a string and a tiny
// XML well-formedness check.
#ifndef TESSERA_TESTS_SVG_CHECK_H_
#define TESSERA_TESTS_SVG_CHECK_H_

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// Non-overlapping occurrences of `needle` in `haystack`.
inline size_t Count(std::string_view haystack, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

// A tiny well-formedness check: every start tag is closed in order, attribute
// values are quoted, and every '&' starts a known entity.
inline ::testing::AssertionResult WellFormedXml(std::string_view svg) {
  std::vector<std::string> open;
  for (size_t pos = 0; pos < svg.size(); ++pos) {
    if (svg[pos] == '&') {
      size_t semi = svg.find(';', pos);
      std::string_view ref = svg.substr(pos, semi == std::string_view::npos ? 8 : semi - pos + 1);
      bool known = ref == "&amp;" || ref == "&lt;" || ref == "&gt;" || ref == "&quot;" ||
                   ref == "&apos;" || (ref.size() > 3 && ref[1] == '#');
      if (!known) return ::testing::AssertionFailure() << "bad entity at " << pos << ": " << ref;
      continue;
    }
    if (svg[pos] != '<') continue;
    if (svg.substr(pos, 2) == "<?") {
      pos = svg.find("?>", pos);
      continue;
    }
    size_t end = pos + 1;
    char quote = 0;
    for (; end < svg.size() && (quote != 0 || svg[end] != '>'); ++end) {
      if (svg[end] == '"' || svg[end] == '\'')
        quote = quote == 0 ? svg[end] : (quote == svg[end] ? 0 : quote);
      if (quote == 0 && svg[end] == '<')
        return ::testing::AssertionFailure() << "'<' in tag at " << pos;
    }
    if (end == svg.size()) return ::testing::AssertionFailure() << "unterminated tag at " << pos;
    std::string_view tag = svg.substr(pos + 1, end - pos - 1);
    if (tag.starts_with('/')) {
      std::string name(tag.substr(1));
      if (open.empty() || open.back() != name) {
        return ::testing::AssertionFailure()
               << "</" << name << "> closes <" << (open.empty() ? "" : open.back()) << ">";
      }
      open.pop_back();
    } else if (!tag.ends_with('/')) {
      open.emplace_back(tag.substr(0, tag.find_first_of(" \n\t")));
    }
    pos = end;
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> never closed";
  return ::testing::AssertionSuccess();
}

}  // namespace tessera

#endif  // TESSERA_TESTS_SVG_CHECK_H_
