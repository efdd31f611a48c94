// End-to-end tests of the MPS planners from the CLI: `tessera plan` and
// `tessera compare` with --coeffs on the twelve iGniter workloads (needs
// ../shared/data/igniter), and their errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_fixture.h"

namespace tessera {
namespace {

using testing::Outcome;

class MpsCliTest : public testing::CliTest {
 protected:
  static std::string Coeffs() {
    return testing::SharedDataPath("igniter/derived/fitted_coefficients_v100.json");
  }
  static std::string Tables() {
    return testing::SharedDataPath("igniter/i-Gniter/Profile/tools/gpulet.config");
  }
  static std::string Twelve() { return testing::SourcePath("examples/scenarios/igniter-12.yaml"); }
};

TEST_F(MpsCliTest, PlansTheTwelveWorkloadsOnSixV100s) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("igniter/derived/fitted_coefficients_v100.json");
  Outcome r = Tessera("plan --scenario " + Twelve() + " --coeffs " + Coeffs() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["planner"], "igniter");
  EXPECT_EQ(j["sharing"], "mps");
  EXPECT_DOUBLE_EQ(j["pool"][0]["price_per_hour"].get<double>(), 3.06);  // one p3.2xlarge
  EXPECT_EQ(j["latency_rule"]["factor"], 0.5);
  EXPECT_EQ(j["metrics"]["gpus"], 6);
  EXPECT_DOUBLE_EQ(j["metrics"]["cost_per_hour"].get<double>(), 18.36);
  EXPECT_EQ(j["metrics"]["predicted_violations"], 0);
}

TEST_F(MpsCliTest, PriceFromTheFlagAndVerifySimulates) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("igniter/derived/fitted_coefficients_v100.json");
  Outcome r = Tessera("plan --scenario " + Twelve() + " --coeffs " + Coeffs() +
                      " --planner ffd+ --price 1 --verify --verify-duration 2s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Deployment: ffd+ on v100-16gb | 6 GPUs shared whole through MPS"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cost per hour              6.00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Simulation: 2 s simulated"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the iGniter model predicts"), std::string::npos) << r.err;
}

TEST_F(MpsCliTest, CompareShowsTheFourPlannersWithCostAndViolations) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("igniter/i-Gniter/Profile/tools/gpulet.config");
  Outcome r = Tessera("compare --scenario " + Twelve() + " --coeffs " + Coeffs() +
                      " --gpulet-tables " + Tables() + " --repeat 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 4u);
  for (const nlohmann::json& row : rows) {
    SCOPED_TRACE(row.dump());
    EXPECT_TRUE(row["valid"].get<bool>());
    EXPECT_GT(row["cost_per_hour"].get<double>(), 0);
    if (row["planner"] == "igniter") {
      EXPECT_EQ(row["predicted_violations"], 0);
    }
  }
  Outcome table =
      Tessera("compare --scenario " + Twelve() + " --coeffs " + Coeffs() + " --repeat 1");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.err.find("skipped gpulet: needs gpu-lets' profiling tables (--gpulet-tables"),
            std::string::npos)
      << table.err;
  EXPECT_NE(table.out.find("cost/h"), std::string::npos);
}

TEST_F(MpsCliTest, BadInputsExitTwoNamingWhatIsWrong) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("igniter/derived/fitted_coefficients_v100.json");
  Outcome no_coeffs = Tessera("plan --scenario " + Twelve() + " --planner igniter");
  EXPECT_EQ(no_coeffs.exit_code, 2);
  EXPECT_NE(no_coeffs.err.find("--coeffs FILE"), std::string::npos) << no_coeffs.err;
  const auto s =
      Write("s.yaml", "services:\n  - {name: a, model: bert-large, rate_rps: 5, slo_ms: 50}\n");
  Outcome unknown =
      Tessera("plan --scenario " + s.string() + " --coeffs " + Coeffs() + " --gpu v100-16gb");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("s.yaml:2: field 'model': no iGniter coefficients for 'bert-large'"),
            std::string::npos)
      << unknown.err;
  Outcome bad_gpu = Tessera("plan --scenario " + Twelve() + " --coeffs " + Coeffs() + " --gpu x1");
  EXPECT_EQ(bad_gpu.exit_code, 2);
  EXPECT_NE(bad_gpu.err.find("--gpu: unknown GPU 'x1'"), std::string::npos) << bad_gpu.err;
  Outcome gpulet =
      Tessera("plan --scenario " + Twelve() + " --coeffs " + Coeffs() + " --planner gpulet");
  EXPECT_EQ(gpulet.exit_code, 2);
  EXPECT_NE(gpulet.err.find("--gpulet-tables"), std::string::npos) << gpulet.err;
}

TEST_F(MpsCliTest, AnImpossibleSloIsInfeasibleWithExitThree) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("igniter/derived/fitted_coefficients_v100.json");
  const auto s = Write("s.yaml",
                       "gpu: v100-16gb\nservices:\n"
                       "  - {name: fast, model: ssd, rate_rps: 5, slo_ms: 4}\n"
                       "  - {name: ok, model: alexnet, rate_rps: 100, slo_ms: 20}\n");
  Outcome r = Tessera("plan --scenario " + s.string() + " --coeffs " + Coeffs());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("service fast is infeasible"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("ok "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tessera
