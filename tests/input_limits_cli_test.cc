// Issue 17 (hostile input), the classes of input limits end to end: every
// example the issue lists runs the real binary and must exit 2 with a
// one-line error naming the file, line and field (or the flag), where it
// crashed, hung, ate memory or answered wrongly before. The limits are
// include/tessera/util/input_limits.h and the "Input limits" table of docs/cli.md.
#include <gtest/gtest.h>

#include <string>

#include "cli_fixture.h"
#include "test_paths.h"

namespace tessera {
namespace {

class InputLimitsCliTest : public testing::CliTest {
 protected:
  // A scenario with one resnet50 service at `rate` (field on line 3).
  std::string OneService(const std::string& rate, const std::string& slo = "100",
                         const std::string& name = "a") {
    return Write("s.yaml", "gpu: a100-80gb\nservices:\n  - {name: " + name +
                               ", model: resnet50, rate_rps: " + rate + ", slo_ms: " + slo + "}\n")
        .string();
  }
  // Two hosts of one GPU and the given pod rows (Alibaba format).
  std::string Trace(const std::string& pod_rows) {
    const auto nodes = Write("nodes.csv",
                             "sn,cpu_milli,memory_mib,gpu\nn0,32000,131072,1\n"
                             "n1,32000,131072,1\n");
    const auto pods = Write("pods.csv",
                            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,"
                            "deletion_time\n" +
                                pod_rows);
    return "replay --nodes " + nodes.string() + " --pods " + pods.string();
  }
  // Exit code 2 and a one-line message on stderr holding `what`.
  void ExpectBadInput(const testing::Outcome& o, const std::string& what) {
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find(what), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;
  }
  // The same for a flag CLI11 checks (one line, pointing to --help).
  void ExpectBadFlag(const testing::Outcome& o, const std::string& what) {
    ExpectBadInput(o, what);
  }
};

// Class 1: pod times of 1e21 made MECC call front() on an empty deque (a
// crash); so did --mecc-window 1e-300 on ordinary times.
TEST_F(InputLimitsCliTest, ReplayBoundsTraceTimesAndTheMeccWindow) {
  ExpectBadInput(Tessera(Trace("p0,1000,1024,1,500,1e21,1e21\np1,1000,1024,1,500,1e21,2e21\n") +
                         " --policy mecc"),
                 "pods.csv:2: field 'creation_time': must be a finite number in [0, 1e+10], got "
                 "'1e21'");
  const std::string ok = Trace("p0,1000,1024,1,500,0,10\np1,1000,1024,1,500,5,20\n");
  ExpectBadInput(Tessera(ok + " --policy mecc --mecc-window 1e-300"),
                 "--mecc-window: expected a duration from 1 s to 365 days");
  EXPECT_EQ(Tessera(ok + " --policy mecc --mecc-window 1s").exit_code, 0);
}

// Class 8: 32,769 nodes of 65,536 GPUs overflowed VmTrace::TotalGpus (an int)
// and then asked for a cluster of two billion GPUs.
TEST_F(InputLimitsCliTest, ReplayBoundsTheGpusOfATrace) {
  std::string nodes = "sn,cpu_milli,memory_mib,gpu\n";
  for (int i = 0; i < 32'769; ++i) nodes += "n" + std::to_string(i) + ",1,1,65536\n";
  const auto nodes_path = Write("big-nodes.csv", nodes);
  const auto pods = Write("pods.csv",
                          "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,"
                          "deletion_time\np0,1,1,1,500,0,10\n");
  ExpectBadInput(Tessera("replay --nodes " + nodes_path.string() + " --pods " + pods.string()),
                 "big-nodes.csv:17: field 'gpu': 16 hosts with 1048576 GPUs so far");
  const std::string ok = Trace("p0,1000,1024,1,500,0,10\n");
  ExpectBadInput(Tessera(ok + " --gpus-per-host 65536 --lifetime scale:1e308"),
                 "lifetime: VM p0 would depart at inf s");
}

// Class 4: a rate of 1e308 aborted (vector larger than max_size), 1e12 ate
// more than 10 GB; every planner now refuses both at the edge, in seconds.
TEST_F(InputLimitsCliTest, RatesBeyondTheLimitAreRefusedByEveryCommand) {
  for (const char* rate : {"1e308", "1e12"}) {
    const std::string s = OneService(rate);
    for (const char* planner : {"parva", "exact", "static-7", "migserving-greedy"}) {
      ExpectBadInput(Tessera("plan --scenario " + s + " --planner " + planner),
                     "s.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got '" +
                         std::string(rate) + "'");
    }
    ExpectBadInput(Tessera("compare --repeat 1 --scenario " + s), "s.yaml:3: field 'rate_rps'");
  }
  // At the limit itself every plan comes back (in well under a second each).
  EXPECT_EQ(Tessera("plan --planner parva --scenario " + OneService("1e7")).exit_code, 0);
}

// Class 4: a rate within the limit but far above what a profile's segments
// serve put billions of segments in the planners' loops.
TEST_F(InputLimitsCliTest, PlansTooLargeForBoundedTimeNameTheService) {
  const auto profiles = Write("slow.csv",
                              "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n"
                              "resnet50,a100-80gb,1g.10gb,1,1,0.01,10\n");
  ExpectBadInput(Tessera("plan --planner parva --scenario " + OneService("1e7") + " --profiles " +
                         profiles.string()),
                 "s.yaml:3: field 'rate_rps': 1e+07 req/s needs");
}

// Class 4: batch or procs 2^31 in a profile aborted simulate on allocation.
TEST_F(InputLimitsCliTest, BatchesAndProcessesAreBounded) {
  const std::string header = "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n";
  const auto batch = Write("b.csv", header + "resnet50,a100-80gb,1g.10gb,2147483647,1,100,10\n");
  ExpectBadInput(Tessera("plan --scenario " + OneService("100") + " --profiles " + batch.string()),
                 "b.csv:2: field 'batch': must be an integer in [1, 4096], got '2147483647'");
  const auto procs = Write("p.csv", header + "resnet50,a100-80gb,1g.10gb,1,2147483647,100,10\n");
  ExpectBadInput(Tessera("plan --scenario " + OneService("100") + " --profiles " + procs.string()),
                 "p.csv:2: field 'procs': must be an integer in [1, 48], got '2147483647'");
  // A plan edited by hand to 2^31 processes.
  const std::string s = OneService("100");
  const testing::Outcome plan = Tessera("plan --scenario " + s + " --format json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  std::string json = plan.out;
  const size_t at = json.find("\"procs\": ");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, json.find(',', at) - at, "\"procs\": 2147483647");
  const auto edited = Write("edited.json", json);
  ExpectBadInput(Tessera("simulate --scenario " + s + " --deployment " + edited.string()),
                 "edited.json: gpus[0].instances[0].procs: must be an integer in [1, 48], got "
                 "2147483647");
}

// Class 6: prices of 1e25 hit a Clp assertion (an abort), 1e16..1e24 gave a
// false "max_count caps" error.
TEST_F(InputLimitsCliTest, PoolPricesAreBoundedAtTheEdge) {
  for (const char* price : {"1e16", "1e25"}) {
    const auto s = Write("pool.yaml",
                         "pool:\n  - {gpu: a100-80gb, price_per_hour: 4.1}\n"
                         "  - {gpu: h100-80gb, price_per_hour: " +
                             std::string(price) +
                             "}\nservices:\n  - {name: a, model: resnet50, "
                             "rate_rps: 100, slo_ms: 100}\n");
    ExpectBadInput(Tessera("plan --scenario " + s.string()),
                   "pool.yaml:3: field 'price_per_hour': must be a finite number in [0.001, "
                   "100000], got '" +
                       std::string(price) + "'");
  }
}

// Class 7: a one-entry pool's max_count was ignored by every planner but
// exact; the plan used more GPUs than allowed and said nothing.
TEST_F(InputLimitsCliTest, MaxCountHoldsForEveryPlanner) {
  const auto s = Write("cap.yaml",
                       "pool:\n  - {gpu: a100-80gb, price_per_hour: 4, max_count: 2}\nservices:\n"
                       "  - {name: a, model: resnet50, rate_rps: 20000, slo_ms: 100}\n");
  ExpectBadInput(Tessera("plan --planner parva --scenario " + s.string()),
                 "cap.yaml:2: field 'max_count': planner parva's plan needs 8 a100-80gb GPUs, "
                 "more than the pool's max_count 2; raise max_count, or plan with the exact "
                 "planner, which keeps within the caps");
  const testing::Outcome compare = Tessera("compare --repeat 1 --scenario " + s.string());
  EXPECT_EQ(compare.exit_code, 2) << compare.err;
  EXPECT_NE(compare.err.find("cap.yaml:2: field 'max_count': planner parva's plan needs 8"),
            std::string::npos)
      << compare.err;
  EXPECT_EQ(compare.out.find("parva  "), std::string::npos) << compare.out;
  // A cap the plan keeps to changes nothing.
  const auto roomy = Write("roomy.yaml",
                           "pool:\n  - {gpu: a100-80gb, price_per_hour: 4, max_count: 20}\n"
                           "services:\n  - {name: a, model: resnet50, rate_rps: 20000, "
                           "slo_ms: 100}\n");
  EXPECT_EQ(Tessera("plan --planner parva --scenario " + roomy.string()).exit_code, 0);
}

// Class 7: validate accepted a plan made for another rate as long as its
// capacity covered the scenario's.
TEST_F(InputLimitsCliTest, ValidateNamesARateTheScenarioContradicts) {
  const testing::Outcome plan = Tessera("plan --scenario " + OneService("100") +
                                        " --format json -o " + (dir_ / "plan.json").string());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string lower = OneService("50");
  const testing::Outcome o =
      Tessera("validate --scenario " + lower + " --deployment " + (dir_ / "plan.json").string());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("consistency at service a: the plan records rate_rps 100, the scenario " +
                       lower + ":3 gives 50"),
            std::string::npos)
      << o.err;
}

// Class 7: lognormal:1e308 printed -nan latencies.
TEST_F(InputLimitsCliTest, SimulateBoundsTheCoefficientOfVariation) {
  const std::string s = OneService("100");
  ASSERT_EQ(Tessera("plan --scenario " + s + " --format json -o " + (dir_ / "plan.json").string())
                .exit_code,
            0);
  ExpectBadInput(
      Tessera("simulate --scenario " + s + " --deployment " + (dir_ / "plan.json").string() +
              " --duration 2 --variability " + "lognormal:1e308"),
      "--variability");
  const testing::Outcome ok =
      Tessera("simulate --scenario " + s + " --deployment " + (dir_ / "plan.json").string() +
              " --duration 2 --variability lognormal:100");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.find("nan"), std::string::npos) << ok.out;
}

// Class 7: a name of invalid UTF-8 came back from a YAML round trip as
// another name; it is refused where it is read, and gen refuses to write one.
TEST_F(InputLimitsCliTest, NamesMustBeValidUtf8) {
  ExpectBadInput(Tessera("plan --scenario " + OneService("100", "100", "a\xff")),
                 "s.yaml:3: field 'name': must be valid UTF-8; byte 2 (0xff) is not");
  ExpectBadInput(Tessera("gen --services 2 --rates normal:10,1 --models 'resnet\xc3'"),
                 "--models: models[0]: must be valid UTF-8; byte 7 (0xc3) is not");
}

// Flags that take such numbers check the same limits, naming the flag.
TEST_F(InputLimitsCliTest, FlagsNameTheirLimit) {
  const std::string s5 = testing::SourcePath("examples/scenarios/s5.yaml");
  ExpectBadInput(Tessera("plan --scenario " + s5 + " --replicate 10000"),
                 "--replicate: 10000 copies of 11 services make 110000; a scenario holds an "
                 "integer in [1, 100000]");
  ExpectBadFlag(Tessera("plan --scenario " + s5 + " --replicate 1e9"),
                "--replicate: must be an integer in [1, 10000], got '1e9'");
  ExpectBadFlag(Tessera("plan --scenario " + s5 + " --latency-factor nan"),
                "--latency-factor: must be a finite number in (0, 1], got 'nan'");
  ExpectBadFlag(Tessera("plan --scenario " + s5 + " --planner igniter --price 1e308"),
                "--price: must be a finite number in [0, 100000], got '1e308'");
  ExpectBadInput(Tessera("gen --services 2 --rates normal:1e9,1"),
                 "--rates: rates: normal mean_rps: must be a finite number in (0, 1e+07]");
  ExpectBadInput(Tessera("gen --services 2 --rates normal:10,1 --slo-ms 1e300"),
                 "--slo-ms: slo_ms: must be a finite number in [0.01, 3.6e+06]");
}

}  // namespace
}  // namespace tessera
