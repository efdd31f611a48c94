// End-to-end tests of `tessera igniter fit`: the bundled example fits into a
// coefficients file the planners read, and bad samples exit 2 without
// leaving any output behind; `igniter synth` and `igniter choose` on the T4
// and V100 of iGniter's 5.3 (conformance with Fig. 20).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_fixture.h"
#include "tessera/profile/igniter_model.h"
#include "test_paths.h"

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

constexpr char kV100[] = "igniter/derived/fitted_coefficients_v100.json";

// The T4 of iGniter's 5.3 from the V100's coefficients (igniter_synth.h):
// clock and PCIe from the artifact's PCIeInfo.txt, 70 W cap.
std::string SynthT4Args(const fs::path& out) {
  return "igniter synth --from " + testing::SharedDataPath(kV100) +
         " --from-gpu v100-16gb --gpu t4-16gb --max-clock-mhz 1590 --power-cap-w 70 "
         "--pcie-bytes-per-ms 5882000 -o " +
         out.string();
}

TEST_F(IgniterCliTest, SynthWritesT4CoefficientsThePlannersRead) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kV100);
  const fs::path t4 = dir_ / "t4.json";
  Outcome o = Tessera(SynthT4Args(t4));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("v100-16gb -> t4-16gb: compute ratio C = 1.9245"), std::string::npos)
      << o.out;
  Result<MpsCoefficients> c = ParseMpsCoefficientsJson(ReadAll(t4), t4.string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->hardware.gpu, "t4-16gb");
  EXPECT_EQ(c->hardware.unit_pct, 5);
  EXPECT_EQ(c->hardware.power_cap_w, 70);
  EXPECT_EQ(c->workloads.size(), 4u);
  EXPECT_EQ(OutputFiles(), 1);
}

