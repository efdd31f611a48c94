// The MPS planners on MIG workloads: iGniter coefficients and gpu-lets'
// tables derived from a MIG GPU's profiles (mps_from_profiles.h), the
// ParvaGPU conformance figures they give, and `tessera compare` listing
// every planner, MIG and MPS, with GPUs, cost and predicted compliance.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_fixture.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/profile/mps_from_profiles.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/profile_io.h"
#include "tessera/scenario.h"
#include "test_paths.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

// A known curve and interference to recover: t_act(b, r) and, for P
// processes of r / P each, t_act (1 + alpha (P - 1) l2), l2 = 100 x / x_peak.
constexpr double kK[5] = {0.002, 9.0, 30.0, 2.0, 0.4};
constexpr double kAlpha = 0.004;

double KnownActiveMs(int b, double r) {
  return (kK[0] * b * b + kK[1] * b + kK[2]) / (r + kK[3]) + kK[4];
}

// Entries of model "known" on the A100, at every profile, batches 1..64 and
// 1..3 processes, from the curve above.
ProfileTable KnownTable() {
  const GpuModel& gpu = A100();
  const std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64};
  double peak = 0;
  for (int b : batches) peak = std::max(peak, 1000.0 * b / KnownActiveMs(b, 100));
  ProfileTable table;
  for (const char* profile : {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}) {
    const double r = 100.0 * gpu.FindProfile(profile)->sms / gpu.sms;
    for (int b : batches) {
      for (int p = 1; p <= 3; ++p) {
        const double t = KnownActiveMs(b, r / p);
        const double l2 = 100 * (1000.0 * b / t) / peak;
        const double latency = t * (1 + kAlpha * (p - 1) * l2);
        EXPECT_TRUE(table
                        .Add({.key = {"known", gpu.name, profile, b, p},
                              .throughput_rps = p * 1000.0 * b / latency,
                              .latency_ms = latency,
                              .p99_ms = std::nullopt,
                              .mem_gib = std::nullopt})
                        .ok());
      }
    }
  }
  return table;
}

TEST(MpsFromProfilesTest, RecoversAKnownCurveAndInterference) {
  Result<DerivedMps> derived = DeriveMpsFromProfiles(KnownTable(), A100());
  ASSERT_TRUE(derived.ok()) << derived.status().message();
  ASSERT_EQ(derived->fits.size(), 1u);
  const WorkloadCoefficients& w = derived->coefficients.workloads.front();
  EXPECT_EQ(derived->coefficients.hardware.gpu, "a100-80gb");
  EXPECT_DOUBLE_EQ(derived->coefficients.hardware.unit_pct, 1.85);  // 100 / 54 TPCs
  // The fit is exact on noiseless samples: its residual is the golden
  // section's, far below the 1e-4 allowed.
  EXPECT_LT(derived->fits[0].solo_rms, 1e-4);
  for (int b : {1, 3, 50}) {
    for (double r : {15.0, 50.0, 100.0}) {
      EXPECT_NEAR(w.ActiveMs(b, r) / KnownActiveMs(b, r), 1, 1e-3) << b << " " << r;
    }
  }
  // Shares of at least the smallest profiled one: 2g/2, 3g/2, 3g/3, 4g/2,
  // 4g/3, 7g/2, 7g/3 (1g/2 and 2g/3 fall below 13%), at 7 batches each.
  EXPECT_EQ(derived->fits[0].shared_points, 7 * 7);
  EXPECT_NEAR(w.alpha_cache / kAlpha, 1, 1e-2);
  EXPECT_LT(derived->fits[0].shared_rms, 1e-3);
  // gpu-lets' tables: batches 1..32 at the six partitions, and one
  // interference row per two-process entry of 7g with a batch up to 32.
  const GpuletModelTables* t = derived->gpulet.Find("known");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->latency_ms.size(), 32u * 6);
  EXPECT_NEAR(*derived->gpulet.LatencyMs("known", 4, 50), KnownActiveMs(4, 50), 1e-2);
  EXPECT_EQ(derived->gpulet.interference.size(), 6u);  // batches 1, 2, 4, 8, 16, 32
}

TEST(MpsFromProfilesTest, EveryEmbeddedA100ModelFitsWithinItsStatedError) {
  Result<DerivedMps> derived = DeriveMpsFromProfiles(DefaultProfiles(A100()), A100());
  ASSERT_TRUE(derived.ok()) << derived.status().message();
  EXPECT_EQ(derived->fits.size(), 11u);
  EXPECT_TRUE(derived->skipped.empty());
  for (const DerivedFit& f : derived->fits) {
    SCOPED_TRACE(f.model);
    // docs/igniter-planner.md ("On MIG workloads") states about 11% RMS for
    // the synthesized profiles (largest 12.2%); 15% leaves room for a
    // re-tuned synthesizer without letting a broken fit through.
    EXPECT_LT(f.solo_rms, 0.15);
    EXPECT_GE(f.alpha_cache, 0);
    EXPECT_GT(f.shared_points, 0);
  }
  EXPECT_EQ(derived->gpulet.models.size(), 11u);
}

