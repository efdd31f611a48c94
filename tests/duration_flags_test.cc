// Every time flag has a floor and a ceiling, checked once at the edge (issue
// 17, class 5): values that used to loop forever (a period of 1e-300 s),
// overflow (a limit of 1e300 s) or fall back to the default (nan) exit 2
// naming the flag and the range; units are read the same way everywhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_fixture.h"

namespace tessera {
namespace {

class DurationFlagsTest : public testing::CliTest {
 protected:
  std::string Scenario(const char* name) {
    return testing::SourcePath(std::string("examples/scenarios/") + name);
  }

  // S1 planned by parva, as JSON, for simulate.
  std::string PlanS1() {
    const std::string plan = (dir_ / "s1.json").string();
    const testing::Outcome o = Tessera("plan --planner parva --scenario " + Scenario("s1.yaml") +
                                       " --format json -o " + plan);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    return "simulate --scenario " + Scenario("s1.yaml") + " --deployment " + plan;
  }

  std::string Replay() {
    const auto nodes =
        Write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,1,T4\n");
    const auto pods =
        Write("pods.csv",
              "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time\n"
              "p0,4000,8192,1,1000,,LS,Running,0,7200,0\n"
              "p1,4000,8192,1,470,,LS,Running,600,9000,600\n");
    return "replay --nodes " + nodes.string() + " --pods " + pods.string();
  }

  struct Case {
    std::string args;
    std::vector<std::string> says;  // the flag, the range and the text given
  };