TEST_F(IgniterCliTest, SynthErrorsNameTheFlag) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kV100);
  const fs::path out = dir_ / "t4.json";
  const std::string from = " --from " + testing::SharedDataPath(kV100);
  // The bundled V100 file names no GPU: --from-gpu is needed.
  Outcome o = Tessera("igniter synth" + from +
                      " --gpu t4-16gb --max-clock-mhz 1590 --power-cap-w 70 -o " + out.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--from-gpu"), std::string::npos) << o.err;
  o = Tessera("igniter synth" + from +
              " --from-gpu v100-16gb --gpu t5 --max-clock-mhz 1590 --power-cap-w 70 -o " +
              out.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--gpu"), std::string::npos) << o.err;
  o = Tessera("igniter synth" + from +
              " --from-gpu v100-16gb --gpu t4-16gb --max-clock-mhz 1590 --power-cap-w 70 "
              "--idle-power-w 80 -o " +
              out.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("idle power of t4-16gb"), std::string::npos) << o.err;
  o = Tessera("igniter synth" + from +
              " --from-gpu v100-16gb --gpu t4-16gb --max-clock-mhz -5 --power-cap-w 70 -o " +
              out.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--max-clock-mhz"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(out));
}

// Conformance with iGniter's Fig. 20 (TPDS 2023, 5.3): the twelve workloads
// need 15 g4dn.xlarge T4s ($7.89/h) against 6 p3.2xlarge V100s ($18.36/h),
// and iGniter keeps the T4s.
TEST_F(IgniterCliTest, ChoosesTheT4sForTheTwelveWorkloadsAsFig20) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kV100);
  const fs::path t4 = dir_ / "t4.json";
  ASSERT_EQ(Tessera(SynthT4Args(t4)).exit_code, 0);
  const fs::path chosen = dir_ / "chosen.json";
  Outcome o = Tessera("igniter choose --scenario " +
                      testing::SourcePath("examples/scenarios/igniter-12.yaml") + " --coeffs " +
                      testing::SharedDataPath(kV100) + " --coeffs " + t4.string() +
                      " --format json -o " + chosen.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["types"].size(), 2u);
  const nlohmann::json& v100 = j["types"][0];
  const nlohmann::json& t4_plan = j["types"][1];
  // The V100's coefficients are the artifact's own fit: exactly the paper's.
  EXPECT_EQ(v100["gpu"], "v100-16gb");
  EXPECT_EQ(v100["gpus"], 6);
  EXPECT_NEAR(v100["cost_per_hour"].get<double>(), 18.36, 1e-9);
  EXPECT_EQ(v100["meets_every_slo"], true);
  // The T4's are synthesized from the V100's (no T4 profile exists), so the
  // count is a prediction of a model nobody fitted on a T4: within 2 GPUs of
  // the paper's 15 (the V100 -> T4 ratio of the method is one number for
  // every model, where the real slowdown differs by model and batch; 2 GPUs
  // is about the split of one oversized workload). We get 17.
  EXPECT_EQ(t4_plan["gpu"], "t4-16gb");
  EXPECT_NEAR(t4_plan["gpus"].get<int>(), 15, 2);
  EXPECT_NEAR(t4_plan["cost_per_hour"].get<double>(), 7.89, 2 * 0.526 + 1e-9);
  EXPECT_EQ(t4_plan["meets_every_slo"], true);
  EXPECT_EQ(t4_plan["infeasible"], 0);
  // The cheaper type is kept, as the paper does.
  EXPECT_LT(t4_plan["cost_per_hour"].get<double>(), v100["cost_per_hour"].get<double>());
  EXPECT_EQ(j["chosen"], "t4-16gb");
  // -o holds the chosen plan, which `tessera validate` reads.
  const nlohmann::json plan = nlohmann::json::parse(ReadAll(chosen));
  EXPECT_EQ(plan["gpu"], "t4-16gb");
  EXPECT_EQ(plan["metrics"]["gpus"], t4_plan["gpus"]);
  // As Fig. 20: W7, W8, W10 and W12 each need 2 or more T4s.
  std::map<std::string, int> gpus_of;
  for (const nlohmann::json& gpu : plan["gpus"]) {
    for (const nlohmann::json& p : gpu["processes"]) ++gpus_of[p["service"].get<std::string>()];
  }
  for (const char* w : {"W7", "W8", "W10", "W12"}) EXPECT_GE(gpus_of[w], 2) << w;

  // The table shows both types side by side and marks the choice.
  o = Tessera("igniter choose --scenario " +
              testing::SourcePath("examples/scenarios/igniter-12.yaml") + " --coeffs " +
              testing::SharedDataPath(kV100) + " --coeffs " + t4.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("v100-16gb    p3.2xlarge        3.060     6    18.36"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("<- chosen"), std::string::npos);
  EXPECT_NE(o.out.find("chosen: " + std::to_string(t4_plan["gpus"].get<int>()) +
                       " x t4-16gb (g4dn.xlarge)"),
            std::string::npos)
      << o.out;
}

// The choice follows the prices: with the scenario pool's prices ($2.00 a
// V100, $0.90 a T4) the 6 V100s ($12.00) beat the T4s, whichever comes first.
TEST_F(IgniterCliTest, ChooseKeepsTheCheapestByThePoolsPrices) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kV100);
  const fs::path t4 = dir_ / "t4.json";
  ASSERT_EQ(Tessera(SynthT4Args(t4)).exit_code, 0);
  std::string services = ReadAll(testing::SourcePath("examples/scenarios/igniter-12.yaml"));
  services = services.substr(services.find("services:"));
  const fs::path pool = Write("pool.yaml",
                              "pool: [{gpu: v100-16gb, price_per_hour: 2.0}, "
                              "{gpu: t4-16gb, price_per_hour: 0.9}]\n" +
                                  services);
  // The bundled V100 file names no GPU, and this scenario has a pool: name it.
  nlohmann::json v100 = nlohmann::json::parse(ReadAll(testing::SharedDataPath(kV100)));
  v100["hardware"]["gpu"] = "v100-16gb";
  const fs::path v100_file = Write("v100.json", v100.dump());
  for (const std::string& order :
       {" --coeffs " + v100_file.string() + " --coeffs " + t4.string(),
        " --coeffs " + t4.string() + " --coeffs " + v100_file.string()}) {
    Outcome o = Tessera("igniter choose --scenario " + pool.string() + order + " --format json");
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const nlohmann::json j = nlohmann::json::parse(o.out);
    EXPECT_EQ(j["chosen"], "v100-16gb") << o.out;
    for (const nlohmann::json& type : j["types"]) {
      const double want = type["gpu"] == "v100-16gb" ? 2.0 : 0.9;
      EXPECT_NEAR(type["price_per_hour"].get<double>(), want, 1e-12) << type.dump();
      if (type["gpu"] == "v100-16gb") {
        EXPECT_NEAR(type["cost_per_hour"].get<double>(), 12.0, 1e-9);
      }
    }
  }
}

TEST_F(IgniterCliTest, ChooseErrors) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kV100);
  const std::string twelve =
      " --scenario " + testing::SourcePath("examples/scenarios/igniter-12.yaml");
  const std::string v100 = " --coeffs " + testing::SharedDataPath(kV100);
  Outcome o = Tessera("igniter choose" + twelve + v100 + v100);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("give one file per GPU type"), std::string::npos) << o.err;
  o = Tessera("igniter choose" + twelve + v100 + " --planner parva");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--planner: parva is a MIG planner"), std::string::npos) << o.err;
  o = Tessera("igniter choose" + twelve + " --coeffs " + (dir_ / "absent.json").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--coeffs"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace tessera
