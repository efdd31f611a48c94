// GsliceWorkload: what the GSLICE runtime (gslice_runtime.h) runs on one whole
// GPU shared through MPS: the scenario's services, each with its performance
// at a GPU% (ShareLatencyModel).
//
// Thread-safety: values; BuildGsliceWorkload is a pure function.
#ifndef TESSERA_GSLICE_WORKLOAD_H_
#define TESSERA_GSLICE_WORKLOAD_H_

#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"
#include "tessera/simulate/share_latency_model.h"
#include "tessera/status.h"

namespace tessera {

struct GsliceService {
  std::string name;
  std::string model;
  double rate_rps = 0;
  double slo_ms = 0;
  ShareLatencyModel performance;
};

struct GsliceWorkload {
  std::string gpu;  // catalog name
  std::vector<GsliceService> services;
};

// The services of `scenario` on `gpu` with their performance models.
// NotFound "<file>:<line>: field 'model': ..." for a model `profiles` lacks.
Result<GsliceWorkload> BuildGsliceWorkload(const Scenario& scenario, const GpuModel& gpu,
                                           const ProfileTable& profiles);

}  // namespace tessera

#endif  // TESSERA_GSLICE_WORKLOAD_H_
