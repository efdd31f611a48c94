// The latency rule travels with the plan: a plan made under a non-default
// rule records it in its JSON, and `validate` and `simulate` read it back and
// use it; flags that contradict it, and flags that do not apply to the
// chosen planner, are errors (exit 2) that name the flag.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_fixture.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::CliTest;
using testing::Outcome;

std::string S6() { return testing::SourcePath("examples/scenarios/s6.yaml"); }

class PlanRuleCliTest : public CliTest {
 protected:
  // S6 planned by parva under the papers' bare capacity rule, a 0.45 share of
  // the SLO and join-shortest-queue routing, as JSON.
  fs::path BarePlan() {
    const fs::path json = dir_ / "bare.json";
    Outcome o = Tessera("plan --scenario " + S6() +
                        " --planner parva --capacity-rule bare --latency-factor 0.45 "
                        "--router jsq --format json -o " +
                        json.string());
    EXPECT_EQ(o.exit_code, 0) << o.err;
    return json;
  }
};

TEST_F(PlanRuleCliTest, ThePlanRecordsItsRule) {
  const nlohmann::json plan = nlohmann::json::parse(testing::ReadAll(BarePlan()));
  const nlohmann::json& rule = plan["latency_rule"];
  EXPECT_EQ(rule["capacity"], "bare");
  EXPECT_DOUBLE_EQ(rule["factor"].get<double>(), 0.45);
  EXPECT_EQ(rule["router"], "jsq");
  EXPECT_EQ(plan["sharing"], "mig+mps");
}

// Under the default (queueing) rule the bare plan's segments count for less
// than their throughput, so some service falls short; validate without rule
// flags judges it by its own rule and accepts it.
TEST_F(PlanRuleCliTest, ValidateChecksThePlanUnderItsOwnRule) {
  const fs::path json = BarePlan();
  Outcome own = Tessera("validate --scenario " + S6() + " --deployment " + json.string());
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.out.find("capacity bare"), std::string::npos) << own.out;
  EXPECT_NE(own.out.find("router jsq"), std::string::npos) << own.out;

  // A rule flag that contradicts the recorded rule is an error, not an override.
  Outcome contradicted = Tessera("validate --scenario " + S6() + " --deployment " + json.string() +
                                 " --capacity-rule queueing");
  EXPECT_EQ(contradicted.exit_code, 2);
  EXPECT_NE(contradicted.err.find("the plan records the rule it was made under"), std::string::npos)
      << contradicted.err;

  // The same plan without its rule (JSON written before plans recorded it)
  // reads as the default rule, with a note, and fails its capacity check.
  nlohmann::ordered_json old =
      nlohmann::ordered_json::parse(testing::ReadAll(json), nullptr, false);
  old.erase("latency_rule");
  const fs::path old_json = Write("old.json", old.dump(2));
  Outcome by_default =
      Tessera("validate --scenario " + S6() + " --deployment " + old_json.string());
  EXPECT_NE(by_default.err.find("records no latency rule"), std::string::npos) << by_default.err;
  EXPECT_EQ(by_default.exit_code, 2) << by_default.out;
  EXPECT_NE(by_default.err.find("capacity at service"), std::string::npos) << by_default.err;
}

// simulate routes by the plan's router and batches within the plan's
// budget: without flags it reports exactly what the plan's own settings
// given as flags report, and differs from the default router's.
TEST_F(PlanRuleCliTest, SimulateUsesThePlansRouterAndBudget) {
  const std::string base = "simulate --scenario " + S6() + " --deployment " + BarePlan().string() +
                           " --duration 5s --format json";
  Outcome own = Tessera(base);
  ASSERT_EQ(own.exit_code, 0) << own.err;
  Outcome jsq = Tessera(base + " --router jsq");
  ASSERT_EQ(jsq.exit_code, 0) << jsq.err;
  Outcome weighted = Tessera(base + " --router weighted");
  ASSERT_EQ(weighted.exit_code, 0) << weighted.err;
  EXPECT_EQ(own.out, jsq.out);
  EXPECT_NE(own.out, weighted.out);
  // The batcher waits up to the rule's budget (0.45 x SLO here) minus the
  // batch latency: the same plan recording 0.5 batches differently.
  nlohmann::ordered_json half =
      nlohmann::ordered_json::parse(testing::ReadAll(dir_ / "bare.json"), nullptr, false);
  half["latency_rule"]["factor"] = 0.5;
  const fs::path half_json = Write("half.json", half.dump(2));
  Outcome other = Tessera("simulate --scenario " + S6() + " --deployment " + half_json.string() +
                          " --duration 5s --format json");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(own.out, other.out);
}