TEST(MpsFromProfilesTest, ErrorsNameTheGpuAndTheModels) {
  Result<DerivedMps> v100 = DeriveMpsFromProfiles(DefaultProfiles(A100()), **FindGpu("v100-16gb"));
  ASSERT_FALSE(v100.ok());
  EXPECT_NE(v100.status().message().find("v100-16gb has no MIG"), std::string::npos);
  // Two profiles only: the curve's r term cannot be pinned down.
  ProfileTable thin;
  for (const char* profile : {"1g.10gb", "7g.80gb"}) {
    for (int b : {1, 2, 4, 8}) {
      ASSERT_TRUE(thin.Add({.key = {"thin", "a100-80gb", profile, b, 1},
                            .throughput_rps = 100.0 * b,
                            .latency_ms = 10.0 + b,
                            .p99_ms = std::nullopt,
                            .mem_gib = std::nullopt})
                      .ok());
    }
  }
  Result<DerivedMps> none = DeriveMpsFromProfiles(thin, A100());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("thin"), std::string::npos) << none.status().message();
  ASSERT_TRUE(thin.Merge(KnownTable()).ok());
  Result<DerivedMps> some = DeriveMpsFromProfiles(thin, A100());
  ASSERT_TRUE(some.ok()) << some.status().message();
  ASSERT_EQ(some->skipped.size(), 1u);
  EXPECT_NE(some->skipped[0].find("thin"), std::string::npos) << some->skipped[0];
  EXPECT_EQ(some->coefficients.workloads.size(), 1u);
}

// ---- Conformance: ParvaGPU's S1-S6 on its measured A100 profiles -------------

// GPUs of `planner`'s plan of scenario s<k> on the measured profiles: the MIG
// planners under ParvaGPU's artifact rule, the MPS planners on coefficients
// derived from the same profiles with half the SLO as budget (ParvaGPU
// section V-A: "the internal latency ... is set to half of the target
// latency" for every framework).
int GpusOf(const std::string& planner_name, int k, const ProfileTable& profiles,
           const DerivedMps& derived) {
  Result<Scenario> scenario =
      LoadScenarioYaml(testing::SourcePath("examples/scenarios/s" + std::to_string(k) + ".yaml"));
  EXPECT_TRUE(scenario.ok());
  Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(planner_name);
  EXPECT_TRUE(planner.ok());
  const bool mps = (*planner)->Mode() == Sharing::kMps;
  Result<Problem> problem =
      mps ? Problem::BuildMps(*scenario, {&A100(), 0, 0}, derived.coefficients, LatencyRule{},
                              std::make_shared<const GpuletTables>(derived.gpulet))
          : Problem::BuildPool(*scenario, {{&A100(), 0, 0}}, profiles, ParvaArtifactRule());
  EXPECT_TRUE(problem.ok()) << problem.status().message();
  Result<PlanReport> report = RunPlanner(**planner, *problem, PlanContext{});
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.ok() ? report->deployment.metrics.gpus : 0;
}

TEST(MpsOnMigConformanceTest, ParvaGpuSavesAgainstGpuletsAndIgniterAsItsPaperSays) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("parvagpu/prof_data");
  Result<ProfileTable> profiles = LoadProfiles(testing::SharedDataPath("parvagpu/prof_data"));
  ASSERT_TRUE(profiles.ok()) << profiles.status().message();
  Result<DerivedMps> derived = DeriveMpsFromProfiles(*profiles, A100());
  ASSERT_TRUE(derived.ok()) << derived.status().message();
  ASSERT_EQ(derived->fits.size(), 11u);

  double saving = 0;
  for (int k = 1; k <= 6; ++k) {
    const int parva = GpusOf("parva", k, *profiles, *derived);
    const int gpulet = GpusOf("gpulet", k, *profiles, *derived);
    ASSERT_GT(gpulet, 0);
    saving += 1 - static_cast<double>(parva) / gpulet;
    // ParvaGPU section V-B1: "For iGniter, while it utilizes fewer GPUs in
    // S1 and S2, ...": exact, since whole GPUs are counted.
    if (k <= 2) {
      EXPECT_LT(GpusOf("igniter", k, *profiles, *derived), parva) << "S" << k;
    }
  }
  // ParvaGPU section V-B1 (Fig. 5): "Compared to gpulet ... ParvaGPU
  // conserves an average of 46.5% ... in GPU usage" over S1-S6. Ours is
  // about 60% (S1-S6: 2/4, 3/7, 5/12, 7/17, 13/33, 16/61 GPUs). Tolerance
  // 15 points: gpu-lets' tables here come from coefficients fitted to MIG
  // profiles (about 10% RMS error), not from its own MPS profiling, and its
  // interference is one mean slowdown; and S1-S4 are 2-7 GPUs for ParvaGPU,
  // where one GPU more or less for gpu-lets moves a scenario's saving by
  // 2-12 points and the mean by up to 2 each.
  EXPECT_NEAR(saving / 6, 0.465, 0.15);
}

