#include "online/alibaba_trace.h"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutator.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::FreshTestDir;
using testing::WriteTextFile;

const GpuModel& A100() { return **FindGpu("a100-40gb"); }

constexpr const char* kCsvDir = "alibaba-gpu-2023/csv";

const std::string kNodes =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "node-0,96000,393216,8,G2\n"
    "node-1,32000,262144,0,\n"
    "node-2,64000,262144,2,P100\n";

const std::string kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

const std::string kPods = kPodHeader +
                          "pod-0,12000,16384,1,1000,,LS,Running,100,500,100\n"
                          "pod-1,6000,12288,1,460,,LS,Running,90,900,\n"
                          "pod-2,4000,8192,0,0,,BE,Running,110,110,110\n"
                          "pod-3,8000,8192,2,1000,,LS,Running,120,300,120\n"
                          "pod-4,1000,1024,1,50,,BE,Running,95,96,95\n";

bool Mentions(const std::vector<std::string>& notes, const std::string& text) {
  for (const std::string& note : notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string AllNotes(const VmTrace& trace) {
  std::string out;
  for (const std::string& note : trace.notes) out += note + "\n";
  return out;
}

// Loads `nodes` and `pods` written to the current test's directory.
Result<VmTrace> LoadTexts(const std::string& nodes, const std::string& pods,
                          std::string* pods_path = nullptr) {
  const fs::path dir = FreshTestDir();
  WriteTextFile(dir / "nodes.csv", nodes);
  WriteTextFile(dir / "pods.csv", pods);
  if (pods_path != nullptr) *pods_path = (dir / "pods.csv").string();
  return LoadAlibabaTrace((dir / "nodes.csv").string(), (dir / "pods.csv").string(), A100());
}

// The error of loading `pods`; its message must name pods.csv.
std::string PodError(const std::string& pods) {
  std::string path;
  Result<VmTrace> trace = LoadTexts(kNodes, pods, &path);
  EXPECT_FALSE(trace.ok());
  if (trace.ok()) return "";
  EXPECT_EQ(trace.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(trace.status().message().starts_with(path + ":")) << trace.status().message();
  return trace.status().message().substr(path.size());
}

// ---- ProfileForGpuShare ---------------------------------------------------

TEST(ProfileForGpuShare, FollowsEquation30OnA100) {
  const std::map<double, std::string> expected = {
      {0, "1g.5gb"},     {0.05, "1g.10gb"}, {0.11, "2g.10gb"}, {0.14, "2g.10gb"},
      {0.16, "3g.20gb"}, {0.27, "4g.20gb"}, {0.32, "4g.20gb"}, {0.47, "4g.20gb"},
      {0.59, "4g.20gb"}, {0.65, "7g.40gb"}, {0.81, "7g.40gb"}, {1, "7g.40gb"}};
  for (const auto& [share, name] : expected) {
    EXPECT_EQ(A100().profiles[ProfileForGpuShare(A100(), share, 1)].name, name) << share;
  }
}

TEST(ProfileForGpuShare, NormalisesByTheLargestShare) {
  // 0.25 of a largest 0.5 is 0.5 of the scale: nearer 4g.20gb (0.29) than 7g.40gb (1).
  EXPECT_EQ(A100().profiles[ProfileForGpuShare(A100(), 0.25, 0.5)].name, "4g.20gb");
  EXPECT_EQ(A100().profiles[ProfileForGpuShare(A100(), 0.5, 0.5)].name, "7g.40gb");
}

TEST(ProfileForGpuShare, TiesGoToTheSmallerProfile) {
  // Halfway between 1g.5gb (1/56) and 1g.10gb (2/56).
  EXPECT_EQ(A100().profiles[ProfileForGpuShare(A100(), 1.5 / 56, 1)].name, "1g.5gb");
}

TEST(ProfileForGpuShare, NeverPicksAMediaProfile) {
  for (const GpuModel* mig : AllMigGpus()) {
    const GpuModel& gpu = *mig;
    for (int milli = 0; milli <= 1000; milli += 10) {
      const int k = ProfileForGpuShare(gpu, milli / 1000.0, 1);
      ASSERT_GE(k, 0);
      EXPECT_FALSE(gpu.profiles[k].media_extensions) << gpu.name << " " << milli;
    }
  }
}

// ---- Small files ----------------------------------------------------------

TEST(AlibabaTrace, LoadsHostsAndPodsInArrivalOrder) {
  Result<VmTrace> trace = LoadTexts(kNodes, kPods);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->gpu, &A100());
  ASSERT_EQ(trace->hosts.size(), 2u);
  EXPECT_EQ(trace->hosts[0].name, "node-0");
  EXPECT_EQ(trace->hosts[0].gpus, 8);
  EXPECT_EQ(trace->hosts[0].cpu_milli, 96000);
  EXPECT_EQ(trace->hosts[1].memory_mib, 262144);
  EXPECT_EQ(trace->TotalGpus(), 10);
  // pod-3 asks for two GPUs; the rest sorted by creation time.
  const std::vector<std::string> order = {"pod-1", "pod-4", "pod-0", "pod-2"};
  ASSERT_EQ(trace->vms.size(), order.size()) << AllNotes(*trace);
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(trace->vms[i].name, order[i]);
    EXPECT_EQ(trace->vms[i].id, static_cast<int>(i));
  }
  const VmRequest& pod0 = trace->vms[2];
  EXPECT_EQ(A100().profiles[pod0.profile].name, "7g.40gb");
  EXPECT_EQ(pod0.cpu_milli, 12000);
  EXPECT_EQ(pod0.memory_mib, 16384);
  EXPECT_EQ(pod0.arrival_s, 100);
  EXPECT_EQ(pod0.departure_s, 500);
  EXPECT_EQ(A100().profiles[trace->vms[0].profile].name, "4g.20gb");  // 0.46
  EXPECT_EQ(A100().profiles[trace->vms[1].profile].name, "1g.10gb");  // 0.05
  EXPECT_EQ(A100().profiles[trace->vms[3].profile].name, "1g.5gb");   // CPU-only
  EXPECT_EQ(trace->vms[3].departure_s, trace->vms[3].arrival_s);      // deleted at creation
  EXPECT_TRUE(Mentions(trace->notes, "dropped 1 nodes without GPUs")) << AllNotes(*trace);
  EXPECT_TRUE(Mentions(trace->notes, "dropped 1 pods asking for more than one GPU"));
  EXPECT_TRUE(Mentions(trace->notes, "dropped 0 pods created outside"));
  EXPECT_TRUE(Mentions(trace->notes,
                       "pods deleted at their creation time, departing at once after arriving: 1"));
  EXPECT_TRUE(Mentions(trace->notes,
                       "1g.5gb 1, 1g.10gb 1, 2g.10gb 0, 3g.20gb 0, 4g.20gb 1, "
                       "7g.40gb 1"));
}

TEST(AlibabaTrace, FindsColumnsByNameAcceptsCrlfAndBlankLines) {
  const std::string nodes =
      "gpu,model,extra,memory_mib,sn,cpu_milli\r\n\r\n4,T4,x,1024,n0,8000\r\n";
  const std::string pods =
      "deletion_time,creation_time,gpu_milli,num_gpu,memory_mib,cpu_milli,name\r\n"
      "\r\n"
      "20,10,500,1,2048,1000,p0\r\n"
      "   \r\n"
      "40,30,0,0,1024,500,p1";
  Result<VmTrace> trace = LoadTexts(nodes, pods);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->hosts.size(), 1u);
  EXPECT_EQ(trace->hosts[0].name, "n0");
  EXPECT_EQ(trace->hosts[0].gpus, 4);
  EXPECT_EQ(trace->hosts[0].cpu_milli, 8000);
  ASSERT_EQ(trace->vms.size(), 2u);
  EXPECT_EQ(trace->vms[0].name, "p0");
  EXPECT_EQ(trace->vms[0].memory_mib, 2048);
  EXPECT_EQ(trace->vms[0].arrival_s, 10);
  EXPECT_EQ(trace->vms[0].departure_s, 20);
  EXPECT_EQ(A100().profiles[trace->vms[0].profile].name, "7g.40gb");  // the largest share
}

