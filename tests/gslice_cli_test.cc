// `tessera gslice` as a user runs it: bad input exits 2 naming the flag or file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.h"

namespace tessera {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string err;
};

Outcome Tessera(const std::string& args) {
  const std::filesystem::path err = testing::FreshTestDir() / "stderr";
  const std::string cmd =
      std::string(TESSERA_BINARY) + " " + args + " >/dev/null 2>" + err.string();
  const int status = std::system(cmd.c_str());
  std::stringstream text;
  text << std::ifstream(err).rdbuf();
  std::filesystem::remove_all(err.parent_path());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(GsliceCommand, BadInputExitsTwoNamingTheFlagOrFile) {
  const std::string fig16 = testing::SourcePath("examples/scenarios/gslice-fig16.yaml");
  struct Case {
    std::string args;
    std::string named;
  } cases[] = {
      {"--scenario nowhere.yaml", "nowhere.yaml"},
      {"--scenario " + fig16 + " --initial-share 0.6", "--initial-share"},
      {"--scenario " + fig16 + " --duration 0", "--duration"},
      {"--scenario " + fig16 + " --reload-delay soon", "--reload-delay"},
      {"--scenario " + fig16 + " --gpu v100", "--gpu"},
  };
  for (const Case& c : cases) {
    const Outcome o = Tessera("gslice " + c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args;
    EXPECT_NE(o.err.find(c.named), std::string::npos) << c.args << ": " << o.err;
  }
  EXPECT_EQ(Tessera("gslice --scenario " + fig16 + " --duration 2s").exit_code, 0);
}

}  // namespace
}  // namespace tessera
