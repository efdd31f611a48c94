// The DRA driver's route of `tessera serve` (docs/dra.md): POST
// /v1/dra/offers answers the mig.tessera.io controller which placement the
// policy gives the next claim of each profile (dra_offers_request.h). It
// keeps no state, so every replica answers it, the leader or not. Internal
// to the control floor; http_server.cc calls it.
#ifndef TESSERA_CONTROL_DRA_ROUTES_H_
#define TESSERA_CONTROL_DRA_ROUTES_H_

#include <string_view>

#include "tessera/control/control_plane.h"

namespace tessera {

inline constexpr std::string_view kDraOffersRoute = "/v1/dra/offers";

// 200 with the offers JSON; 400 naming the field of a bad request; 405 for
// a method other than POST.
ApiResponse HandleDraOffers(const ApiRequest& request);

}  // namespace tessera

#endif  // TESSERA_CONTROL_DRA_ROUTES_H_
