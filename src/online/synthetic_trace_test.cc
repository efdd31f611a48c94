#include "online/synthetic_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-40gb"); }

VmTrace Generate(const SyntheticTraceOptions& options) {
  Result<VmTrace> trace = GenerateSyntheticTrace(A100(), options);
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  return trace.ok() ? *trace : VmTrace{};
}

bool SameVms(const VmTrace& a, const VmTrace& b) {
  if (a.vms.size() != b.vms.size()) return false;
  for (size_t i = 0; i < a.vms.size(); ++i) {
    const VmRequest &x = a.vms[i], &y = b.vms[i];
    if (x.profile != y.profile || x.arrival_s != y.arrival_s || x.departure_s != y.departure_s) {
      return false;
    }
  }
  return true;
}

TEST(SyntheticTrace, BuildsNamedHostsAndDenseSortedVms) {
  const VmTrace trace = Generate({});
  ASSERT_EQ(trace.hosts.size(), 4u);
  EXPECT_EQ(trace.hosts[0].name, "host-0000");
  EXPECT_EQ(trace.hosts[3].name, "host-0003");
  EXPECT_EQ(trace.TotalGpus(), 8);
  ASSERT_EQ(trace.vms.size(), 200u);
  EXPECT_EQ(trace.vms[0].name, "vm-000000");
  EXPECT_EQ(trace.vms[199].name, "vm-000199");
  for (size_t i = 0; i < trace.vms.size(); ++i) {
    const VmRequest& vm = trace.vms[i];
    EXPECT_EQ(vm.id, static_cast<int>(i));
    EXPECT_GT(vm.departure_s, vm.arrival_s);
    EXPECT_FALSE(A100().profiles[vm.profile].media_extensions);
    if (i > 0) {
      EXPECT_GE(vm.arrival_s, trace.vms[i - 1].arrival_s);
    }
  }
  EXPECT_FALSE(trace.notes.empty());
}

TEST(SyntheticTrace, DeterministicForASeedDifferentForAnother) {
  SyntheticTraceOptions options;
  options.seed = 42;
  EXPECT_TRUE(SameVms(Generate(options), Generate(options)));
  SyntheticTraceOptions other = options;
  other.seed = 43;
  EXPECT_FALSE(SameVms(Generate(options), Generate(other)));
}

TEST(SyntheticTrace, RatesAndLifetimesFollowTheOptions) {
  SyntheticTraceOptions options;
  options.vms = 20000;
  options.arrivals_per_hour = 120;
  options.median_lifetime_s = 600;
  const VmTrace trace = Generate(options);
  // Mean gap 30 s: 20,000 arrivals take about 600,000 s (sd ~0.7%).
  EXPECT_NEAR(trace.vms.back().arrival_s, 600000, 600000 * 0.05);
  std::vector<double> lifetimes;
  for (const VmRequest& vm : trace.vms) lifetimes.push_back(vm.departure_s - vm.arrival_s);
  std::nth_element(lifetimes.begin(), lifetimes.begin() + lifetimes.size() / 2, lifetimes.end());
  EXPECT_NEAR(lifetimes[lifetimes.size() / 2], 600, 600 * 0.05);
}

TEST(SyntheticTrace, ProfileMixFollowsTheWeights) {
  SyntheticTraceOptions options;
  options.vms = 20000;
  options.profile_weights = {1, 0, 0, 2, 0, 0, 7};  // 1g.5gb, 2g.10gb, 7g.40gb
  const std::vector<int> counts = RequestsPerProfile(Generate(options));
  EXPECT_NEAR(counts[0], 2000, 200);
  EXPECT_NEAR(counts[3], 4000, 300);
  EXPECT_NEAR(counts[6], 14000, 400);
  EXPECT_EQ(counts[1] + counts[2] + counts[4] + counts[5], 0);
}

TEST(SyntheticTrace, EqualWeightsSkipMediaProfiles) {
  SyntheticTraceOptions options;
  options.vms = 6000;
  const std::vector<int> counts = RequestsPerProfile(Generate(options));
  for (size_t k = 0; k < counts.size(); ++k) {
    if (A100().profiles[k].media_extensions) {
      EXPECT_EQ(counts[k], 0) << A100().profiles[k].name;
    } else {
      EXPECT_NEAR(counts[k], 1000, 150) << A100().profiles[k].name;
    }
  }
}

TEST(SyntheticTrace, EndlessLifetimes) {
  SyntheticTraceOptions options;
  options.median_lifetime_s = kNeverDeparts;
  for (const VmRequest& vm : Generate(options).vms) EXPECT_EQ(vm.departure_s, kNeverDeparts);
}

// Sets one option to a bad value; the error must name that option.
template <typename Set>
void ExpectRejected(const std::string& field, Set set) {
  SyntheticTraceOptions options;
  set(options);
  const Status status = options.Validate(A100());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << field;
  EXPECT_NE(status.message().find(field), std::string::npos) << status.message();
  EXPECT_FALSE(GenerateSyntheticTrace(A100(), options).ok()) << field;
}

TEST(SyntheticTrace, ValidationNamesTheBadField) {
  EXPECT_TRUE(SyntheticTraceOptions{}.Validate(A100()).ok());
  ExpectRejected("hosts", [](auto& o) { o.hosts = 0; });
  ExpectRejected("gpus_per_host", [](auto& o) { o.gpus_per_host = -1; });
  ExpectRejected("host_cpu_milli", [](auto& o) { o.host_cpu_milli = NAN; });
  ExpectRejected("host_memory_mib", [](auto& o) { o.host_memory_mib = 0; });
  ExpectRejected("vms", [](auto& o) { o.vms = 0; });
  ExpectRejected("arrivals_per_hour", [](auto& o) { o.arrivals_per_hour = 0; });
  ExpectRejected("arrivals_per_hour", [](auto& o) { o.arrivals_per_hour = INFINITY; });
  ExpectRejected("profile_weights", [](auto& o) { o.profile_weights = {1, 2}; });
  ExpectRejected("profile_weights[1] (1g.5gb+me)",
                 [](auto& o) { o.profile_weights = {1, 1, 0, 0, 0, 0, 0}; });
  ExpectRejected("profile_weights[2]", [](auto& o) { o.profile_weights = {1, 0, -1, 0, 0, 0, 0}; });
  ExpectRejected("profile_weights", [](auto& o) { o.profile_weights = {0, 0, 0, 0, 0, 0, 0}; });
  ExpectRejected("median_lifetime_s", [](auto& o) { o.median_lifetime_s = 0; });
  ExpectRejected("median_lifetime_s", [](auto& o) { o.median_lifetime_s = NAN; });
  ExpectRejected("lifetime_sigma", [](auto& o) { o.lifetime_sigma = -0.5; });
  ExpectRejected("vm_cpu_milli", [](auto& o) { o.vm_cpu_milli = -1; });
  ExpectRejected("vm_memory_mib", [](auto& o) { o.vm_memory_mib = INFINITY; });
}

}  // namespace
}  // namespace tessera
