// VmTraceBuilder: a test-only, fluent way to write a VmTrace by hand.
//
//   VmTrace t = VmTraceBuilder("a100-40gb")
//                   .Hosts(2, /*gpus=*/1)
//                   .Vm("1g.5gb", /*arrival_s=*/0, /*departure_s=*/10)
//                   .Vm("3g.20gb", 5)  // never departs
//                   .Build();
//
// Hosts are named host-N with 96 cores and 384 GiB unless Host() gives CPU
// and RAM; VMs ask for 1 core and 1 GiB unless Resources() changes the
// default for the VMs that follow. VMs must be added in arrival order.
#ifndef TESSERA_TESTS_VM_TRACE_BUILDER_H_
#define TESSERA_TESTS_VM_TRACE_BUILDER_H_

#include <cassert>
#include <string>
#include <string_view>

#include "tessera/online/vm_trace.h"

namespace tessera::testing {

class VmTraceBuilder {
 public:
  explicit VmTraceBuilder(std::string_view gpu) { trace_.gpu = FindGpu(gpu).value(); }

  VmTraceBuilder& Host(int gpus, double cpu_milli = 96000, double memory_mib = 393216) {
    trace_.hosts.push_back(
        {"host-" + std::to_string(trace_.hosts.size()), cpu_milli, memory_mib, gpus});
    return *this;
  }

  VmTraceBuilder& Hosts(int count, int gpus) {
    for (int i = 0; i < count; ++i) Host(gpus);
    return *this;
  }

  VmTraceBuilder& Resources(double cpu_milli, double memory_mib) {
    cpu_milli_ = cpu_milli;
    memory_mib_ = memory_mib;
    return *this;
  }

  VmTraceBuilder& Vm(std::string_view profile, double arrival_s,
                     double departure_s = kNeverDeparts) {
    const int p = trace_.gpu->ProfileIndex(profile);
    assert(p >= 0);
    const int id = static_cast<int>(trace_.vms.size());
    assert(trace_.vms.empty() || trace_.vms.back().arrival_s <= arrival_s);
    trace_.vms.push_back(
        {id, "vm-" + std::to_string(id), p, cpu_milli_, memory_mib_, arrival_s, departure_s});
    return *this;
  }

  VmTrace Build() const { return trace_; }

 private:
  VmTrace trace_;
  double cpu_milli_ = 1000;
  double memory_mib_ = 1024;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_VM_TRACE_BUILDER_H_