TEST(AlibabaTrace, ErrorsNameFileLineAndField) {
  EXPECT_EQ(PodError(""),
            ":1: field 'header': empty file, expected a header naming "
            "'name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,"
            "deletion_time' (in any order)");
  EXPECT_EQ(PodError("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1\n").substr(0, 28),
            ":1: field 'creation_time': m");
  EXPECT_EQ(PodError(kPodHeader), ":1: field 'row': no pods: expected rows after the header");
  EXPECT_EQ(PodError(kPodHeader + "\np,1,x1,1,1,,,,0,1,\n"),
            ":3: field 'memory_mib': must be a finite number in [0, 1e+12], got 'x1'");
  EXPECT_EQ(PodError(kPodHeader + "p,-1,1,1,1,,,,0,1,\n"),
            ":2: field 'cpu_milli': must be a finite number in [0, 1e+09], got '-1'");
  EXPECT_EQ(PodError(kPodHeader + "p,1,1,1.5,1,,,,0,1,\n"),
            ":2: field 'num_gpu': must be an integer in [0, 65536], got '1.5'");
  EXPECT_EQ(PodError(kPodHeader + "p,1,1,1,1001,,,,0,1,\n"),
            ":2: field 'gpu_milli': must be a finite number in [0, 1000], got '1001'");
  EXPECT_EQ(PodError(kPodHeader + "p,1,1,1,1,,,,5,4,\n"),
            ":2: field 'deletion_time': must be >= creation_time (5), got '4'");
  EXPECT_EQ(PodError(kPodHeader + "p,1,1,1,1,,,,inf,1e400,\n"),
            ":2: field 'creation_time': must be a finite number in [0, 1e+10], got 'inf'");
  // Input limits (issue 17, class 1): times this large crashed MECC's window.
  EXPECT_EQ(PodError(kPodHeader + "p,1,1,1,1,,,,1e21,1e21,\n"),
            ":2: field 'creation_time': must be a finite number in [0, 1e+10], got '1e21'");
  EXPECT_EQ(PodError(kPodHeader + "p,1,1,1,1,,,,0,1e300,\n"),
            ":2: field 'deletion_time': must be a finite number in [0, 1e+10], got '1e300'");
  EXPECT_EQ(PodError(kPodHeader + ",1,1,1,1,,,,0,1,\n"), ":2: field 'name': must not be empty");
  EXPECT_TRUE(PodError(kPodHeader + "p,1,1,1,1,,,,0\n")
                  .starts_with(":2: field 'row': 9 fields but the header has 11"));
  EXPECT_EQ(PodError("name,name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,"
                     "deletion_time\n"),
            ":1: field 'name': named twice in the header");
}

