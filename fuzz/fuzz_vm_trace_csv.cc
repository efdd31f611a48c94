// Fuzzes the Alibaba VM/pod trace reader: the input, split at its first NUL
// byte, is the node list and the pod list.
#include "fuzz_input.h"
#include "online/alibaba_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [nodes, pods] = tessera::fuzz::TwoParts(tessera::fuzz::Text(data, size));
  const std::string nodes_path = tessera::fuzz::AsFile(nodes, "nodes.csv");
  const std::string pods_path = tessera::fuzz::AsFile(pods, "pods.csv");
  (void)tessera::LoadAlibabaTrace(nodes_path, pods_path, **tessera::FindGpu("a100-40gb"));
  return 0;
}
