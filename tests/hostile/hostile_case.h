// The hostile-input suite: inputs a hostile or careless user gives every
// subcommand (truncated, huge, tiny, negative, NaN/inf, duplicate keys, wrong
// types, deep nesting, invalid UTF-8, NUL bytes, empty files, binary
// garbage, scale), each run through the real `tessera` binary in a fresh
// directory with a 20 s timeout and a 2 GB address-space limit. A case
// passes when the run ends by itself with an allowed exit code (0, 2, or 3
// where an SLO may be impossible), prints on exit 2 exactly one
// "tessera: error:" line that names the file or flag at fault, shows no
// sanitizer report, and writes nothing but its -o / --svg outputs.
#ifndef TESSERA_TESTS_HOSTILE_HOSTILE_CASE_H_
#define TESSERA_TESTS_HOSTILE_HOSTILE_CASE_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tessera::hostile {

// A file's text, or the function that makes it. Every test process registers
// every case (gtest keeps a copy of each), so the largest inputs, megabytes
// of nesting or ten thousand services, are made only when their case runs:
// made at registration they took 0.16 s of each sanitized test process's
// start, some 1,900 of them in `make test-asan`.
class FileText {
 public:
  FileText() = default;                                   // an empty file
  FileText(std::string text) : text_(std::move(text)) {}  // implicit, as a string
  FileText(const char* text) : text_(text) {}
  explicit FileText(std::function<std::string()> make) : make_(std::move(make)) {}
  std::string Text() const { return make_ ? make_() : text_; }

 private:
  std::string text_;
  std::function<std::string()> make_;
};

struct HostileCase {
  std::string name;                       // unique, [A-Za-z0-9_]
  std::map<std::string, FileText> files;  // written into the run's directory
  std::string args;                       // after `tessera`, relative paths
  // What the single error line must mention on exit 2 (a file name or a
  // flag); empty: any clear one-line error.
  std::string names;
  std::set<int> exit_codes = {0, 2};  // allowed
};

// Every case, from every generator below; names are unique.
std::vector<HostileCase> AllCases();

}  // namespace tessera::hostile

#endif  // TESSERA_TESTS_HOSTILE_HOSTILE_CASE_H_
