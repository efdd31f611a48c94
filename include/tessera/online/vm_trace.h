// VmTrace: the input of an online replay. A cluster of hosts (CPU, RAM and a
// number of GPUs of one catalog model) and a time-ordered list of VM / pod
// requests, each asking for one MIG instance of a profile plus CPU and RAM,
// arriving at a time and (optionally) leaving later.
//
// Shaping turns a recorded trace into a stressed one (fewer hosts, a GPU
// count per host, longer or endless lifetimes), so operators can replay their
// own history against a smaller or busier cluster.
//
// Thread-safety: values.
#ifndef TESSERA_VM_TRACE_H_
#define TESSERA_VM_TRACE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/status.h"

namespace tessera {

inline constexpr double kNeverDeparts = std::numeric_limits<double>::infinity();

struct HostSpec {
  std::string name;
  double cpu_milli = 0;   // CPU capacity, thousandths of a core
  double memory_mib = 0;  // RAM capacity
  int gpus = 0;           // GPUs of the trace's GPU model
};

struct VmRequest {
  int id = 0;        // dense: the request's index in VmTrace::vms
  std::string name;  // as in the source, e.g. "openb-pod-0042"
  int profile = 0;   // index into the trace GPU's profiles (never a +me profile)
  double cpu_milli = 0;
  double memory_mib = 0;
  double arrival_s = 0;
  double departure_s = kNeverDeparts;  // >= arrival_s (equal: leaves at once), or kNeverDeparts
};

struct VmTrace {
  const GpuModel* gpu = nullptr;  // the model of every GPU in the cluster
  std::vector<HostSpec> hosts;
  std::vector<VmRequest> vms;  // sorted by arrival_s (ties: source order), ids 0..n-1
  // What the loader kept, dropped and chose, one line each, for people
  // ("dropped 75 pods asking for more than one GPU").
  std::vector<std::string> notes;

  // GPUs of every host, summed in 64 bits: a trace read from a file may
  // declare more than an int holds (loaders and ShapeTrace reject more than
  // limits::kClusterGpus).
  std::int64_t TotalGpus() const;
};

// How a VM's recorded lifetime is replayed.
struct Lifetime {
  enum class Mode { kTrace, kNone, kScale };
  Mode mode = Mode::kTrace;  // kNone: never departs; kScale: lifetime x factor
  double factor = 1;

  // "trace", "none" or "scale:K" (K finite > 0); InvalidArgument otherwise.
  static Result<Lifetime> Parse(std::string_view text);
};

// Stress knobs applied to a loaded trace, in this order: keep the first
// `max_hosts` hosts, set every host's GPU count, keep the first `max_vms`
// requests (noted), rescale lifetimes. Hosts
// left with no GPU are dropped (noted). Defaults change nothing.
struct TraceShaping {
  std::optional<int> max_hosts;      // >= 1
  std::optional<int> gpus_per_host;  // >= 1
  std::optional<int> max_vms;        // >= 1
  Lifetime lifetime;

  Status Validate() const;
};

// The shaped trace; InvalidArgument from Validate(), when no host is left,
// when the hosts hold more than limits::kClusterGpus GPUs in all, or when a
// scaled lifetime departs beyond limits::kTraceTimeS.
Result<VmTrace> ShapeTrace(VmTrace trace, const TraceShaping& shaping);

// Requests per profile, indexed like trace.gpu->profiles.
std::vector<int> RequestsPerProfile(const VmTrace& trace);

}  // namespace tessera

#endif  // TESSERA_VM_TRACE_H_
