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
  std::string out;
};

Outcome Tessera(const std::string& args) {
  const std::filesystem::path dir = testing::FreshTestDir();
  const std::filesystem::path err = dir / "stderr", out = dir / "stdout";
  const std::string cmd =
      std::string(TESSERA_BINARY) + " " + args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  std::stringstream err_text, out_text;
  err_text << std::ifstream(err).rdbuf();
  out_text << std::ifstream(out).rdbuf();
  std::filesystem::remove_all(dir);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err_text.str(), out_text.str()};
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
      {"--scenario " + fig16 + " --hold-down soon", "--hold-down"},
      {"--scenario " + fig16 + " --hold-down -1s", "--hold-down"},
      {"--scenario " + fig16 + " --knee-batch 0", "--knee-batch"},
      {"--scenario " + fig16 + " --initial-share 0", "--initial-share"},
      {"--scenario " + fig16 + " --policy mps", "--policy"},
  };
  for (const Case& c : cases) {
    const Outcome o = Tessera("gslice " + c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args;
    EXPECT_NE(o.err.find(c.named), std::string::npos) << c.args << ": " << o.err;
  }
  EXPECT_EQ(Tessera("gslice --scenario " + fig16 + " --duration 2s").exit_code, 0);
}

TEST(GsliceCommand, BaselinesRunAndJsonCarriesTheComparison) {
  const std::string c3 = testing::SourcePath("examples/scenarios/gslice-fig10-c3.yaml");
  for (const char* policy : {"default-mps", "mps-slab", "static-slab", "clipper"}) {
    EXPECT_EQ(Tessera("gslice --scenario " + c3 + " --duration 2s --policy " + policy).exit_code, 0)
        << policy;
  }
  const Outcome o = Tessera("gslice --scenario " + c3 +
                            " --duration 3s --policy clipper --no-contention --hold-down 10s"
                            " --knee-batch 8 --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* field : {"\"gpus\": 3", "\"contention\": false", "\"violations\"",
                            "\"knee_share\"", "\"throughput_rps\""}) {
    EXPECT_NE(o.out.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace tessera