  void ExpectRejected(const std::vector<Case>& cases) {
    for (const Case& c : cases) {
      const testing::Outcome o = Tessera(c.args);
      EXPECT_EQ(o.exit_code, 2) << c.args << "\n" << o.err;
      EXPECT_TRUE(o.out.empty()) << c.args;
      for (const std::string& text : c.says) {
        EXPECT_NE(o.err.find(text), std::string::npos) << c.args << "\nwants: " << text << "\n"
                                                       << o.err;
      }
    }
  }
};

TEST_F(DurationFlagsTest, TimeLimitIsBetweenAMillisecondAndADay) {
  const std::string plan = "plan --planner parva --scenario " + Scenario("s1.yaml");
  ExpectRejected({
      {plan + " --time-limit nan", {"--time-limit", "from 1 ms to 1 day", "'nan'"}},
      {plan + " --time-limit inf", {"--time-limit", "'inf'"}},
      {plan + " --time-limit 1e300", {"--time-limit", "'1e300'"}},
      {plan + " --time-limit 2d", {"--time-limit", "'2d'"}},
      {plan + " --time-limit 0", {"--time-limit"}},
      {plan + " --time-limit 1e-9", {"--time-limit"}},
      {"compare --scenario " + Scenario("s1.yaml") + " --time-limit nan",
       {"--time-limit", "'nan'"}},
  });
  for (const char* good : {"--time-limit 30", "--time-limit 2m", "--time-limit 500ms"}) {
    const testing::Outcome o = Tessera(plan + " " + good);
    EXPECT_EQ(o.exit_code, 0) << good << ": " << o.err;
  }
}

TEST_F(DurationFlagsTest, VerifyDurationHasACeilingAndARequestBudget) {
  const std::string plan = "plan --planner parva --scenario " + Scenario("s1.yaml") + " --verify";
  ExpectRejected({
      {plan + " --verify-duration 1e9", {"--verify-duration", "from 1 ms to 1 day", "'1e9'"}},
      {plan + " --verify-duration nan", {"--verify-duration", "'nan'"}},
      {plan + " --verify-duration 0.0000001", {"--verify-duration"}},
      // Within a day, but more requests than are ever simulated: S1's 2,692
      // requests/s x 50 copies x 1 day is 1.16e10.
      {plan + " --replicate 50 --verify-duration 1d",
       {"--verify-duration", "requests", "10,000,000,000"}},
  });
}

TEST_F(DurationFlagsTest, SimulateBurstAndDelayFlagsHaveFloorsAndCeilings) {
  const std::string simulate = PlanS1();
  const std::string bursty = simulate + " --arrivals bursty";
  ExpectRejected({
      {bursty + " --burst-on-s 1e-300", {"--burst-on-s", "from 1 ms to 1 day", "'1e-300'"}},
      {bursty + " --burst-on-s nan", {"--burst-on-s", "'nan'"}},
      {bursty + " --burst-on-s 1e9", {"--burst-on-s", "'1e9'"}},
      {bursty + " --burst-on-share 1e-300", {"--burst-on-share", "[0.001, 1]", "'1e-300'"}},
      {bursty + " --burst-on-share nan", {"--burst-on-share", "'nan'"}},
      {simulate + " --duration 1e9", {"--duration", "from 1 ms to 1 day", "'1e9'"}},
      {simulate + " --duration inf", {"--duration", "'inf'"}},
      {simulate + " --replicate 50 --duration 1d", {"--duration", "requests"}},
      {simulate + " --max-queue-delay-ms 1e300", {"--max-queue-delay-ms", "'1e300'"}},
      {simulate + " --max-queue-delay-ms nan", {"--max-queue-delay-ms", "'nan'"}},
      {simulate + " --drop-after-ms inf", {"--drop-after-ms", "from 0 to 1 day", "'inf'"}},
  });
  for (const char* good : {" --arrivals bursty --burst-on-s 500ms --burst-on-share 0.25",
                           " --drop-after-ms 2s", " --max-queue-delay-ms 0"}) {
    const testing::Outcome o = Tessera(simulate + " --duration 2s" + good);
    EXPECT_EQ(o.exit_code, 0) << good << ": " << o.err;
  }
}

// Without --duration a trace is replayed to its last request: a request at
// 1e7 s would simulate four months; the run asks for --duration instead.
TEST_F(DurationFlagsTest, ATraceLongerThanADayNeedsADuration) {
  const std::string simulate = PlanS1();
  std::string trace = "service,time_s\n";
  for (const char* s : {"bert", "densenet121", "inceptionv3", "mobilenetv2", "resnet50", "vgg19"}) {
    trace += std::string(s) + ",1\n";
  }
  const auto path = Write("trace.csv", trace + "bert,1e7\n");
  ExpectRejected({{simulate + " --arrivals trace:" + path.string(),
                   {"trace.csv", "1e+07 s", "past 1 day", "--duration"}}});
  const testing::Outcome o =
      Tessera(simulate + " --arrivals trace:" + path.string() + " --duration 10s");
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

TEST_F(DurationFlagsTest, GslicePeriodHasAFloorAndACountLimit) {
  const std::string gslice = "gslice --scenario " + Scenario("gslice-fig16.yaml");
  ExpectRejected({
      {gslice + " --period 1e-9", {"--period", "from 1 ms to 1 day", "'1e-9'"}},
      {gslice + " --period nan", {"--period", "'nan'"}},
      {gslice + " --duration 1e9", {"--duration", "'1e9'"}},
      {gslice + " --duration 1d --period 1ms", {"--period", "tuning periods"}},
      {gslice + " --reload-delay -1", {"--reload-delay", "from 0 to 1 day", "'-1'"}},
      {gslice + " --reload-delay 1e300", {"--reload-delay", "'1e300'"}},
  });
  const testing::Outcome o = Tessera(gslice + " --duration 3s --period 500ms --reload-delay 0");
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

TEST_F(DurationFlagsTest, ReplayIntervalsHaveFloors) {
  const std::string replay = Replay();
  ExpectRejected({
      {replay + " --consolidate-every 1e-300",
       {"--consolidate-every", "0 or a duration from 1 min to 365 days", "'1e-300'"}},
      {replay + " --consolidate-every 1ms", {"--consolidate-every", "'1ms'"}},
      {replay + " --consolidate-every nan", {"--consolidate-every", "'nan'"}},
      {replay + " --consolidate-every -5", {"--consolidate-every", "'-5'"}},
      {replay + " --mecc-window 1e-300", {"--mecc-window", "from 1 s to 365 days", "'1e-300'"}},
      {replay + " --mecc-window inf", {"--mecc-window", "'inf'"}},
  });
  for (const char* good : {" --consolidate-every off", " --consolidate-every 0",
                           " --consolidate-every 1h", " --policy mecc --mecc-window 2h"}) {
    const testing::Outcome o = Tessera(replay + good);
    EXPECT_EQ(o.exit_code, 0) << good << ": " << o.err;
  }
}

// Consolidation rounds are bounded over the trace's span (three years here:
// a round a minute would be 1.7 million of them).
TEST_F(DurationFlagsTest, ConsolidationRoundsAreBoundedOverTheTraceSpan) {
  const auto nodes = Write("n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,1,T4\n");
  const auto pods =
      Write("p.csv",
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
            "deletion_time,scheduled_time\n"
            "p0,4000,8192,1,1000,,LS,Running,0,7200,0\n"
            "p1,4000,8192,1,470,,LS,Running,600,100000000,600\n");
  const std::string replay = "replay --nodes " + nodes.string() + " --pods " + pods.string();
  ExpectRejected({{replay + " --consolidate-every 1m",
                   {"--consolidate-every", "consolidation rounds", "at most 1e+06"}}});
  const testing::Outcome o = Tessera(replay + " --consolidate-every 24h");
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

}  // namespace
}  // namespace tessera
