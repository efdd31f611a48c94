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

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tessera::hostile {

struct HostileCase {
  std::string name;                          // unique, [A-Za-z0-9_]
  std::map<std::string, std::string> files;  // written into the run's directory
  std::string args;                          // after `tessera`, relative paths
  // What the single error line must mention on exit 2 (a file name or a
  // flag); empty: any clear one-line error.
  std::string names;
  std::set<int> exit_codes = {0, 2};  // allowed
};

// Every case, from every generator below; names are unique.
std::vector<HostileCase> AllCases();

}  // namespace tessera::hostile

#endif  // TESSERA_TESTS_HOSTILE_HOSTILE_CASE_H_
