// Making room for a VM on one GPU by re-creating that GPU's instances at
// other starts: the backtracking fallback of lfr (HAMi's reservation-first
// MIG scheduler falls back to a backtracking search when its greedy choice
// finds no placement) and of the steering policy. Internal to the library.
#ifndef TESSERA_ONLINE_REARRANGE_H_
#define TESSERA_ONLINE_REARRANGE_H_

#include "tessera/online/online_cluster.h"
#include "tessera/online/vm_trace.h"

namespace tessera {

// Places `vm` (not resident) on a GPU it fits only once that GPU's instances
// move: of every GPU whose host has the VM's CPU and RAM and whose free
// memory slices could hold it, the one whose rearrangement moves the fewest
// VMs, the lowest index among equals. The GPU's VMs and the new one are
// packed by PackProfiles (largest first, backtracking over starts), each
// profile's current starts tried first and the instances of one profile
// matched to the packed starts so that VMs stay where they are when they can;
// the instances are re-created together (OnlineCluster::Rearrange, one
// intra-GPU migration per VM whose start changes, at vm.arrival_s), then
// `vm` is placed. Returns false, with the cluster unchanged, when no GPU can
// take it so.
bool PlaceByRearranging(const VmRequest& vm, OnlineCluster& cluster);

}  // namespace tessera

#endif  // TESSERA_ONLINE_REARRANGE_H_
