// Runs every hostile case (hostile_case.h) through the real `tessera`
// binary: a fresh directory per case, a 20 s timeout, a 2 GB address-space
// limit (not under AddressSanitizer, which reserves far more address space
// than it uses), and the checks of hostile_case.h.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_fixture.h"
#include "hostile/hostile_case.h"
#include "test_paths.h"

namespace tessera::hostile {
namespace {

namespace fs = std::filesystem;

constexpr int kTimeoutS = 20;
constexpr long kAddressSpaceKib = 2L * 1024 * 1024;  // 2 GB

// Every file below `dir`, relative to it.
std::set<std::string> Listing(const fs::path& dir) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    files.insert(fs::relative(entry.path(), dir).string());
  }
  return files;
}

// The paths after -o / --output / --svg in `args`.
std::set<std::string> Outputs(const std::string& args) {
  std::istringstream in(args);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  std::set<std::string> out;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "-o" || words[i] == "--output" || words[i] == "--svg") {
      out.insert(words[i + 1]);
      // Its parent folders, when the run created none, are not outputs.
    }
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

// How gtest prints a case (its name, as in the test's): without it gtest
// writes every case's bytes in hex when it registers the cases, in each test
// process's start-up.
void PrintTo(const HostileCase& c, std::ostream* out) { *out << c.name; }

namespace {

class HostileTest : public ::testing::TestWithParam<HostileCase> {
 protected:
  void SetUp() override { root_ = testing::FreshTestDir(); }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_P(HostileTest, EndsCleanlyWithAClearMessage) {
  const HostileCase& c = GetParam();
  const fs::path dir = root_ / "run";
  fs::create_directories(dir);
  for (const auto& [name, text] : c.files) {
    fs::create_directories((dir / name).parent_path());
    testing::WriteTextFile(dir / name, text.Text());
  }
  const std::set<std::string> before = Listing(dir);
#ifdef TESSERA_SANITIZED
  const std::string limit;
#else
  const std::string limit = "ulimit -v " + std::to_string(kAddressSpaceKib) + "; ";
#endif
  const std::string cmd = "cd '" + dir.string() + "' && (" + limit + "exec timeout -s KILL " +
                          std::to_string(kTimeoutS) + " " + TESSERA_BINARY + " " + c.args + ") >'" +
                          (root_ / "stdout").string() + "' 2>'" + (root_ / "stderr").string() +
                          "' </dev/null";
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string err = testing::ReadAll(root_ / "stderr");
  SCOPED_TRACE("tessera " + c.args + "\nexit " + std::to_string(code) + "\nstderr:\n" +
               err.substr(0, 2000));

  ASSERT_NE(code, 137) << "killed: ran past " << kTimeoutS << " s or out of memory";
  EXPECT_TRUE(c.exit_codes.count(code)) << "unexpected exit code";
  for (const char* report : {"AddressSanitizer", "LeakSanitizer", "runtime error:", "terminate"}) {
    EXPECT_EQ(err.find(report), std::string::npos) << report;
  }

  // Nothing but the outputs, and those only when a plan or report was made
  // (exit 3 still prints the plan of the services that can be served).
  const std::set<std::string> allowed =
      code == 0 || code == 3 ? Outputs(c.args) : std::set<std::string>{};
  for (const std::string& file : Listing(dir)) {
    if (before.count(file)) continue;
    EXPECT_TRUE(allowed.count(file)) << "wrote " << file;
  }

  if (code != 2) return;
  std::vector<std::string> errors;
  for (const std::string& line : Lines(err)) {
    if (line.starts_with("tessera: error: ")) errors.push_back(line);
  }
  // `validate` reports a plan's violations, one per line, instead.
  const bool violations =
      c.args.starts_with("validate") && err.find("violation(s)") != std::string::npos;
  if (violations) return;
  ASSERT_EQ(errors.size(), 1u) << "exit 2 prints exactly one error line";
  const std::string& line = errors.front();
  EXPECT_LT(line.size(), 2000u) << "a one-line error, not an echo of the input";
  if (!c.names.empty()) {
    EXPECT_NE(line.find(c.names), std::string::npos) << "the error names " << c.names;
  }
  for (char ch : line) {
    EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20 && ch != '\t')
        << "raw control byte " << static_cast<int>(ch) << " in the message";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<HostileCase>& info) {
                           return info.param.name;
                         });

TEST(HostileSuite, HasAtLeastThreeHundredCasesOverEverySubcommand) {
  const std::vector<HostileCase> cases = AllCases();
  EXPECT_GE(cases.size(), 300u);
  std::set<std::string> commands;
  for (const HostileCase& c : cases) commands.insert(c.args.substr(0, c.args.find(' ')));
  for (const char* command :
       {"plan", "validate", "simulate", "gslice", "replay", "gen", "igniter"}) {
    EXPECT_TRUE(commands.count(command)) << command;
  }
}

}  // namespace
}  // namespace tessera::hostile
