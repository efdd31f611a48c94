// The DRA offers: a cluster steered by them places every claim where the
// policy placing the same sequence does; forced placements are adopted;
// every offer of every policy is legal; bad requests name their field.
#include "tessera/dra_offers_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "tessera/online/online_cluster.h"
#include "vm_trace_builder.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using testing::VmTraceBuilder;

DraEvent Release(std::string claim) {
  DraEvent event;
  event.op = DraEvent::Op::kRelease;
  event.claim = std::move(claim);
  return event;
}

constexpr int kNodes = 3;
constexpr int kGpusPerNode = 2;

DraOffersRequest Cluster(std::string_view policy) {
  DraOffersRequest request;
  request.gpu = "a100-80gb";
  request.policy = std::string(policy);
  for (int n = 0; n < kNodes; ++n)
    request.nodes.push_back({"node-" + std::to_string(n), kGpusPerNode});
  return request;
}

const DraOffer* OfferFor(const DraOffers& offers, const std::string& profile) {
  for (const DraOffer& offer : offers.offers) {
    if (offer.profile == profile) return &offer;
  }
  return nullptr;
}

// Random arrivals of the six profiles with a release after every third.
struct Step {
  bool release = false;
  int vm = 0;
};

TEST(DraOffers, ASteeredClusterPlacesEveryClaimWhereThePolicyDoes) {
  for (const std::string policy : {"grmu", "fair", "bf", "ff", "mcc"}) {
    SCOPED_TRACE(policy);
    std::mt19937 rng(7);
    VmTraceBuilder builder("a100-80gb");
    builder.Hosts(kNodes, kGpusPerNode);
    const std::vector<std::string> profiles = {"1g.10gb", "1g.20gb", "2g.20gb",
                                               "3g.40gb", "4g.40gb", "7g.80gb"};
    std::vector<Step> steps;
    for (int i = 0; i < 60; ++i) {
      builder.Vm(profiles[rng() % profiles.size()], i);
      steps.push_back({false, i});
      if (i % 3 == 2) steps.push_back({true, static_cast<int>(rng() % (i + 1))});
    }
    const VmTrace trace = builder.Build();

    // The policy itself, as `tessera replay --no-defragment` runs it.
    PlacerOptions options;
    options.defragment = false;
    OnlineCluster cluster(trace);
    auto placer = BuiltinPlacers().Create(policy, options).value();
    placer->Start(cluster);

    DraOffersRequest request = Cluster(policy);
    int accepted = 0;
    for (const Step& step : steps) {
      const VmRequest& vm = trace.vms[step.vm];
      const std::string claim = "claim-" + std::to_string(step.vm);
      if (step.release) {
        const VmLocation at = cluster.LocationOf(step.vm);
        if (at.gpu < 0) continue;  // rejected, or gone already
        ASSERT_TRUE(cluster.Release(step.vm).ok());
        placer->Released(step.vm, at.gpu, cluster);
        request.events.push_back(Release(claim));
        continue;
      }
      const bool placed = placer->Place(vm, cluster);
      Result<DraOffers> offers = RunDraOffers(request);
      ASSERT_TRUE(offers.ok()) << offers.status().ToString();
      EXPECT_TRUE(offers->ignored.empty());
      EXPECT_EQ(offers->adopted, 0);
      const std::string& profile = trace.gpu->profiles[vm.profile].name;
      const DraOffer* offer = OfferFor(*offers, profile);
      ASSERT_EQ(offer != nullptr, placed) << "VM " << step.vm << " " << profile;
      if (!placed) continue;
      ++accepted;
      const VmLocation at = cluster.LocationOf(step.vm);
      EXPECT_EQ(offer->node, "node-" + std::to_string(at.gpu / kGpusPerNode));
      EXPECT_EQ(offer->gpu, at.gpu % kGpusPerNode);
      EXPECT_EQ(offer->start, at.start);
      request.events.push_back(
          {DraEvent::Op::kPlace, claim, profile, offer->node, offer->gpu, offer->start});
    }
    EXPECT_GT(accepted, 20);
    const DraOffers last = RunDraOffers(request).value();
    EXPECT_EQ(last.followed, accepted);
  }
}

TEST(DraOffers, APlacementThePolicyWouldNotChooseIsAdoptedAndNeverOfferedAgain) {
  DraOffersRequest request = Cluster("grmu");
  request.events.push_back({DraEvent::Op::kPlace, "a", "3g.40gb", "node-2", 1, 4});
  const DraOffers offers = RunDraOffers(request).value();
  EXPECT_EQ(offers.adopted, 1);
  EXPECT_EQ(offers.followed, 0);
  for (const DraOffer& offer : offers.offers) {
    if (offer.node == "node-2" && offer.gpu == 1) {
      EXPECT_LT(offer.start, 4) << offer.profile;
    }
  }
}