// ---- The CLI -------------------------------------------------------------------

class MpsOnMigCliTest : public testing::CliTest {};

TEST_F(MpsOnMigCliTest, CompareOnS6ListsEveryPlannerWithGpusCostAndCompliance) {
  const std::string s6 = testing::SourcePath("examples/scenarios/s6.yaml");
  testing::Outcome o =
      Tessera("compare --scenario " + s6 + " --repeat 1 --time-limit 1 --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("no --coeffs: the MPS planners use iGniter coefficients and gpu-lets' "
                       "tables derived from the embedded profiles of a100-80gb"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("skipped"), std::string::npos) << o.err;
  const nlohmann::json rows = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << o.out;
  const std::vector<std::string> names = BuiltinPlanners().Names();
  ASSERT_EQ(rows.size(), names.size()) << o.out;
  const double price = A100().cloud.price_per_hour;
  int mps = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json& r = rows[i];
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["planner"], names[i]);
    EXPECT_GT(r["gpus"].get<int>(), 0);
    EXPECT_TRUE(r["catalog_price"].get<bool>());
    EXPECT_NEAR(r["cost_per_hour"].get<double>(), r["gpus"].get<int>() * price, 1e-9);
    EXPECT_EQ(r["services"], 11);
    EXPECT_LE(r["slo_met"].get<int>(), 11);
    mps += r["sharing"] == "mps";
    // A MIG plan the validator accepts meets every SLO under its rule; an
    // MPS plan meets those the iGniter model does not predict it misses.
    if (r["sharing"] != "mps") {
      EXPECT_EQ(r["slo_met"], 11);
    } else {
      EXPECT_EQ(r["slo_met"].get<int>(), 11 - r["predicted_violations"].get<int>());
    }
    if (r["planner"] == "igniter") {
      EXPECT_EQ(r["slo_met"], 11);
    }
  }
  EXPECT_EQ(mps, 4);  // igniter, ffd+, gslice+, gpulet
}

TEST_F(MpsOnMigCliTest, PlanDerivesCoefficientsAndCoeffsStillOverride) {
  const std::string s1 = testing::SourcePath("examples/scenarios/s1.yaml");
  testing::Outcome o = Tessera("plan --scenario " + s1 + " --planner igniter --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("derived from the embedded profiles"), std::string::npos) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out, nullptr, false);
  EXPECT_EQ(j["sharing"], "mps");
  EXPECT_EQ(j["gpu"], "a100-80gb");
  // The plan, read back, is valid against the same derived coefficients.
  const auto plan = Write("p.json", o.out);
  testing::Outcome v = Tessera("validate --deployment " + plan.string() + " --scenario " + s1);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  // ... and simulated with them, as the note says, without a --coeffs file.
  testing::Outcome sim = Tessera("simulate --deployment " + plan.string() + " --scenario " + s1 +
                                 " --duration 2s --format json");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NE(sim.err.find("derived from the embedded profiles"), std::string::npos) << sim.err;
  const nlohmann::json report = nlohmann::json::parse(sim.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << sim.out;
  EXPECT_EQ(report["services"].size(), 6u) << sim.out;
  // --coeffs wins: the V100 coefficients know none of ParvaGPU's models
  // but ResNet-50 and VGG-19, and the derivation is not run.
  if (testing::SharedDataPresent("igniter/derived/fitted_coefficients_v100.json")) {
    testing::Outcome c =
        Tessera("plan --scenario " + s1 + " --planner igniter --coeffs " +
                testing::SharedDataPath("igniter/derived/fitted_coefficients_v100.json"));
    EXPECT_EQ(c.exit_code, 2) << c.err;
    EXPECT_NE(c.err.find("no iGniter coefficients for 'bert-large'"), std::string::npos) << c.err;
    EXPECT_EQ(c.err.find("derived"), std::string::npos) << c.err;
  }
}

}  // namespace
}  // namespace tessera
