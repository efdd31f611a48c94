// The DRA driver's question (docs/dra.md): one POST /v1/dra/offers as
// `tessera serve` answers it, on a cluster of 200 nodes x 8 A100-80GB: the
// body parsed, the log of allocations and releases replayed through the
// policy, one more claim of each of the six profiles asked for, the answer
// serialised. The log is what the policy itself did on a random stream of
// claims (seeded), each released after ten later arrivals, so that the
// cluster stays part-full; its length is the argument.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tessera/dra_offers_request.h"
#include "tessera/gpu_catalog.h"
#include "tessera/online/online_cluster.h"

namespace tessera {
namespace {

constexpr int kNodes = 200;
constexpr int kGpusPerNode = 8;

std::string NodeName(int n) { return "node-" + std::to_string(n); }

// The request body after `events` events of `policy` placing random claims.
std::string OffersBody(int events, const std::string& policy) {
  const GpuModel& gpu = **FindMigGpu("a100-80gb");
  VmTrace trace;
  trace.gpu = &gpu;
  for (int n = 0; n < kNodes; ++n) trace.hosts.push_back({NodeName(n), 1e15, 1e15, kGpusPerNode});
  const std::vector<int> profiles = CapabilityTable(gpu).profiles();
  std::mt19937 rng(5);
  nlohmann::json log = nlohmann::json::array();
  // Each arrival makes at most two events (its place, an older release):
  // three per event are more than enough.
  std::vector<int> arrivals;
  for (int id = 0; id < 3 * events; ++id) {
    trace.vms.push_back({id, "c" + std::to_string(id), profiles[rng() % profiles.size()], 0, 0,
                         static_cast<double>(id), kNeverDeparts});
    arrivals.push_back(id);
  }
  OnlineCluster cluster(trace);
  PlacerOptions options;
  options.defragment = false;
  auto placer = BuiltinPlacers().Create(policy, options).value();
  placer->Start(cluster);
  for (int vm : arrivals) {
    if (static_cast<int>(log.size()) >= events) break;
    if (placer->Place(trace.vms[vm], cluster)) {
      const VmLocation at = cluster.LocationOf(vm);
      log.push_back({{"op", "place"},
                     {"claim", trace.vms[vm].name},
                     {"profile", gpu.profiles[trace.vms[vm].profile].name},
                     {"node", NodeName(at.gpu / kGpusPerNode)},
                     {"gpu", at.gpu % kGpusPerNode},
                     {"start", at.start}});
    }
    const int old = vm - 10;
    if (old >= 0 && cluster.LocationOf(old).gpu >= 0) {
      const int from = cluster.LocationOf(old).gpu;
      (void)cluster.Release(old);
      placer->Released(old, from, cluster);
      log.push_back({{"op", "release"}, {"claim", trace.vms[old].name}});
    }
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (int n = 0; n < kNodes; ++n) nodes.push_back({{"name", NodeName(n)}, {"gpus", kGpusPerNode}});
  return nlohmann::json{{"gpu", "a100-80gb"}, {"policy", policy}, {"nodes", nodes}, {"events", log}}
      .dump();
}

void BM_DraOffers(benchmark::State& state) {
  const std::vector<std::string> policies = {"grmu", "bf"};
  const std::string body = OffersBody(static_cast<int>(state.range(0)), policies[state.range(1)]);
  size_t offers = 0;
  for (auto _ : state) {
    Result<DraOffersRequest> request = ParseDraOffersRequest(body);
    Result<DraOffers> answer = RunDraOffers(request.value());
    const std::string text = FormatDraOffersJson(answer.value());
    offers = answer->offers.size();
    benchmark::DoNotOptimize(text.size());
  }
  state.counters["body_kb"] = body.size() / 1000.0;
  state.counters["offers"] = static_cast<double>(offers);
}
// Args: events in the log, policy (0 grmu, 1 bf).
BENCHMARK(BM_DraOffers)->ArgsProduct({{100, 1000, 10000}, {0, 1}})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera
