// End-to-end tests of `tessera gen`: the file it writes plans, the same flags
// give the same file, and bad flags exit 2 naming the flag.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_fixture.h"

namespace tessera {
namespace {

using testing::Outcome;
using testing::ReadAll;
namespace fs = std::filesystem;

class GenCliTest : public testing::CliTest {
 protected:
  // The first line of `out` is a command that writes `out` again, byte for byte.
  void ExpectRegenerates(const std::string& out) {
    const std::string first = out.substr(0, out.find('\n'));
    ASSERT_TRUE(first.starts_with("# tessera ")) << first;
    Outcome again = Tessera(first.substr(10));
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, out);
  }
};

TEST_F(GenCliTest, PresetFilePlans) {
  const fs::path file = dir_ / "normal-1.yaml";
  Outcome gen = Tessera("gen --preset normal-1 -o " + file.string());
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const std::string text = ReadAll(file);
  EXPECT_TRUE(text.starts_with("# tessera gen --preset normal-1 --services 24 ")) << text;
  EXPECT_NE(text.find("name: normal-1\ngpu: a100-80gb\n"), std::string::npos) << text;
  Outcome plan = Tessera("plan --scenario " + file.string());
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("24 services (0 infeasible)"), std::string::npos) << plan.out;
}

TEST_F(GenCliTest, WritesStdoutDeterministically) {
  const std::string args =
      "gen --services 5 --rates lognormal:3,0.5 --models resnet50,bert --slo-ms 250 --seed 3";
  Outcome a = Tessera(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("{name: resnet50-001, model: resnet50, rate_rps: "), std::string::npos)
      << a.out;
  EXPECT_NE(a.out.find("{name: bert-large-002, model: bert-large, rate_rps: "), std::string::npos);
  EXPECT_NE(a.out.find("slo_ms: 250}"), std::string::npos);
  EXPECT_EQ(Tessera(args).out, a.out);
  EXPECT_NE(Tessera(args + "1").out, a.out);  // seed 31
}

TEST_F(GenCliTest, FirstLineRegeneratesTheFile) {
  Outcome a = Tessera("gen --preset lognormal-2 --services 30 --models vgg16,resnet50");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ExpectRegenerates(a.out);
  // Models outside the builtin cards, with bytes the shell would split on.
  Outcome odd = Tessera("gen --services 3 --rates normal:5,2 --models \"it's x,a b\" --gpu ''");
  ASSERT_EQ(odd.exit_code, 0) << odd.err;
  EXPECT_NE(odd.out.find("model: it's x"), std::string::npos) << odd.out;
  ExpectRegenerates(odd.out);
}

TEST_F(GenCliTest, ModelWithoutCardIsANoteNotAnError) {
  Outcome o = Tessera("gen --services 2 --rates normal:10,1 --models mymodel");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("note: model 'mymodel' has no builtin model card"), std::string::npos)
      << o.err;
}

TEST_F(GenCliTest, BadFlagsExitTwoNamingTheFlag) {
  struct Case {
    std::string args, flag;
  };
  const std::vector<Case> cases = {
      {"--rates normal:100,10", "--services"},
      {"--services 3", "--rates"},
      {"--services 3 --rates normal:abc", "--rates"},
      {"--services 3 --rates gamma:1,2", "--rates"},
      {"--services 3 --rates normal:1,2,3", "--rates"},
      {"--services 3 --rates normal:100,-5", "--rates"},
      {"--services 3 --rates lognormal:5,20", "--rates"},
      {"--services 0 --rates normal:100,10", "--services"},
      {"--services x --rates normal:100,10", "--services"},
      {"--preset normal-1 --slo-ms 0", "--slo-ms"},
      {"--preset normal-1 --models resnet50,,vgg16", "--models"},
      {"--preset normal-1 --gpu v100", "--gpu"},
      {"--preset normal-1 --seed -1", "--seed"},
      {"--preset normal-3", "--preset"},
  };
  for (const Case& c : cases) {
    const fs::path file = dir_ / "out.yaml";
    Outcome o = Tessera("gen " + c.args + " -o " + file.string());
    EXPECT_EQ(o.exit_code, 2) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.flag), std::string::npos) << c.args << "\n" << o.err;
    EXPECT_FALSE(fs::exists(file)) << c.args;
  }
}

TEST_F(GenCliTest, HelpListsPresetsAndExamples) {
  Outcome o = Tessera("gen --help");
  EXPECT_EQ(o.exit_code, 0);
  for (const char* text : {"normal-1", "lognormal-2", "Examples:", "tessera gen --preset"}) {
    EXPECT_NE(o.out.find(text), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace tessera