TEST(AlibabaTrace, NodeErrorsNameTheNodeFile) {
  const fs::path dir = FreshTestDir();
  WriteTextFile(dir / "nodes.csv", "sn,cpu_milli,memory_mib,model\nn,1,1,T4\n");
  WriteTextFile(dir / "pods.csv", kPods);
  Result<VmTrace> trace =
      LoadAlibabaTrace((dir / "nodes.csv").string(), (dir / "pods.csv").string(), A100());
  ASSERT_FALSE(trace.ok());
  EXPECT_TRUE(trace.status().message().starts_with((dir / "nodes.csv").string() +
                                                   ":1: field 'gpu': missing column"))
      << trace.status().message();
  WriteTextFile(dir / "nodes.csv", "sn,cpu_milli,memory_mib,gpu\nn,1,1,-2\n");
  trace = LoadAlibabaTrace((dir / "nodes.csv").string(), (dir / "pods.csv").string(), A100());
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find(":2: field 'gpu': must be an integer in [0, 65536]"),
            std::string::npos)
      << trace.status().message();
  trace = LoadAlibabaTrace((dir / "absent.csv").string(), (dir / "pods.csv").string(), A100());
  EXPECT_EQ(trace.status().code(), StatusCode::kNotFound);
}

// Issue 17, class 8: 32,769 nodes of 65,536 GPUs overflowed VmTrace::TotalGpus()
// (an int). A trace holds at most limits::kClusterGpus GPUs, summed in 64 bits.
TEST(AlibabaTrace, GpusInAllAreBoundedAndSummedIn64Bits) {
  const fs::path dir = FreshTestDir();
  std::string nodes = "sn,cpu_milli,memory_mib,gpu\n";
  for (int i = 0; i < 32'769; ++i) nodes += "n" + std::to_string(i) + ",1,1,65536\n";
  WriteTextFile(dir / "nodes.csv", nodes);
  WriteTextFile(dir / "pods.csv", kPods);
  Result<VmTrace> trace =
      LoadAlibabaTrace((dir / "nodes.csv").string(), (dir / "pods.csv").string(), A100());
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(),
            (dir / "nodes.csv").string() +
                ":17: field 'gpu': 16 hosts with 1048576 GPUs so far; a trace holds at most "
                "1e+06 hosts and 1e+06 GPUs in all");
  VmTrace big;
  big.hosts.assign(32'769, HostSpec{"h", 1, 1, 65'536});
  EXPECT_EQ(big.TotalGpus(), 32'769LL * 65'536);  // > INT_MAX
}