TEST_F(PlanRuleCliTest, PlanVerifyUsesThePlansRule) {
  Outcome o = Tessera("plan --scenario " + S6() +
                      " --planner parva --router jsq --verify --verify-duration 2s");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("router jsq"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Simulation"), std::string::npos) << o.out;
}

// Every flag that does not apply to the chosen planner is an error naming it.
TEST_F(PlanRuleCliTest, FlagsThatDoNotApplyExitTwoNamingTheFlag) {
  const std::string coeffs =
      testing::SharedDataPath("igniter/derived/fitted_coefficients_v100.json");
  const std::string twelve = testing::SourcePath("examples/scenarios/igniter-12.yaml");
  const struct {
    std::string args;
    std::string flag;
  } cases[] = {
      {"--scenario " + twelve + " --planner igniter --coeffs " + coeffs + " --capacity-rule bare",
       "--capacity-rule"},
      {"--scenario " + twelve + " --planner ffd+ --coeffs " + coeffs + " --compat parva-artifact",
       "--compat"},
      {"--scenario " + twelve + " --planner igniter --coeffs " + coeffs + " --profiles x.csv",
       "--profiles"},
      {"--scenario " + S6() + " --planner parva --coeffs " + coeffs, "--coeffs"},
      {"--scenario " + S6() + " --planner exact --price 3", "--price"},
      {"--scenario " + S6() + " --gpulet-tables t.jsonl", "--gpulet-tables"},
  };
  for (const auto& c : cases) {
    Outcome o = Tessera("plan " + c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.flag + " does not apply to planner"), std::string::npos)
        << c.args << "\n"
        << o.err;
  }
  Outcome csv = Tessera("plan --scenario " + twelve + " --coeffs " + coeffs + " --format csv");
  EXPECT_EQ(csv.exit_code, 2) << csv.err;
  EXPECT_NE(csv.err.find("--format csv"), std::string::npos) << csv.err;
  Outcome compare = Tessera("compare --scenario " + S6() + " --price 3");
  EXPECT_EQ(compare.exit_code, 2) << compare.err;
  EXPECT_NE(compare.err.find("--price does not apply"), std::string::npos) << compare.err;
}

// The default rule is pooled behind leastconn (HAProxy's weighted
// leastconn, what deploy ships); --router weighted or first alone plans
// under the per-process queueing rule, --router jsq keeps the pooled rule;
// pooled with a router that does not pool, a rate margin or a capacity
// quantile out of range, and a quantile for the bare rule (which sizes no
// queue) are errors naming the flag; the margin and the quantile are
// recorded.
TEST_F(PlanRuleCliTest, PooledRuleDefaultsRouterAndMargin) {
  const auto rule_of = [&](const std::string& flags) {
    const fs::path json = dir_ / "p.json";
    Outcome o = Tessera("plan --scenario " + S6() + " --planner parva --format json -o " +
                        json.string() + " " + flags);
    EXPECT_EQ(o.exit_code, 0) << flags << "\n" << o.err;
    return nlohmann::json::parse(testing::ReadAll(json))["latency_rule"];
  };
  const nlohmann::json pooled = rule_of("");
  EXPECT_EQ(pooled["capacity"], "pooled");
  EXPECT_EQ(pooled["router"], "leastconn");
  EXPECT_FALSE(pooled.contains("rate_margin"));
  EXPECT_EQ(rule_of("--router jsq")["capacity"], "pooled");
  const nlohmann::json first = rule_of("--router first");
  EXPECT_EQ(first["capacity"], "queueing");
  EXPECT_EQ(first["router"], "first");
  const nlohmann::json weighted = rule_of("--router weighted");
  EXPECT_EQ(weighted["capacity"], "queueing");
  EXPECT_EQ(weighted["router"], "weighted");
  EXPECT_DOUBLE_EQ(rule_of("--rate-margin 0.05")["rate_margin"].get<double>(), 0.05);
  EXPECT_EQ(rule_of("--capacity-rule pooled:0")["capacity"], "pooled:0");
  EXPECT_DOUBLE_EQ(pooled["headroom_quantile"].get<double>(), 0.995);
  EXPECT_DOUBLE_EQ(rule_of("--capacity-quantile 0.999")["headroom_quantile"].get<double>(), 0.999);

  Outcome random = Tessera("plan --scenario " + S6() + " --capacity-rule pooled --router weighted");
  EXPECT_EQ(random.exit_code, 2) << random.err;
  EXPECT_NE(random.err.find("--router"), std::string::npos) << random.err;
  Outcome unknown = Tessera("plan --scenario " + S6() + " --router fastest");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("leastconn"), std::string::npos) << unknown.err;
  Outcome margin = Tessera("plan --scenario " + S6() + " --rate-margin 2");
  EXPECT_EQ(margin.exit_code, 2) << margin.err;
  EXPECT_NE(margin.err.find("--rate-margin"), std::string::npos) << margin.err;
  for (const std::string flags :
       {"--capacity-quantile 0.5", "--capacity-quantile 1", "--capacity-quantile nan",
        "--capacity-rule bare --capacity-quantile 0.999",
        "--compat parva-artifact --capacity-quantile 0.999"}) {
    Outcome quantile = Tessera("plan --scenario " + S6() + " " + flags);
    EXPECT_EQ(quantile.exit_code, 2) << flags << "\n" << quantile.err;
    EXPECT_NE(quantile.err.find("--capacity-quantile"), std::string::npos) << quantile.err;
  }
}

}  // namespace
}  // namespace tessera
