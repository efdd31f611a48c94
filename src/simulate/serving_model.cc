// BuildServingModel: a Deployment's segments with the batch latencies the
// simulator runs them at (simulator.h).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "simulate/serving_models.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/metrics.h"
#include "tessera/simulator.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// Latency of a batch of b = 1..batch: profiled, interpolated, or (below the
// smallest profiled batch) the smallest's. REQUIRES: by_batch holds `batch`.
std::vector<double> BatchLatencies(const std::map<int, double>& by_batch, int batch) {
  std::vector<double> latency(batch);
  for (int b = 1; b <= batch; ++b) {
    auto above = by_batch.lower_bound(b);  // exists: `batch` is profiled
    if (above->first == b || above == by_batch.begin()) {
      latency[b - 1] = above->second;
      continue;
    }
    auto below = std::prev(above);
    const double share = static_cast<double>(b - below->first) / (above->first - below->first);
    latency[b - 1] = below->second + share * (above->second - below->second);
  }
  return latency;
}

}  // namespace

Result<std::vector<double>> ProfiledBatchLatencies(const ProfileTable& profiles,
                                                   const ProfileKey& key) {
  std::map<int, double> by_batch;
  for (const ProfileEntry* e : profiles.EntriesFor(key.model, key.gpu)) {
    if (e->key.profile == key.profile && e->key.procs == key.procs) {
      by_batch[e->key.batch] = e->latency_ms;
    }
  }
  if (!by_batch.count(key.batch)) {
    return Status::InvalidArgument("no profile for " + DescribeKey(key));
  }
  return BatchLatencies(by_batch, key.batch);
}

Result<ServingModel> BuildServingModel(const Deployment& deployment, const Problem& problem) {
  ServingModel model;
  model.rule = deployment.rule;
  std::map<std::string, int> service_index;
  for (const Service& s : problem.scenario().services) {
    service_index[s.name] = static_cast<int>(model.services.size());
    model.services.push_back({s.name, s.rate_rps, s.slo_ms, {}});
  }
  if (problem.mps()) {
    TESSERA_RETURN_IF_ERROR(AddMpsInstances(deployment, problem, model));
    return model;
  }
  const ProfileTable& profiles = problem.profiles();
  Result<const GpuModel*> fallback = FindGpu(deployment.gpu);
  if (!fallback.ok()) return fallback.status().WithContext("deployment gpu");
  for (const GpuAssignment& g : deployment.gpus) {
    const GpuModel& gpu = ModelOf(deployment, g, **fallback);
    for (const Instance& inst : g.instances()) {
      const std::string where = fmt::format("gpu {} {}@{}", g.index, inst.profile, inst.start);
      auto it = service_index.find(inst.service);
      if (it == service_index.end()) {
        return Status::InvalidArgument(where + ": service " + QuoteForMessage(inst.service) +
                                       " is not in the scenario");
      }
      Result<std::vector<double>> latencies = ProfiledBatchLatencies(
          profiles, {inst.model, gpu.name, inst.profile, inst.batch, inst.procs});
      if (!latencies.ok()) return latencies.status().WithContext(where);
      const MigProfile* profile = gpu.FindProfile(inst.profile);
      ServingInstance si{inst.service, it->second, g.index,
                         inst.profile, inst.start, profile ? profile->compute_slices : 0,
                         inst.procs,   inst.batch, std::move(*latencies)};
      model.services[it->second].instances.push_back(static_cast<int>(model.instances.size()));
      model.instances.push_back(std::move(si));
    }
  }
  return model;
}

}  // namespace tessera
