// Seeded mutation of a valid input file, for the fuzz-style parser tests
// (profile CSVs, scenario YAML, deployment JSON). Test-only.
#ifndef TESSERA_TESTS_FUZZ_MUTATOR_H_
#define TESSERA_TESTS_FUZZ_MUTATOR_H_

#include <array>
#include <cctype>
#include <cstddef>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::testing {

// What a format's mutants are made of: the bytes an insertion picks from and
// the texts that replace a number. Each format lists its own (its delimiters,
// its spellings of NaN, null, ...). REQUIRES: neither is empty.
struct MutationVocabulary {
  std::string_view bytes;                // may hold '\0'
  std::span<const std::string> numbers;  // may hold ""
};

// JSON's: its delimiters and escapes, and the texts a number is replaced by
// (out of range, not finite, another type, empty).
inline const MutationVocabulary& JsonMutations() {
  static const std::array<std::string, 14> numbers = {
      "-1", "NaN", "Infinity", "1e400", "",   "\"abc\"",
      "0",  "1.5", "null",     "[]",    "{}", "99999999999999999999",
      "-0", "true"};
  static const std::string bytes = std::string(",\n\r\"' :{}[]\\\x01\xff", 15) + '\0';
  static const MutationVocabulary vocabulary = {bytes, numbers};
  return vocabulary;
}

// Applies 1 to 3 random edits of the kinds real files suffer, each one of
// (chosen with equal odds; an edit that cannot apply does nothing):
//   - a line deleted, duplicated, or swapped with another line (a line keeps
//     its '\n'; a last line without one stays without);
//   - one bit of a random byte flipped;
//   - a byte of `vocabulary.bytes` inserted at a random position;
//   - a random byte deleted;
//   - the run of digits and '.' around a random digit replaced by one of
//     `vocabulary.numbers`.
// Deterministic: the same text, vocabulary and RNG state give the same
// mutant and leave `rng` in the same state, so a seeded test sees the same
// sequence of mutants on every run and platform with the same standard
// library.
inline std::string Mutate(std::string text, std::mt19937& rng,
                          const MutationVocabulary& vocabulary) {
  auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  auto lines_of = [](const std::string& s) {
    std::vector<std::string> lines;
    size_t begin = 0;
    for (size_t end; (end = s.find('\n', begin)) != std::string::npos; begin = end + 1) {
      lines.push_back(s.substr(begin, end - begin + 1));
    }
    if (begin < s.size()) lines.push_back(s.substr(begin));
    return lines;
  };
  const size_t edits = 1 + pick(3);
  for (size_t e = 0; e < edits; ++e) {
    std::vector<std::string> lines = lines_of(text);
    const size_t op = pick(7);
    if (op <= 2 && !lines.empty()) {
      const size_t a = pick(lines.size()), b = pick(lines.size());
      if (op == 0) lines.erase(lines.begin() + a);
      if (op == 1) lines.insert(lines.begin() + a, lines[a]);
      if (op == 2) std::swap(lines[a], lines[b]);
      text.clear();
      for (const std::string& l : lines) text += l;
    } else if (op == 3 && !text.empty()) {
      text[pick(text.size())] ^= static_cast<char>(1 << pick(8));
    } else if (op == 4) {
      text.insert(text.begin() + pick(text.size() + 1),
                  vocabulary.bytes[pick(vocabulary.bytes.size())]);
    } else if (op == 5 && !text.empty()) {
      text.erase(pick(text.size()), 1);
    } else if (op == 6) {
      // Replace the digit run around a random digit.
      std::vector<size_t> digits;
      for (size_t i = 0; i < text.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(text[i]))) digits.push_back(i);
      }
      if (digits.empty()) continue;
      size_t begin = digits[pick(digits.size())], end = begin;
      auto numeric = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; };
      while (begin > 0 && numeric(text[begin - 1])) --begin;
      while (end < text.size() && numeric(text[end])) ++end;
      text.replace(begin, end - begin, vocabulary.numbers[pick(vocabulary.numbers.size())]);
    }
  }
  return text;
}

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_FUZZ_MUTATOR_H_
