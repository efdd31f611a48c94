// The serving simulator's view of an MPS plan: co-located processes' batch
// latencies from the iGniter model.
#include <fmt/format.h>

#include "tessera/mps_plan.h"

namespace tessera {
namespace {

// Time process `k` of `gpu` is busy with a batch of 1..its planned batch,
// the others running their planned batches: 1000 b / predicted throughput,
// i.e. GPU time plus the result's copy back. The input copy overlaps the
// previous batch, as the iGniter model's throughput assumes, so a request's
// simulated latency leaves out its batch's input copy (b x d_load / B_pcie,
// 0.06 ms per 224x224 image on the V100).
std::vector<double> BatchLatencies(const MpsProblem& problem, const MpsGpuPlan& gpu, size_t k) {
  std::vector<Colocated> colocated;
  for (const MpsProcess& p : gpu.processes) {
    colocated.push_back({&problem.Workload(p.share.service), p.share.batch, p.share.resource_pct});
  }
  std::vector<double> out;
  for (int b = 1; b <= gpu.processes[k].share.batch; ++b) {
    colocated[k].batch = b;
    const Prediction p = PredictColocated(problem.coefficients.hardware, colocated)[k];
    out.push_back(1000.0 * b / p.throughput_rps);
  }
  return out;
}

}  // namespace

Result<ServingModel> BuildMpsServingModel(const MpsDeployment& deployment,
                                          const MpsProblem& problem) {
  const std::vector<Service>& services = problem.scenario.services;
  ServingModel model;
  for (const Service& s : services) model.services.push_back({s.name, s.rate_rps, s.slo_ms, {}});
  for (const MpsGpuPlan& gpu : deployment.gpus) {
    for (size_t k = 0; k < gpu.processes.size(); ++k) {
      const MpsProcess& p = gpu.processes[k];
      const int s = p.share.service;
      if (s < 0 || s >= static_cast<int>(services.size()) || services[s].name != p.service) {
        return Status::InvalidArgument(fmt::format(
            "gpu {}: process of '{}' names no service of the scenario", gpu.index, p.service));
      }
      ServingInstance inst;
      inst.service = p.service;
      inst.service_index = s;
      inst.gpu = gpu.index;
      inst.profile = fmt::format("mps {:g}%", p.share.resource_pct);
      inst.compute_slices = 1;
      inst.batch = p.share.batch;
      inst.latency_ms = BatchLatencies(problem, gpu, k);
      model.services[s].instances.push_back(static_cast<int>(model.instances.size()));
      model.instances.push_back(std::move(inst));
    }
  }
  return model;
}

}  // namespace tessera