TEST(DraOffers, EveryOfferOfEveryPolicyIsOnFreeSlices) {
  const GpuModel& gpu = *FindGpu("a100-80gb").value();
  for (const std::string& policy : BuiltinPlacers().Names()) {
    SCOPED_TRACE(policy);
    DraOffersRequest request = Cluster(policy);
    std::mt19937 rng(11);
    for (int i = 0; i < 30; ++i) {
      const DraOffers offers = RunDraOffers(request).value();
      if (offers.offers.empty()) break;
      // Occupied slices per (node, GPU) from the log.
      std::map<std::pair<std::string, int>, int> used;
      for (const DraEvent& e : request.events) {
        const MigProfile& p = *gpu.FindProfile(e.profile);
        used[{e.node, e.gpu}] |= ((1 << p.memory_slices) - 1) << e.start;
      }
      for (const DraOffer& offer : offers.offers) {
        const MigProfile& p = *gpu.FindProfile(offer.profile);
        const int mask = ((1 << p.memory_slices) - 1) << offer.start;
        const int overlap = used[{offer.node, offer.gpu}] & mask;
        EXPECT_EQ(overlap, 0) << offer.profile << " " << offer.node;
      }
      const DraOffer& take = offers.offers[rng() % offers.offers.size()];
      request.events.push_back({DraEvent::Op::kPlace, "c" + std::to_string(i), take.profile,
                                take.node, take.gpu, take.start});
    }
  }
}

TEST(DraOffers, EventsThatDoNotFitTheClusterAreIgnoredAndNamed) {
  DraOffersRequest request = Cluster("ff");
  request.events.push_back({DraEvent::Op::kPlace, "a", "1g.10gb", "gone", 0, 0});
  request.events.push_back({DraEvent::Op::kPlace, "b", "1g.10gb", "node-0", 5, 0});
  request.events.push_back(Release("c"));
  request.events.push_back({DraEvent::Op::kPlace, "d", "7g.80gb", "node-0", 0, 0});
  request.events.push_back({DraEvent::Op::kPlace, "e", "1g.10gb", "node-0", 0, 0});
  const DraOffers offers = RunDraOffers(request).value();
  ASSERT_EQ(offers.ignored.size(), 4u);
  EXPECT_THAT(offers.ignored[0], HasSubstr("events[0] (a): its node is not listed"));
  EXPECT_THAT(offers.ignored[1], HasSubstr("events[1] (b): its GPU is not one of the node's"));
  EXPECT_THAT(offers.ignored[2], HasSubstr("events[2] (c): released, but not placed"));
  EXPECT_THAT(offers.ignored[3], HasSubstr("events[4] (e)"));
}

TEST(DraOffers, BadRequestsNameTheirField) {
  const auto error = [](std::string_view json) {
    Result<DraOffersRequest> parsed = ParseDraOffersRequest(json);
    if (!parsed.ok()) return parsed.status().message();
    Result<DraOffers> run = RunDraOffers(*parsed);
    return run.ok() ? std::string("ok") : run.status().message();
  };
  const std::string head = R"({"gpu":"a100-80gb","policy":"grmu",)";
  EXPECT_THAT(error("{"), HasSubstr("invalid JSON"));
  EXPECT_THAT(error(head + R"("nodes":[],"events":[],"x":1})"), HasSubstr("x"));
  EXPECT_THAT(error(head + R"("nodes":[{"name":"a","gpus":0}],"events":[]})"),
              HasSubstr("nodes[0].gpus"));
  EXPECT_THAT(error(head + R"("nodes":[{"name":"a","gpus":1},{"name":"a","gpus":1}],"events":[]})"),
              HasSubstr("nodes[1].name: 'a' is listed twice"));
  EXPECT_THAT(error(head + R"("nodes":[],"events":[{"op":"move","claim":"a"}]})"),
              HasSubstr("events[0].op"));
  EXPECT_THAT(
      error(head +
            R"("nodes":[],"events":[{"op":"place","claim":"a","node":"n","gpu":0,"start":0}]})"),
      HasSubstr("events[0].profile"));
  EXPECT_THAT(
      error(
          head +
          R"("nodes":[],"events":[{"op":"place","claim":"a","profile":"1g.5gb","node":"n","gpu":0,"start":0}]})"),
      HasSubstr("events[0].profile: unknown profile '1g.5gb'"));
  EXPECT_THAT(error(R"({"gpu":"t4-16gb","policy":"grmu","nodes":[],"events":[]})"),
              HasSubstr("gpu"));
  EXPECT_THAT(error(R"({"gpu":"a100-80gb","policy":"worst","nodes":[],"events":[]})"),
              HasSubstr("policy"));
  EXPECT_EQ(error(head + R"("nodes":[{"name":"a","gpus":8}],"events":[]})"), "ok");
}

}  // namespace
}  // namespace tessera
