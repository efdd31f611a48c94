// The serving simulator's view of an MPS plan: co-located processes' batch
// latencies from the iGniter model.
#include <fmt/format.h>

#include <map>

#include "simulate/serving_models.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// Time process `k` of `gpu` is busy with a batch of 1..its planned batch,
// the others running their planned batches: 1000 b / predicted throughput,
// i.e. GPU time plus the result's copy back. The input copy overlaps the
// previous batch, as the iGniter model's throughput assumes, so a request's
// simulated latency leaves out its batch's input copy (b x d_load / B_pcie,
// 0.06 ms per 224x224 image on the V100).
std::vector<double> BatchLatencies(const Problem& problem, const std::vector<int>& service_of,
                                   const GpuAssignment& gpu, size_t k) {
  std::vector<Colocated> colocated;
  for (size_t j = 0; j < gpu.processes().size(); ++j) {
    const MpsProcess& p = gpu.processes()[j];
    colocated.push_back({&problem.Workload(service_of[j]), p.batch, p.resource_pct});
  }
  std::vector<double> out;
  for (int b = 1; b <= gpu.processes()[k].batch; ++b) {
    colocated[k].batch = b;
    const Prediction p = PredictColocated(problem.mps()->coefficients.hardware, colocated)[k];
    out.push_back(1000.0 * b / p.throughput_rps);
  }
  return out;
}

}  // namespace

Status AddMpsInstances(const Deployment& deployment, const Problem& problem, ServingModel& model) {
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < model.services.size(); ++i) {
    index_of[model.services[i].name] = static_cast<int>(i);
  }
  for (const GpuAssignment& gpu : deployment.gpus) {
    std::vector<int> service_of;
    for (const MpsProcess& p : gpu.processes()) {
      auto it = index_of.find(p.service);
      if (it == index_of.end()) {
        return Status::InvalidArgument(
            fmt::format("gpu {}: process of {} names no service of the scenario", gpu.index,
                        QuoteForMessage(p.service)));
      }
      service_of.push_back(it->second);
    }
    for (size_t k = 0; k < gpu.processes().size(); ++k) {
      const MpsProcess& p = gpu.processes()[k];
      ServingInstance inst;
      inst.service = p.service;
      inst.service_index = service_of[k];
      inst.gpu = gpu.index;
      inst.profile = fmt::format("mps {:g}%", p.resource_pct);
      inst.compute_slices = 1;
      inst.batch = p.batch;
      inst.latency_ms = BatchLatencies(problem, service_of, gpu, k);
      model.services[service_of[k]].instances.push_back(static_cast<int>(model.instances.size()));
      model.instances.push_back(std::move(inst));
    }
  }
  return Status::Ok();
}

}  // namespace tessera
