// BuildGsliceWorkload of gslice_workload.h: a scenario's services with their
// performance at a GPU%.
#include "tessera/simulate/gslice_workload.h"

#include <fmt/format.h>

#include <utility>

namespace tessera {

Result<GsliceWorkload> BuildGsliceWorkload(const Scenario& scenario, const GpuModel& gpu,
                                           const ProfileTable& profiles) {
  GsliceWorkload w;
  w.gpu = gpu.name;
  for (const Service& s : scenario.services) {
    Result<ShareLatencyModel> perf = ShareLatencyModel::Build(profiles, gpu, s.model);
    if (!perf.ok()) {
      return perf.status().WithContext(
          fmt::format("{}: field 'model'", ServiceLocation(scenario, s.line)));
    }
    w.services.push_back({s.name, s.model, s.rate_rps, s.slo_ms, std::move(perf).value()});
  }
  return w;
}

}  // namespace tessera
