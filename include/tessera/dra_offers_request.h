// The DRA driver's question to the policy (`POST /v1/dra/offers`, docs/dra.md):
// given a cluster's MIG nodes and the ordered log of every allocation and
// release so far, which placement would the policy give the next claim of
// each profile?
//
// The answer is a function of the request alone. The log is replayed through
// a fresh cluster and placer of the same code `tessera replay` runs: each
// "place" event is offered to the policy; where it chose the recorded
// placement the event is followed, where it did not (the allocator took
// another device, as in publish-every-placement mode) the recorded placement
// is forced and the policy adopts it. Then, for each profile, a copy of the
// cluster and a clone of the placer (OnlinePlacer::Clone) are asked for one
// more VM of that profile. A DRA
// allocation cannot move a running instance, so the policies run without
// defragmentation and consolidation.
//
// Errors (InvalidArgument) name the field of the request JSON, e.g.
// "events[3].profile: unknown profile '1g.5gb' of A100-80GB (known: ...)".
//
// Thread-safety: functions of their arguments.
#ifndef TESSERA_DRA_OFFERS_REQUEST_H_
#define TESSERA_DRA_OFFERS_REQUEST_H_

#include <string>
#include <string_view>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/online/online_placer.h"
#include "tessera/status.h"

namespace tessera {

struct DraNode {
  std::string name;
  int gpus = 0;  // MIG GPUs of the request's model, indexes 0..gpus-1
};

struct DraEvent {
  enum class Op { kPlace, kRelease };
  Op op = Op::kPlace;
  std::string claim;  // the claim's device key; unique among resident ones
  // kPlace only:
  std::string profile;  // "1g.10gb"
  std::string node;
  int gpu = 0;
  int start = 0;
};

struct DraOffersRequest {
  std::string gpu = "a100-80gb";  // catalog model of every node's GPUs
  std::string policy = "grmu";    // one of BuiltinPlacers()
  PlacerOptions options;          // defragment and consolidation are forced off
  std::vector<DraNode> nodes;     // the policy's GPU order: nodes in order, GPUs in order
  std::vector<DraEvent> events;
};

struct DraOffer {
  std::string profile;
  std::string node;
  int gpu = 0;
  int start = 0;
};

struct DraOffers {
  const GpuModel* gpu = nullptr;
  std::vector<DraOffer> offers;  // at most one per profile, in catalog order
  int followed = 0;              // place events the policy chose itself
  int adopted = 0;               // place events forced where the allocator put them
  // Events that do not fit the cluster (a node or GPU not listed, slices
  // taken, a release of a claim not resident): skipped, each named here.
  std::vector<std::string> ignored;
};

// The request JSON (docs/openapi.json, DraOffersRequest): {"gpu", "policy",
// "heavy_share"?, "fair_factor"?, "nodes": [{"name", "gpus"}], "events":
// [{"op": "place"|"release", "claim", "profile", "node", "gpu", "start"}]}.
// Unknown fields are refused, as are more than 100,000 nodes, 100,000 GPUs
// in all, 64 GPUs a node or 1,000,000 events.
Result<DraOffersRequest> ParseDraOffersRequest(std::string_view json);

Result<DraOffers> RunDraOffers(const DraOffersRequest& request);

// {"geometry": {"model", "memory_slices", "compute_slices", "memory_mib",
// "placements": [{"profile", "profile_id", "start", "size",
// "compute_slices", "memory_mib"}]}, "offers": [...], "followed",
// "adopted", "ignored": [...]}.
std::string FormatDraOffersJson(const DraOffers& offers);

}  // namespace tessera

#endif  // TESSERA_DRA_OFFERS_REQUEST_H_
