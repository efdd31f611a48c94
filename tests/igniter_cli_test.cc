// End-to-end tests of `tessera igniter fit`: the bundled example fits into a
// coefficients file the planners read, and bad samples exit 2 without
// leaving any output behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_fixture.h"
#include "tessera/igniter_model.h"

namespace tessera {
namespace {

using testing::Outcome;
using testing::ReadAll;
namespace fs = std::filesystem;

class IgniterCliTest : public testing::CliTest {
 protected:
  // The files of the test directory, but the captured stdout and stderr.
  int OutputFiles() {
    int n = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      n += name != "stdout" && name != "stderr" && !name.ends_with(".csv");
    }
    return n;
  }
};

const std::string kExample = testing::SourcePath("examples/igniter/samples-example.csv");

TEST_F(IgniterCliTest, FitsTheExampleIntoCoefficientsThePlannersRead) {
  const fs::path out = dir_ / "mine.json";
  Outcome o = Tessera("igniter fit " + kExample + " -o " + out.string() + " --gpu V100-16GB");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_TRUE(
      o.out.starts_with("resnet50: 48 samples (16 active_ms, 16 power_w, 16 l2_pct), "
                        "active-time RMS relative error 0.0"))
      << o.out;
  Result<MpsCoefficients> c = ParseMpsCoefficientsJson(ReadAll(out), out.string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->hardware.gpu, "v100-16gb");
  ASSERT_NE(c->Find("resnet50"), nullptr);
  EXPECT_NEAR(c->Find("resnet50")->k[1], 58.2645, 0.01);
  EXPECT_EQ(OutputFiles(), 1);  // no temporary file left
}

TEST_F(IgniterCliTest, BaseSuppliesWhatTheSamplesLack) {
  const fs::path base = dir_ / "base.json";
  ASSERT_EQ(Tessera("igniter fit " + kExample + " -o " + base.string()).exit_code, 0);
  const fs::path samples = Write("more.csv",
                                 "model,quantity,batch,resource_pct,value\n"
                                 "resnet50,kernels,,,81\nhardware,P,,,250\n");
  const fs::path out = dir_ / "merged.json";
  Outcome o = Tessera("igniter fit " + samples.string() + " --base " + base.string() + " -o " +
                      out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("resnet50: 0 samples (0 active_ms, 0 power_w, 0 l2_pct), k1..k5 kept"),
            std::string::npos)
      << o.out;
  Result<MpsCoefficients> c = ParseMpsCoefficientsJson(ReadAll(out), out.string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->Find("resnet50")->kernels, 81);
  EXPECT_EQ(c->hardware.power_cap_w, 250);
  EXPECT_EQ(c->hardware.max_frequency_mhz, 1530);
}

TEST_F(IgniterCliTest, BadSamplesExitTwoWithoutOutput) {
  const fs::path out = dir_ / "out.json";
  const fs::path bad = Write("bad.csv",
                             "model,quantity,batch,resource_pct,value\n"
                             "resnet50,active_ms,1,10,7.5\nresnet50,active_ms,2,10,fast\n");
  Outcome o = Tessera("igniter fit " + bad.string() + " -o " + out.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "tessera: error: " + bad.string() +
                       ":3: field 'value': expected a number, got 'fast'\n");
  EXPECT_EQ(o.out, "");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(OutputFiles(), 0);

  // Curves without the constants: the message says where to give them.
  const fs::path bare = Write("bare.csv",
                              "model,quantity,batch,resource_pct,value\n"
                              "hardware,F,,,1530\n");
  o = Tessera("igniter fit " + bare.string() + " -o " + out.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("hardware: missing P, p_idle"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--base"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(out));

  o = Tessera("igniter fit " + (dir_ / "absent.csv").string() + " -o " + out.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(IgniterCliTest, HelpTeachesTheFormatAndTheModel) {
  Outcome o = Tessera("igniter fit --help");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("model,quantity,batch,resource_pct,value"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("t_act(b, r) = (k1 b^2 + k2 b + k3) / (r + k4) + k5"), std::string::npos);
  EXPECT_NE(o.out.find("resnet50,active_ms,1,10,"), std::string::npos);
  EXPECT_NE(o.out.find("hardware,F,,,1530"), std::string::npos);
}

}  // namespace
}  // namespace tessera
