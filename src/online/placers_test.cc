// Behaviour of each built-in policy on small hand-made clusters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "online/synthetic_trace.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"
#include "vm_trace_builder.h"

namespace tessera {
namespace {

using testing::VmTraceBuilder;

std::unique_ptr<OnlinePlacer> Make(std::string_view name, const PlacerOptions& options = {}) {
  return BuiltinPlacers().Create(name, options).value();
}

// Runs `policy` over every VM of `trace` (no departures) and returns the GPU
// each landed on (-1 = rejected).
std::vector<int> PlaceAll(const VmTrace& trace, OnlinePlacer& placer, OnlineCluster& cluster) {
  placer.Start(cluster);
  std::vector<int> gpus;
  for (const VmRequest& vm : trace.vms) {
    const bool placed = placer.Place(vm, cluster);
    gpus.push_back(placed ? cluster.LocationOf(vm.id).gpu : -1);
    EXPECT_TRUE(cluster.CheckInvariants().ok()) << cluster.CheckInvariants().ToString();
  }
  return gpus;
}

TEST(OnlinePlacers, RegistryHasTheNinePoliciesAndNamesUnknownOnes) {
  EXPECT_EQ(BuiltinPlacers().Names(), (std::vector<std::string>{"bf", "fair", "ff", "frag", "grmu",
                                                                "lfr", "mcc", "mecc", "steer"}));
  for (const std::string& name : BuiltinPlacers().Names()) EXPECT_EQ(Make(name)->Name(), name);
  auto missing = BuiltinPlacers().Create("worst-fit", PlacerOptions{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(
      missing.status().message().find("unknown policy 'worst-fit' (known: bf, fair, ff, frag"),
      std::string::npos);
}

TEST(OnlinePlacers, OptionsAreValidated) {
  EXPECT_TRUE(PlacerOptions{}.Validate().ok());
  PlacerOptions o;
  o.heavy_share = 1.5;
  EXPECT_FALSE(o.Validate().ok());
  o = {};
  for (double bad : {0.0, -0.5, 1.01, std::nan("")}) {
    o.fair_factor = bad;
    EXPECT_FALSE(o.Validate().ok()) << bad;
  }
  o.fair_factor = 1;
  EXPECT_TRUE(o.Validate().ok());
  o = {};
  o.consolidate_every_s = -1;
  EXPECT_FALSE(o.Validate().ok());
  o = {};
  o.mecc_window_s = 0;
  EXPECT_FALSE(o.Validate().ok());
  // Input limits (limits::kMeccWindowS): a millisecond to 1e10 s.
  o.mecc_window_s = 1e-300;
  EXPECT_FALSE(o.Validate().ok());
  o.mecc_window_s = 1e11;
  EXPECT_FALSE(o.Validate().ok());
  o.mecc_window_s = 1e-3;
  EXPECT_TRUE(o.Validate().ok());
}

// Issue 17, class 1: at 1e21 s a day's window vanishes in `now - window`, the
// arrival just added looked as old as the window and MECC called front() on
// an empty deque. Ages are now differences of times, and the newest arrival
// always stays.
TEST(OnlinePlacers, MeccWindowHoldsAtTimesWhereTheWindowVanishes) {
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(1, 1)
                        .Vm("1g.5gb", 1e21)
                        .Vm("2g.10gb", 1e21)
                        .Vm("1g.5gb", 1e21 + 1e6)
                        .Build();
  OnlineCluster c(t);
  EXPECT_EQ(PlaceAll(t, *Make("mecc"), c), (std::vector<int>{0, 0, 0}));
}

TEST(OnlinePlacers, FirstFitFillsTheFirstGpuAndMccSpreads) {
  const VmTrace t = VmTraceBuilder("a100-40gb").Hosts(2, 1).Vm("1g.5gb", 0).Vm("1g.5gb", 1).Build();
  {
    OnlineCluster c(t);
    EXPECT_EQ(PlaceAll(t, *Make("ff"), c), (std::vector<int>{0, 0}));
    EXPECT_EQ(c.LocationOf(0).start, 6);  // the driver's choice, for every policy
    EXPECT_EQ(c.LocationOf(1).start, 4);
  }
  OnlineCluster c(t);
  EXPECT_EQ(PlaceAll(t, *Make("mcc"), c), (std::vector<int>{0, 1}));
}

TEST(OnlinePlacers, BestFitTakesTheTightestGpu) {
  // GPU 0: 3g.20gb (4 slices free); GPU 1: 4g.20gb + 2g.10gb (2 free); GPU 2 empty.
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(3, 1)
                        .Vm("3g.20gb", 0)
                        .Vm("4g.20gb", 0)
                        .Vm("2g.10gb", 0)
                        .Vm("1g.5gb", 1)
                        .Build();
  for (const auto& [policy, expected] :
       std::vector<std::pair<std::string, int>>{{"ff", 0}, {"bf", 1}, {"mcc", 2}}) {
    OnlineCluster c(t);
    ASSERT_TRUE(c.Place(0, 0, 4).ok());
    ASSERT_TRUE(c.Place(1, 1, 0).ok());
    ASSERT_TRUE(c.Place(2, 1, 4).ok());
    auto placer = Make(policy);
    placer->Start(c);
    ASSERT_TRUE(placer->Place(t.vms[3], c)) << policy;
    EXPECT_EQ(c.LocationOf(3).gpu, expected) << policy;
  }
}

TEST(OnlinePlacers, EveryPolicyRespectsHostCpuAndRam) {
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Host(1, /*cpu_milli=*/2000, /*memory_mib=*/65536)
                        .Host(1, /*cpu_milli=*/2000, /*memory_mib=*/65536)
                        .Resources(1500, 1024)
                        .Vm("1g.5gb", 0)
                        .Vm("1g.5gb", 1)
                        .Build();
  PlacerOptions no_heavy_basket;  // GRMU: both GPUs may serve light VMs
  no_heavy_basket.heavy_share = 0;
  for (const std::string& policy : BuiltinPlacers().Names()) {
    OnlineCluster c(t);
    const std::vector<int> gpus = PlaceAll(t, *Make(policy, no_heavy_basket), c);
    EXPECT_NE(gpus[0], gpus[1]) << policy;
    EXPECT_NE(gpus[0], -1) << policy;
    EXPECT_NE(gpus[1], -1) << policy;
  }
}

// MECC weighs CC by the recent profile mix: after three 1g.5gb arrivals a
// 1g.10gb goes where more 1g.5gb instances still fit, unlike MCC.
TEST(OnlinePlacers, MeccFollowsTheRecentProfileMix) {
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(5, 1)
                        .Vm("1g.5gb", 0)
                        .Vm("1g.5gb", 0)
                        .Vm("1g.5gb", 1)
                        .Vm("1g.5gb", 2)
                        .Vm("1g.5gb", 3)
                        .Vm("1g.10gb", 4)
                        .Build();
  std::map<std::string, int> landed;
  for (const char* policy : {"mcc", "mecc"}) {
    OnlineCluster c(t);
    ASSERT_TRUE(c.Place(0, 0, 6).ok());  // GPU 0: 1g.5gb on block 6
    ASSERT_TRUE(c.Place(1, 1, 0).ok());  // GPU 1: 1g.5gb on block 0
    auto placer = Make(policy);
    placer->Start(c);
    for (int v = 2; v < 6; ++v) ASSERT_TRUE(placer->Place(t.vms[v], c)) << policy << v;
    landed[policy] = c.LocationOf(5).gpu;
  }
  EXPECT_EQ(landed["mcc"], 0);
  EXPECT_EQ(landed["mecc"], 1);
}

TEST(OnlinePlacers, GrmuCapsTheHeavyBasket) {
  VmTraceBuilder b("a100-40gb");
  b.Hosts(10, 1);
  for (int i = 0; i < 5; ++i) b.Vm("7g.40gb", i);
  b.Vm("1g.5gb", 5);
  const VmTrace t = b.Build();
  OnlineCluster c(t);
  // 30% of 10 GPUs: GPU 0 (the heavy basket's first) and two from the pool;
  // GPU 1 is the light basket's first.
  EXPECT_EQ(PlaceAll(t, *Make("grmu"), c), (std::vector<int>{0, 2, 3, -1, -1, 1}));
}

// Where `policy` (fair unless said) with fair_factor `factor` puts each VM
// (-1 = rejected) of a trace on `gpus` single-GPU hosts: runs of (profile,
// count), one arrival a second.
std::vector<int> FairPlaces(int gpus, const std::vector<std::pair<std::string, int>>& runs,
                            double factor, std::string_view policy = "fair") {
  VmTraceBuilder b("a100-40gb");
  b.Hosts(gpus, 1);
  int second = 0;
  for (const auto& [profile, count] : runs) {
    for (int i = 0; i < count; ++i) b.Vm(profile, second++);
  }
  const VmTrace trace = b.Build();
  PlacerOptions o;
  o.fair_factor = factor;
  OnlineCluster c(trace);
  return PlaceAll(trace, *Make(policy, o), c);
}

// fair caps the heavy basket at fair_factor x the full-GPU requests' share of
// the demand seen. Only 7g.40gb seen: the share is 1, so half of 10 GPUs;
// GRMU's 30% cap stops at 3. The 4g.20gb that follow take the light rest.
TEST(OnlinePlacers, FairCapsTheHeavyBasketAtItsFactorOfTheDemandShare) {
  EXPECT_EQ(FairPlaces(10, {{"7g.40gb", 7}, {"4g.20gb", 6}}, 0.5),
            (std::vector<int>{0, 1, 2, 3, 4, -1, -1, 5, 6, 7, 8, 9, -1}));
}

// The cap follows the mix: after six 4g.20gb (a whole GPU each, light) the
// k-th 7g.40gb sees a heavy share of k / (k + 6), and 10 x 0.5 x that share,
// rounded, grows 1, 1, 2, 2, 2, 3, 3, ...: only the 1st, 3rd and 6th fit.
TEST(OnlinePlacers, FairLearnsTheHeavyShareFromTheRequestsSeen) {
  EXPECT_EQ(FairPlaces(10, {{"4g.20gb", 6}, {"7g.40gb", 8}}, 0.5),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, -1, 7, -1, -1, 8, -1, -1}));
}

// A request counts 1 / max_instances of a GPU: seven 1g.5gb (all on GPU 0)
// weigh one GPU, so the k-th 7g.40gb sees a heavy share of k / (k + 1) and a
// cap of 5 x that, rounded: 3, 3, 4, 4, enough for each. Counted one per
// request, the seven would cap the second 7g.40gb at round(5 x 2 / 9) = 1.
TEST(OnlinePlacers, FairWeighsRequestsByTheShareOfAGpuTheyTake) {
  EXPECT_EQ(FairPlaces(5, {{"1g.5gb", 7}, {"7g.40gb", 4}}, 1),
            (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}));
}

// No GPU is held back for a class before it asks: with only 4g.20gb seen,
// both GPUs serve them; GRMU keeps GPU 0 for its heavy basket.
TEST(OnlinePlacers, FairHoldsNoGpuForAClassNotSeen) {
  const VmTrace t =
      VmTraceBuilder("a100-40gb").Hosts(2, 1).Vm("4g.20gb", 0).Vm("4g.20gb", 1).Build();
  EXPECT_EQ(FairPlaces(2, {{"4g.20gb", 2}}, PlacerOptions{}.fair_factor), (std::vector<int>{0, 1}));
  OnlineCluster c(t);
  EXPECT_EQ(PlaceAll(t, *Make("grmu"), c), (std::vector<int>{1, -1}));
}

// A restarted extender adopts the VMs already placed: fair counts them in the
// demand, so after six adopted 4g.20gb the 7g.40gb are capped as if it had
// placed the six itself (FairLearnsTheHeavyShareFromTheRequestsSeen).
TEST(OnlinePlacers, FairCountsAdoptedVmsInTheDemand) {
  VmTraceBuilder b("a100-40gb");
  b.Hosts(10, 1);
  for (int i = 0; i < 6; ++i) b.Vm("4g.20gb", i);
  for (int i = 6; i < 14; ++i) b.Vm("7g.40gb", i);
  const VmTrace t = b.Build();
  PlacerOptions o;
  o.fair_factor = 0.5;
  OnlineCluster c(t);
  auto placer = Make("fair", o);
  placer->Start(c);
  for (int v = 0; v < 6; ++v) {
    ASSERT_TRUE(c.Place(v, v, 0).ok());
    placer->Adopted(v, c);
  }
  std::vector<int> gpus;
  for (int v = 6; v < 14; ++v) {
    gpus.push_back(placer->Place(t.vms[v], c) ? c.LocationOf(v).gpu : -1);
  }
  EXPECT_EQ(gpus, (std::vector<int>{6, -1, 7, -1, -1, 8, -1, -1}));
}

// Three small VMs arrive, the first leaves: the driver's starts leave no half
// of the GPU free, so a 3g.20gb is rejected until defragmentation re-creates
// the two survivors where a fresh GPU would have put them.
VmTrace FragmentedLightGpu() {
  return VmTraceBuilder("a100-40gb")
      .Hosts(2, 1)
      .Vm("1g.5gb", 0, 3)  // block 6
      .Vm("1g.5gb", 1)     // block 4
      .Vm("1g.10gb", 2)    // block 0
      .Vm("3g.20gb", 4)
      .Build();
}

TEST(OnlinePlacers, GrmuDefragmentsAfterALightRejectionAndRetries) {
  const VmTrace t = FragmentedLightGpu();
  PlacerOptions o;
  o.heavy_share = 0.5;  // one heavy GPU, one light GPU
  auto grmu = Make("grmu", o);
  ReplayReport r = Replay(t, *grmu).value();
  EXPECT_EQ(r.accepted, 4);
  EXPECT_GE(r.intra_migrations, 1);
  EXPECT_EQ(r.inter_migrations, 0);
  for (const MigrationEvent& m : r.migrations) EXPECT_EQ(m.time_s, 4);

  o.defragment = false;
  auto plain = Make("grmu", o);
  r = Replay(t, *plain).value();
  EXPECT_EQ(r.accepted, 3);
  EXPECT_EQ(r.intra_migrations, 0);
}

TEST(OnlinePlacers, GrmuConsolidatesHalfFullGpusAtItsInterval) {
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(3, 1)
                        .Vm("3g.20gb", 0)     // GPU 0, upper half
                        .Vm("3g.20gb", 1, 3)  // GPU 0, lower half; leaves at 3
                        .Vm("3g.20gb", 2)     // GPU 1, upper half
                        .Vm("1g.5gb", 15)     // keeps the replay going past 10 s
                        .Build();
  PlacerOptions o;
  o.heavy_share = 0;
  o.consolidate_every_s = 10;
  auto grmu = Make("grmu", o);
  std::vector<int> gpus_in_use;
  ReplayOptions ro;
  ro.after_event = [&](const OnlineCluster& c) {
    ASSERT_TRUE(c.CheckInvariants().ok());
    int used = 0;
    for (int g = 0; g < c.num_gpus(); ++g) used += !c.GpuEmpty(g);
    gpus_in_use.push_back(used);
  };
  const ReplayReport r = Replay(t, *grmu, ro).value();
  EXPECT_EQ(r.inter_migrations, 1);
  ASSERT_EQ(r.migrations.size(), 1u);
  EXPECT_EQ(r.migrations[0].from_gpu, 1);
  EXPECT_EQ(r.migrations[0].to_gpu, 0);
  EXPECT_EQ(r.migrations[0].time_s, 10);
  // After the consolidation GPU 0 is full and GPU 1 empty; the last VM then
  // needs a GPU of its own.
  EXPECT_EQ(gpus_in_use, (std::vector<int>{1, 1, 2, 2, 1, 2}));
}

// ---- lfr, frag and steer choose the start as well as the GPU ----

// Places `vm` with `policy` on `cluster` (already holding what the test put
// there) and returns where it landed; gpu -1 when rejected.
VmLocation PlaceOne(std::string_view policy, const VmRequest& vm, OnlineCluster& cluster,
                    const PlacerOptions& options = {}) {
  auto placer = Make(policy, options);
  placer->Start(cluster);
  if (!placer->Place(vm, cluster)) return {};
  EXPECT_TRUE(cluster.CheckInvariants().ok()) << cluster.CheckInvariants().ToString();
  return cluster.LocationOf(vm.id);
}

// A 4g.20gb holds slices 0-3 of GPU 0. Beside it a 1g.5gb would leave at most
// 3 free slices in a row; on the empty GPU 1, at its edge (slice 0), 7. The
// driver would have put it on slice 6.
TEST(OnlinePlacers, LfrLeavesTheLongestRunOfFreeSlices) {
  const VmTrace t =
      VmTraceBuilder("a100-40gb").Hosts(2, 1).Vm("4g.20gb", 0).Vm("1g.5gb", 1).Build();
  OnlineCluster c(t);
  ASSERT_TRUE(c.Place(0, 0, 0).ok());
  const VmLocation at = PlaceOne("lfr", t.vms[1], c);
  EXPECT_EQ(at.gpu, 1);
  EXPECT_EQ(at.start, 0);
  EXPECT_EQ(c.capability().AssignStart(0, t.vms[1].profile), 6);
}

// One GPU, a 2g.10gb on slices 2-3: a 1g.5gb on slice 0 or 1 leaves 4-7
// free (a run of 4), on 4 or above less. Of equal runs the first start wins.
TEST(OnlinePlacers, LfrChoosesTheStartInsideTheGpu) {
  const VmTrace t =
      VmTraceBuilder("a100-40gb").Hosts(1, 1).Vm("2g.10gb", 0).Vm("1g.5gb", 1).Build();
  OnlineCluster c(t);
  ASSERT_TRUE(c.Place(0, 0, 2).ok());
  EXPECT_EQ(PlaceOne("lfr", t.vms[1], c).start, 0);
}

// Nothing fits a 4g.20gb as placed: 1g.5gb instances hold slice 0 of both
// GPUs, and slice 1 of GPU 0 too. lfr rearranges the GPU that needs the
// fewest moves, GPU 1 (one 1g.5gb moves off slice 0), and places the 4g.20gb
// on slices 0-3; without defragmentation it refuses.
TEST(OnlinePlacers, LfrRearrangesTheGpuNeedingFewestMovesWhenNothingFits) {
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(2, 1)
                        .Vm("1g.5gb", 0)
                        .Vm("1g.5gb", 0)
                        .Vm("1g.5gb", 0)
                        .Vm("4g.20gb", 1)
                        .Build();
  for (const bool defragment : {true, false}) {
    OnlineCluster c(t);
    ASSERT_TRUE(c.Place(0, 0, 0).ok());
    ASSERT_TRUE(c.Place(1, 0, 1).ok());
    ASSERT_TRUE(c.Place(2, 1, 0).ok());
    PlacerOptions o;
    o.defragment = defragment;
    const VmLocation at = PlaceOne("lfr", t.vms[3], c, o);
    if (!defragment) {
      EXPECT_EQ(at.gpu, -1);
      EXPECT_TRUE(c.migrations().empty());
      continue;
    }
    EXPECT_EQ(at.gpu, 1);
    EXPECT_EQ(at.start, 0);
    ASSERT_EQ(c.migrations().size(), 1u);
    EXPECT_EQ(c.migrations()[0].vm, 2);
    EXPECT_EQ(c.migrations()[0].kind, MigrationKind::kIntraGpu);
    EXPECT_EQ(c.migrations()[0].time_s, 1);
    EXPECT_GE(c.LocationOf(2).start, 4);
    EXPECT_EQ(c.LocationOf(0).start, 0);  // GPU 0 untouched
    EXPECT_EQ(c.LocationOf(1).start, 1);
  }
}

// Two 1g.5gb on slices 0 and 4; a 4g.20gb needs 0-3. The packing keeps the
// instance on slice 4 where it is and moves only the one on slice 0. steer
// falls back on the same rearrangement.
TEST(OnlinePlacers, LfrAndSteerRearrangementMovesAsFewVmsAsItCan) {
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(1, 1)
                        .Vm("1g.5gb", 0)
                        .Vm("1g.5gb", 0)
                        .Vm("4g.20gb", 1)
                        .Build();
  for (const char* policy : {"lfr", "steer"}) {
    OnlineCluster c(t);
    ASSERT_TRUE(c.Place(0, 0, 0).ok());
    ASSERT_TRUE(c.Place(1, 0, 4).ok());
    EXPECT_EQ(PlaceOne(policy, t.vms[2], c).start, 0) << policy;
    EXPECT_EQ(c.LocationOf(1).start, 4) << policy;
    EXPECT_EQ(c.migrations().size(), 1u) << policy;
  }
}

// GPU 0 holds a 3g.20gb on 4-7 (free 0-3, room for a 4g.20gb), GPU 1 a
// 4g.20gb on 0-3 (free 4-7). Both leave 3 slices free after a 1g.5gb, so BF
// takes GPU 0, the lower index, at the driver's start 0, and spoils its lower
// half. frag counts the free slices each profile can no longer use: there
// the 3g.20gb and 4g.20gb lose all three left and the 1g.10gb and 2g.10gb
// one each (7 more stranded, 7g.40gb one fewer); on GPU 1, slice 6 keeps 4-5
// for a 1g.10gb or 2g.10gb and strands one slice more.
TEST(OnlinePlacers, FragStrandsTheFewestFreeSlices) {
  const VmTrace t = VmTraceBuilder("a100-40gb")
                        .Hosts(2, 1)
                        .Vm("3g.20gb", 0)
                        .Vm("4g.20gb", 0)
                        .Vm("1g.5gb", 1)
                        .Build();
  for (const auto& [policy, gpu, start] :
       std::vector<std::tuple<std::string, int, int>>{{"bf", 0, 0}, {"frag", 1, 6}}) {
    OnlineCluster c(t);
    ASSERT_TRUE(c.Place(0, 0, 4).ok());
    ASSERT_TRUE(c.Place(1, 1, 0).ok());
    const VmLocation at = PlaceOne(policy, t.vms[2], c);
    EXPECT_EQ(at.gpu, gpu) << policy;
    EXPECT_EQ(at.start, start) << policy;
  }
}

// Two hosts of two GPUs; a 1g.5gb runs on GPU 2 (host 1). Every empty GPU
// takes a 7g.40gb alike: BF takes GPU 0, frag GPU 3, beside the VM, and
// keeps host 0 idle.
TEST(OnlinePlacers, FragPrefersAnIdleGpuOfABusyHost) {
  const VmTrace t =
      VmTraceBuilder("a100-40gb").Hosts(2, 2).Vm("1g.5gb", 0).Vm("7g.40gb", 1).Build();
  for (const auto& [policy, gpu] :
       std::vector<std::pair<std::string, int>>{{"bf", 0}, {"frag", 3}}) {
    OnlineCluster c(t);
    ASSERT_TRUE(c.Place(0, 2, 6).ok());
    EXPECT_EQ(PlaceOne(policy, t.vms[1], c).gpu, gpu) << policy;
  }
}

// While nothing leaves, steer's full-GPU reserve is fair's: the same
// decisions as FairCapsTheHeavyBasketAtItsFactorOfTheDemandShare.
TEST(OnlinePlacers, SteerKeepsFairsReserveWhileNothingLeaves) {
  EXPECT_EQ(FairPlaces(10, {{"7g.40gb", 7}, {"4g.20gb", 6}}, 0.5, "steer"),
            (std::vector<int>{0, 1, 2, 3, 4, -1, -1, 5, 6, 7, 8, 9, -1}));
}

// Five 7g.40gb fill fair's cap (0.5 x 10 GPUs) and leave at 5 s. Then eight
// more arrive: fair still caps them at 5. steer's reserve is fair's 5 GPUs x
// the share of accepted demand still resident, k / (5 + k) with k of them
// placed, so the k-th more is placed while k < 10 - round(5k / (5 + k)):
// 7 of the 8.
TEST(OnlinePlacers, SteerLetsFullGpuVmsUseTheCapacityThatCameBack) {
  VmTraceBuilder b("a100-40gb");
  b.Hosts(10, 1);
  for (int i = 0; i < 5; ++i) b.Vm("7g.40gb", i, 5);
  for (int i = 10; i < 18; ++i) b.Vm("7g.40gb", i);
  const VmTrace t = b.Build();
  PlacerOptions o;
  o.fair_factor = 0.5;
  EXPECT_EQ(Replay(t, *Make("fair", o)).value().accepted, 5 + 5);
  EXPECT_EQ(Replay(t, *Make("steer", o)).value().accepted, 5 + 7);
}

// ---- Clone ----

// Where each VM is (gpu -1: not resident).
std::vector<std::pair<int, int>> Locations(const OnlineCluster& cluster, size_t vms) {
  std::vector<std::pair<int, int>> at;
  for (size_t v = 0; v < vms; ++v) {
    const VmLocation where = cluster.LocationOf(static_cast<int>(v));
    at.push_back({where.gpu, where.gpu < 0 ? 0 : where.start});
  }
  return at;
}

// Offers the arrivals [from, to) of `trace` to `placer`, first releasing the
// VMs that left by each arrival, as the replay does; returns where each
// arrival landed.
std::vector<std::pair<int, int>> Drive(const VmTrace& trace, OnlinePlacer& placer,
                                       OnlineCluster& cluster, int from, int to) {
  std::vector<std::pair<int, int>> landed;
  for (int i = from; i < to; ++i) {
    const VmRequest& vm = trace.vms[i];
    std::vector<std::pair<double, int>> leaving;
    for (int v = 0; v < i; ++v) {
      if (cluster.LocationOf(v).gpu >= 0 && trace.vms[v].departure_s <= vm.arrival_s) {
        leaving.push_back({trace.vms[v].departure_s, v});
      }
    }
    std::sort(leaving.begin(), leaving.end());
    for (const auto& [time, v] : leaving) {
      const int gpu = cluster.LocationOf(v).gpu;
      EXPECT_TRUE(cluster.Release(v).ok());
      placer.Released(v, gpu, cluster);
    }
    placer.Place(vm, cluster);
    landed.push_back({cluster.LocationOf(i).gpu, cluster.LocationOf(i).start});
  }
  return landed;
}

// Clone() lets a caller ask what a policy would do next: a clone, on a copy
// of the cluster, decides as the original then does on the same requests,
// and changes neither the original cluster nor the original placer.
TEST(OnlinePlacers, ACloneOnAClusterCopyDecidesAsTheOriginalAndTouchesNothing) {
  SyntheticTraceOptions so;
  so.hosts = 3;
  so.gpus_per_host = 2;
  so.vms = 160;
  so.arrivals_per_hour = 120;
  so.median_lifetime_s = 1800;
  so.seed = 5;
  const VmTrace trace = GenerateSyntheticTrace(*FindGpu("a100-40gb").value(), so).value();
  constexpr int kPrefix = 80;
  for (const std::string& policy : BuiltinPlacers().Names()) {
    SCOPED_TRACE(policy);
    OnlineCluster cluster(trace);
    auto placer = Make(policy);
    placer->Start(cluster);
    Drive(trace, *placer, cluster, 0, kPrefix);
    const auto before = Locations(cluster, trace.vms.size());
    const size_t migrations = cluster.migrations().size();

    OnlineCluster copy = cluster;
    const std::unique_ptr<OnlinePlacer> clone = placer->Clone();
    EXPECT_EQ(clone->Name(), policy);
    const auto by_clone = Drive(trace, *clone, copy, kPrefix, so.vms);
    const auto rejected = [](const std::pair<int, int>& at) { return at.first < 0; };
    EXPECT_TRUE(std::any_of(by_clone.begin(), by_clone.end(), rejected));  // a busy cluster
    EXPECT_FALSE(std::all_of(by_clone.begin(), by_clone.end(), rejected));
    EXPECT_EQ(Locations(cluster, trace.vms.size()), before);
    EXPECT_EQ(cluster.migrations().size(), migrations);
    ASSERT_TRUE(cluster.CheckInvariants().ok());

    EXPECT_EQ(Drive(trace, *placer, cluster, kPrefix, so.vms), by_clone);
    EXPECT_EQ(Locations(cluster, trace.vms.size()), Locations(copy, trace.vms.size()));
    EXPECT_EQ(cluster.migrations().size(), copy.migrations().size());
  }
}

}  // namespace
}  // namespace tessera
