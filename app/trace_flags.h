// The trace flags of `tessera replay` and `tessera k8s manifests`: an
// Alibaba-format node and pod list, the GPU model they become and the
// stress knobs (--hosts, --gpus-per-host, --max-pods, --lifetime).
#ifndef TESSERA_APP_TRACE_FLAGS_H_
#define TESSERA_APP_TRACE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "tessera/status.h"
#include "tessera/vm_trace.h"

namespace tessera::cli {

struct TraceFlags {
  std::string nodes;
  std::string pods;
  std::string gpu = "a100-40gb";
  std::optional<int> hosts;
  std::optional<int> gpus_per_host;
  std::optional<int> max_pods;
  std::string lifetime = "trace";
};

void AddTraceFlags(CLI::App& cmd, TraceFlags& flags);

// The trace as loaded (LoadAlibabaTrace) and shaped (ShapeTrace);
// InvalidArgument naming the flag or the file's line and field.
Result<VmTrace> LoadShapedTrace(const TraceFlags& flags);

}  // namespace tessera::cli

#endif  // TESSERA_APP_TRACE_FLAGS_H_
