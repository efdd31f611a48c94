// A synthetic VM trace for tests and what-if studies: identical hosts,
// Poisson arrivals, profiles drawn from a weighted mix, lognormal lifetimes.
//
// Thread-safety: free function; the RNG is seeded from the options.
#ifndef TESSERA_SYNTHETIC_TRACE_H_
#define TESSERA_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/online/vm_trace.h"

namespace tessera {

struct SyntheticTraceOptions {
  int hosts = 4;
  int gpus_per_host = 2;
  double host_cpu_milli = 96000;
  double host_memory_mib = 393216;
  int vms = 200;
  double arrivals_per_hour = 60;  // Poisson rate
  // Weight per profile, indexed like gpu.profiles (+me profiles must be 0);
  // empty = equal weights over every profile without media extensions.
  std::vector<double> profile_weights;
  double median_lifetime_s = 3600;  // lognormal median; kNeverDeparts = never
  double lifetime_sigma = 1.0;      // lognormal shape (sigma of the log)
  double vm_cpu_milli = 4000;
  double vm_memory_mib = 16384;
  std::uint64_t seed = 1;

  // InvalidArgument naming the first bad field.
  Status Validate(const GpuModel& gpu) const;
};

// Deterministic for given options. REQUIRES: `gpu` outlives the trace.
Result<VmTrace> GenerateSyntheticTrace(const GpuModel& gpu, const SyntheticTraceOptions& options);

}  // namespace tessera

#endif  // TESSERA_SYNTHETIC_TRACE_H_
