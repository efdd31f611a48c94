// Messages (issue 17, class 10): user text echoed in a message never reaches
// the terminal raw (a NUL, an escape sequence, bytes that are not UTF-8 are
// written "\xNN"), and errors about a scenario's GPU or pool name the file,
// the line and the field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_fixture.h"

namespace tessera {
namespace {

using namespace std::string_literals;

class MessagesCliTest : public testing::CliTest {
 protected:
  // True iff `text` holds a control byte other than '\n' (or DEL).
  static bool HasRawControlByte(const std::string& text) {
    for (char c : text) {
      const auto b = static_cast<unsigned char>(c);
      if ((b < 0x20 && c != '\n') || b == 0x7f) return true;
    }
    return false;
  }

  std::string Coefficients() {
    return testing::SharedDataPath("igniter/derived/fitted_coefficients_v100.json");
  }
};

TEST_F(MessagesCliTest, ControlBytesFromFilesAreEscaped) {
  const std::string svc = "  - {name: a, model: resnet50, rate_rps: 10, slo_ms: 100}\n";
  const struct {
    std::string name, yaml, want;
  } cases[] = {
      // YAML escapes put a NUL, an ESC and a C1 CSI into names.
      {"gpu", "gpu: \"a100\\0\\e[31m\"\nservices:\n" + svc, "unknown GPU 'a100\\x00\\x1b[31m'"},
      {"duplicate service",
       "services:\n  - {name: \"x\\0y\", model: resnet50, rate_rps: 10, slo_ms: 100}\n"
       "  - {name: \"x\\0y\", model: resnet50, rate_rps: 10, slo_ms: 100}\n",
       "duplicate service name 'x\\x00y'"},
      {"model", "services:\n  - {name: a, model: \"m\\x9b2J\", rate_rps: 10, slo_ms: 100}\n",
       "no profiles for model 'm\\xc2\\x9b2j'"},
      {"key", "services:\n" + svc + "\"na\\0me\": x\n", "field 'na\\x00me': unknown key"},
  };
  for (const auto& c : cases) {
    const auto path = Write("s.yaml", c.yaml);
    const testing::Outcome o = Tessera("plan --planner parva --scenario " + path.string());
    EXPECT_EQ(o.exit_code, 2) << c.name << ": " << o.err;
    EXPECT_NE(o.err.find(c.want), std::string::npos) << c.name << ": " << o.err;
    EXPECT_FALSE(HasRawControlByte(o.err)) << c.name << ": " << o.err;
  }
}

TEST_F(MessagesCliTest, RawBytesInAFileAndInArgumentsAreEscaped) {
  // A raw NUL and ESC in a profile CSV field, and bytes that are not UTF-8.
  const auto profiles = Write("p.csv",
                              "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n"
                              "resnet50,a100-80gb,1g.10gb,1,1,1\x1b[2J,10\n"
                              "resnet\0\xff,a100-80gb,1g.10gb,1,1,100,10\n"s);
  const testing::Outcome csv =
      Tessera("plan --planner parva --profiles " + profiles.string() + " --scenario " +
              testing::SourcePath("examples/scenarios/s1.yaml"));
  EXPECT_EQ(csv.exit_code, 2) << csv.err;
  EXPECT_FALSE(HasRawControlByte(csv.err)) << csv.err;
  // CLI11's own errors quote the argument too.
  const testing::Outcome flag = Tessera("plan --scenario \"$(printf 'x\\033[31m')\" --bogus");
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_FALSE(HasRawControlByte(flag.err)) << flag.err;
  const testing::Outcome planner =
      Tessera("plan --scenario " + testing::SourcePath("examples/scenarios/s1.yaml") +
              " --planner \"$(printf 'p\\033]0;x\\007')\"");
  EXPECT_EQ(planner.exit_code, 2);
  EXPECT_NE(planner.err.find("p\\x1b]0;x\\x07"), std::string::npos) << planner.err;
  EXPECT_FALSE(HasRawControlByte(planner.err)) << planner.err;
}

TEST_F(MessagesCliTest, PoolAndGpuErrorsNameFileLineAndField) {
  const std::string svc = "services:\n  - {name: a, model: resnet50, rate_rps: 10, slo_ms: 100}\n";
  const auto pool2 = Write("pool2.yaml",
                           "pool:\n  - {gpu: a100-80gb, price_per_hour: 4}\n"
                           "  - {gpu: v100-16gb, price_per_hour: 3}\n" +
                               svc);
  const auto pool1 = Write("pool1.yaml", "pool:\n  - {gpu: v100-16gb, price_per_hour: 3}\n" + svc);
  const auto gpu = Write("gpu.yaml", "name: x\ngpu: v100-16gb\n" + svc);
  std::vector<std::pair<std::string, std::string>> cases = {
      {"plan --planner parva --scenario " + pool1.string(), "pool1.yaml:2: field 'pool': "},
      {"plan --planner exact --scenario " + pool2.string(), "pool2.yaml:3: field 'pool': "},
      {"plan --planner parva --scenario " + gpu.string(), "gpu.yaml:2: field 'gpu': "},
  };
  if (testing::SharedDataPresent("igniter/derived/fitted_coefficients_v100.json")) {
    cases.push_back({"plan --scenario " + pool2.string() + " --coeffs " + Coefficients(),
                     "pool2.yaml:3: field 'pool': MPS planners plan one GPU type"});
  }
  for (const auto& [args, want] : cases) {
    const testing::Outcome o = Tessera(args);
    EXPECT_EQ(o.exit_code, 2) << args << ": " << o.err;
    EXPECT_NE(o.err.find(want), std::string::npos) << args << ": " << o.err;
  }
}

}  // namespace
}  // namespace tessera