TEST(AlibabaTrace, DropsCreationTimeOutliersByIqr) {
  // Creation times 0 and 1000..1080: Q1 1012.5 and Q3 1057.5 (interpolated),
  // fences 945 and 1125.
  std::string pods = kPodHeader + "early,1,1,1,1000,,,,0,2000,\n";
  for (int i = 0; i < 9; ++i) {
    pods += "p" + std::to_string(i) + ",1,1,1,500,,,," + std::to_string(1000 + 10 * i) + ",2000,\n";
  }
  Result<VmTrace> trace = LoadTexts(kNodes, pods);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->vms.size(), 9u);
  EXPECT_EQ(trace->vms[0].name, "p0");
  EXPECT_TRUE(Mentions(trace->notes,
                       "dropped 1 pods created outside [945, 1125] s "
                       "(Q1 1012.5 s, Q3 1057.5 s"))
      << AllNotes(*trace);
  // The dropped pod held the largest share: 0.5 is now the top of the scale.
  EXPECT_EQ(A100().profiles[trace->vms[0].profile].name, "7g.40gb");
}

// ---- Fuzz -----------------------------------------------------------------

const std::array<std::string, 12> kCsvNumbers = {
    "-1",  "NaN", "nan", "inf", "-inf", "1e400", "", "abc", "0", "1.5", "99999999999999999999",
    "0x10"};
const std::string kCsvBytes = std::string(",\n\r\"' :-.0\x01\xff", 13) + '\0';
const testing::MutationVocabulary kCsvMutations = {kCsvBytes, kCsvNumbers};

TEST(AlibabaTraceFuzz, MutatedPodListsNeverCrash) {
  const fs::path dir = FreshTestDir();
  const std::string nodes = (dir / "nodes.csv").string(), pods = (dir / "pods.csv").string();
  WriteTextFile(nodes, kNodes);
  std::mt19937 rng(20240919);
  int errors = 0;
  const int runs = 1500;
  for (int i = 0; i < runs; ++i) {
    const std::string mutant = testing::Mutate(kPods, rng, kCsvMutations);
    WriteTextFile(pods, mutant);
    Result<VmTrace> trace = LoadAlibabaTrace(nodes, pods, A100());
    if (trace.ok()) {
      for (size_t v = 0; v < trace->vms.size(); ++v) {
        ASSERT_EQ(trace->vms[v].id, static_cast<int>(v));
        ASSERT_GE(trace->vms[v].departure_s, trace->vms[v].arrival_s);
      }
      continue;
    }
    ++errors;
    EXPECT_EQ(trace.status().code(), StatusCode::kInvalidArgument) << mutant;
    EXPECT_TRUE(trace.status().message().starts_with(pods + ":"))
        << trace.status().message() << "\n--- input:\n"
        << mutant;
  }
  EXPECT_GT(errors, runs / 10);
  EXPECT_LT(errors, runs);
}

