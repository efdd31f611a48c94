// `tessera replay` end to end: a small trace in the Alibaba format through
// every output format, and errors that name the file, line and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_fixture.h"
#include "svg_check.h"
#include "tessera/online/online_placer.h"

namespace tessera {
namespace {

class ReplayCliTest : public testing::CliTest {
 protected:
  // How many policies --compare and --sweep replay: every built-in one.
  static size_t Policies() { return BuiltinPlacers().Names().size(); }

  // Two hosts with one GPU each and four pods: a whole-GPU pod, two small
  // ones and a CPU-only one (mapped to the smallest profile).
  std::string TraceFlags() {
    const auto nodes = Write("nodes.csv",
                             "sn,cpu_milli,memory_mib,gpu,model\n"
                             "n0,32000,131072,1,T4\n"
                             "n1,32000,131072,1,V100M16\n");
    const auto pods =
        Write("pods.csv",
              "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time\n"
              "p0,4000,8192,1,1000,,LS,Running,0,7200,0\n"
              "p1,4000,8192,1,470,,LS,Running,600,9000,600\n"
              "p2,4000,8192,1,230,,BE,Running,1200,3000,1200\n"
              "p3,2000,4096,0,0,,BE,Running,1800,5000,1800\n");
    return "replay --nodes " + nodes.string() + " --pods " + pods.string();
  }
};

TEST_F(ReplayCliTest, HelpTeachesWithExamples) {
  const testing::Outcome o = Tessera("replay --help");
  EXPECT_EQ(o.exit_code, 0);
  for (const char* text : {"Example", "--compare", "--gpus-per-host", "--lifetime", "grmu"}) {
    EXPECT_NE(o.out.find(text), std::string::npos) << text;
  }
}

TEST_F(ReplayCliTest, TablePrintsTheTraceCountsAndThePolicy) {
  const testing::Outcome o = Tessera(TraceFlags());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("replaying 4 VMs on 2 hosts with 2 a100-40gb GPUs"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("grmu"), std::string::npos);
  EXPECT_NE(o.out.find("7g.40gb"), std::string::npos);
}

TEST_F(ReplayCliTest, CompareAsJsonIsOneRowPerPolicy) {
  const testing::Outcome o = Tessera(TraceFlags() + " --compare --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json rows = nlohmann::json::parse(o.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), Policies());
  for (const auto& row : rows) {
    for (const char* key :
         {"policy", "requests", "accepted", "acceptance", "active_hw_auc", "migrations"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    EXPECT_EQ(row["requests"], 4);
    // 7g.40gb fills one GPU, 4g.20gb + 3g.20gb the other: no room is left
    // for the CPU-only pod's 1g.5gb while they run, whatever the policy.
    EXPECT_EQ(row["accepted"], 3);
  }
  EXPECT_NE(o.err.find("replaying 4 VMs"), std::string::npos);  // the summary, off stdout
}

TEST_F(ReplayCliTest, CsvAndSvgCarryTheHourlySeries) {
  const auto svg = dir_ / "replay.svg";
  const testing::Outcome o =
      Tessera(TraceFlags() + " --compare --format csv --svg " + svg.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("policy,hour,", 0), 0u);
  // Every policy x 3 hours (0 s to the last departure at 9,000 s) + header.
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'),
            static_cast<std::ptrdiff_t>(3 * Policies() + 1));
  EXPECT_EQ(testing::ReadAll(svg).rfind("<svg", 0), 0u);
}

TEST_F(ReplayCliTest, StressKnobsShapeTheCluster) {
  const testing::Outcome o =
      Tessera(TraceFlags() + " --hosts 1 --gpus-per-host 1 --lifetime none --policy ff");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("replaying 4 VMs on 1 hosts with 1 a100-40gb GPUs"), std::string::npos)
      << o.out;
}

TEST_F(ReplayCliTest, BadInputExitsTwoNamingTheProblem) {
  struct Case {
    std::string args, expected;
  };
  const std::string trace = TraceFlags();
  const auto bad_pods = Write("bad.csv",
                              "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,"
                              "deletion_time\n"
                              "p0,4000,8192,1,lots,0,10\n");
  const std::vector<Case> cases = {
      {trace + " --policy worst", "unknown policy 'worst'"},
      {trace + " --lifetime forever", "--lifetime"},
      {trace + " --consolidate-every soon", "--consolidate-every"},
      {trace + " --policy fair --fair-factor 0", "--fair-factor"},
      {trace + " --fair-factor 1.5", "--fair-factor"},
      {trace + " --gpu a200", "--gpu"},
      {trace + " --sweep cores=1,2", "unknown knob 'cores'"},
      {trace + " --sweep gpus-per-host", "KNOB=V1,V2"},
      {trace + " --sweep gpus-per-host=1,0", "--sweep gpus-per-host"},
      {trace + " --sweep gpus-per-host=1,,2", "empty value"},
      {trace + " --sweep lifetime=forever", "--sweep lifetime"},
      {trace + " --sweep arrival-rate=-1", "--sweep arrival-rate"},
      {trace + " --sweep gpus-per-host=1,2 --gpus-per-host 2", "--gpus-per-host"},
      {trace + " --sweep lifetime=none --lifetime none", "--lifetime"},
      {trace + " --sweep gpus-per-host=1 --format json", "--format json"},
      {trace + " --sweep heavy-share=0.2,1.5", "--sweep heavy-share"},
      {trace + " --sweep heavy-share=0.2 --heavy-share 0.3", "--heavy-share"},
      {"replay --nodes " + (dir_ / "nodes.csv").string() + " --pods " + bad_pods.string(),
       "bad.csv:2: field 'gpu_milli'"},
      {"replay --nodes " + (dir_ / "missing.csv").string() + " --pods " + bad_pods.string(),
       "missing.csv"},
  };
  for (const Case& c : cases) {
    const testing::Outcome o = Tessera(c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args;
    EXPECT_NE(o.err.find(c.expected), std::string::npos) << c.args << "\n" << o.err;
  }
}

TEST_F(ReplayCliTest, OptimumReportsEveryPolicysDistance) {
  const testing::Outcome table = Tessera(TraceFlags() + " --compare --optimum");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Offline optimum"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Distance to the optimum"), std::string::npos) << table.out;
  const testing::Outcome o = Tessera(TraceFlags() + " --compare --optimum --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json rows = nlohmann::json::parse(o.out);
  ASSERT_EQ(rows.size(), Policies() + 1);  // every policy, then the optimum
  const nlohmann::json& optimum = rows.back();
  EXPECT_EQ(optimum["policy"], "optimum");
  EXPECT_TRUE(optimum["acceptance_proven"].get<bool>());
  // Two GPUs: 7g.40gb on one, 4g.20gb + 3g.20gb on the other; the CPU-only
  // pod's 1g.5gb never fits beside them (their lifetimes cover its own).
  EXPECT_EQ(optimum["accepted"], 3);
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["accepted_gap"], 0) << rows[i]["policy"];
  }
}

TEST_F(ReplayCliTest, SweepWritesOneCsvRowPerValueAndPolicyAndAChart) {
  const auto svg = dir_ / "sweep.svg";
  const auto csv = dir_ / "sweep.csv";
  const testing::Outcome o = Tessera(TraceFlags() + " --sweep gpus-per-host=1,2 --optimum --svg " +
                                     svg.string() + " -o " + csv.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("sweep gpus-per-host=2 (2/2)"), std::string::npos) << o.err;
  const std::string text = testing::ReadAll(csv);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "knob,value,policy,hosts,gpus,requests,accepted,acceptance,active_hw_auc,"
            "mean_active_hw_rate,intra_migrations,inter_migrations,migration_share,"
            "optimum_accepted");
  // 2 values x (every policy + the optimum) + the header.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
            static_cast<std::ptrdiff_t>(2 * (Policies() + 1) + 1));
  EXPECT_NE(text.find("gpus-per-host,2,optimum,2,4,4,4,"), std::string::npos) << text;
  EXPECT_NE(text.find("gpus-per-host,1,ff,2,2,4,3,"), std::string::npos) << text;
  const std::string chart = testing::ReadAll(svg);
  EXPECT_TRUE(WellFormedXml(chart));
  EXPECT_EQ(Count(chart, "<polyline"), 2 * Policies() + 1);  // two charts, the optimum once
  EXPECT_NE(chart.find("optimum (ILP)"), std::string::npos);
}

}  // namespace
}  // namespace tessera
