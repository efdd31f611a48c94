// Sharing: the ways a plan shares GPUs among services, as planners make them
// and deployments record them.
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_SHARING_H_
#define TESSERA_SHARING_H_

#include <string_view>

#include "tessera/status.h"

namespace tessera {

enum class Sharing {
  kMig,     // MIG instances, one process each
  kMigMps,  // MIG instances, each holding one or more MPS processes
  kMps,     // whole GPUs (MIG off) shared by MPS processes with SM shares
};

// "mig" | "mig+mps" | "mps".
std::string_view SharingName(Sharing sharing);
// The inverse of SharingName; InvalidArgument naming the accepted words.
Result<Sharing> ParseSharing(std::string_view text);
// True for kMig and kMigMps: the GPUs are cut into MIG instances.
inline bool UsesMig(Sharing sharing) { return sharing != Sharing::kMps; }

}  // namespace tessera

#endif  // TESSERA_SHARING_H_
