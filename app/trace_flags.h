// The trace flags of `tessera replay` and `tessera k8s manifests`: an
// Alibaba-format node and pod list, the GPU model they become and the
// stress knobs (--hosts, --gpus-per-host, --max-pods, --lifetime), declared
// onto a TraceRequest (tessera/replay_request.h), which loads and shapes it.
#ifndef TESSERA_APP_TRACE_FLAGS_H_
#define TESSERA_APP_TRACE_FLAGS_H_

#include <CLI/CLI.hpp>

#include "tessera/replay_request.h"

namespace tessera::cli {

void AddTraceFlags(CLI::App& cmd, TraceRequest& trace);

}  // namespace tessera::cli

#endif  // TESSERA_APP_TRACE_FLAGS_H_
