// Loader for the Alibaba GPU cluster trace 2023 ("openb", Weng et al., USENIX
// ATC 2023), mapped to MIG as the GRMU paper's section 8.1 does.
//
// Hosts: every row of the node list (`sn,cpu_milli,memory_mib,gpu,model`);
// each of a node's GPUs becomes one GPU of the target model (A100-40GB by
// default), whatever the recorded model. Nodes without GPUs are dropped.
//
// VMs: the pod list (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,...,
// creation_time,deletion_time,...`). In order:
//  1. keep pods whose total GPU need u = num_gpu x gpu_milli / 1000 is at
//     most one GPU (num_gpu <= 1);
//  2. drop creation-time outliers: outside [Q1 - 1.5 IQR, Q3 + 1.5 IQR], with
//     Q1/Q3 the 25th/75th percentiles by linear interpolation between order
//     statistics (on the default list: 8,077 -> 8,063 pods, the paper's count);
//  3. map u to the profile k minimising |U_k / max U - u / max u| with
//     U_k = compute slices x memory slices (Eq. 27-30); ties go to the smaller
//     profile. Read literally, u = 0 (CPU-only pods) maps to the smallest
//     profile.
// Arrival = creation_time, departure = deletion_time (a pod deleted at its
// creation time departs at once after arriving).
//
// Every dropped row is counted in VmTrace::notes. Malformed input is an
// InvalidArgument naming file, line and field.
//
// Thread-safety: free functions without state.
#ifndef TESSERA_ALIBABA_TRACE_H_
#define TESSERA_ALIBABA_TRACE_H_

#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/online/vm_trace.h"

namespace tessera {

// REQUIRES: `gpu` outlives the returned trace.
Result<VmTrace> LoadAlibabaTrace(const std::string& nodes_path, const std::string& pods_path,
                                 const GpuModel& gpu);

// The profile Eq. 30 gives a pod needing `gpu_share` of a GPU (0..max_share),
// normalised by `max_share` (the largest need in the trace, > 0).
int ProfileForGpuShare(const GpuModel& gpu, double gpu_share, double max_share);

}  // namespace tessera

#endif  // TESSERA_ALIBABA_TRACE_H_