// ---- The real trace -------------------------------------------------------

std::string CsvPath(const std::string& file) {
  return testing::SharedDataPath(std::string(kCsvDir) + "/" + file);
}

TEST(AlibabaTraceConformance, DefaultPodListGivesThePapers8063Vms) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(std::string(kCsvDir) + "/openb_pod_list_default.csv");
  Result<VmTrace> trace = LoadAlibabaTrace(CsvPath("openb_node_list_gpu_node.csv"),
                                           CsvPath("openb_pod_list_default.csv"), A100());
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->hosts.size(), 1213u);
  EXPECT_EQ(trace->TotalGpus(), 6212);
  ASSERT_EQ(trace->vms.size(), 8063u) << AllNotes(*trace);
  // The 14 outliers are pods 0000..0013, created months before the rest.
  EXPECT_EQ(trace->vms.front().name, "openb-pod-0014");
  EXPECT_EQ(trace->vms.back().name, "openb-pod-8151");
  // Pinned from this loader; the pre-IQR 8,077 are 1,088 / 7 / 25 / 276 / 1,439 / 5,242.
  const std::map<std::string, int> expected = {{"1g.5gb", 1087},  {"1g.10gb", 7},
                                               {"2g.10gb", 25},   {"3g.20gb", 276},
                                               {"4g.20gb", 1436}, {"7g.40gb", 5232}};
  const std::vector<int> counts = RequestsPerProfile(*trace);
  int total = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const std::string& name = A100().profiles[k].name;
    EXPECT_EQ(counts[k], expected.contains(name) ? expected.at(name) : 0) << name;
    total += counts[k];
  }
  EXPECT_EQ(total, 8063);
  for (size_t i = 0; i < trace->vms.size(); ++i) {
    const VmRequest& vm = trace->vms[i];
    ASSERT_EQ(vm.id, static_cast<int>(i));
    ASSERT_FALSE(A100().profiles[vm.profile].media_extensions) << vm.name;
    ASSERT_GE(vm.departure_s, vm.arrival_s) << vm.name;
    if (i > 0) {
      ASSERT_GE(vm.arrival_s, trace->vms[i - 1].arrival_s) << vm.name;
    }
  }
  EXPECT_TRUE(Mentions(trace->notes, "dropped 75 pods asking for more than one GPU"))
      << AllNotes(*trace);
  EXPECT_TRUE(Mentions(trace->notes, "dropped 14 pods created outside [8224291, 14914011] s"))
      << AllNotes(*trace);
  EXPECT_TRUE(Mentions(trace->notes,
                       "pods deleted at their creation time, departing at once after arriving: 1"));
  EXPECT_TRUE(Mentions(trace->notes, "mapped 8,063 pods to a100-40gb profiles: 1g.5gb 1,087"));
}

TEST(AlibabaTraceConformance, AllNodeListDropsCpuOnlyNodes) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(std::string(kCsvDir) + "/openb_node_list_all_node.csv");
  Result<VmTrace> trace = LoadAlibabaTrace(CsvPath("openb_node_list_all_node.csv"),
                                           CsvPath("openb_pod_list_default.csv"), A100());
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->hosts.size(), 1213u);
  EXPECT_EQ(trace->TotalGpus(), 6212);
  EXPECT_TRUE(Mentions(trace->notes, "dropped 310 nodes without GPUs")) << AllNotes(*trace);
}

TEST(AlibabaTraceConformance, MultiGpuListWithoutTimesIsRefused) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(std::string(kCsvDir) + "/openb_pod_list_multigpu20.csv");
  Result<VmTrace> trace = LoadAlibabaTrace(CsvPath("openb_node_list_gpu_node.csv"),
                                           CsvPath("openb_pod_list_multigpu20.csv"), A100());
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find(":1: field 'creation_time': missing column"),
            std::string::npos)
      << trace.status().message();
}

}  // namespace
}  // namespace tessera
