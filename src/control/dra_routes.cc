// POST /v1/dra/offers (dra_routes.h).
#include "control/dra_routes.h"

#include "control/api_json.h"
#include "tessera/dra_offers_request.h"

namespace tessera {

ApiResponse HandleDraOffers(const ApiRequest& request) {
  ApiResponse response;
  response.route = std::string(kDraOffersRoute);
  const auto fail = [&](const ApiError& error) {
    response.status = error.status;
    response.body = FormatApiError(error);
    return response;
  };
  if (request.method != "POST") {
    return fail({405, "method_not_allowed",
                 request.method + " is not allowed on " + std::string(kDraOffersRoute),
                 std::nullopt});
  }
  if (std::optional<ApiError> media = CheckMediaType(request.body, request.content_type)) {
    return fail(*media);
  }
  Result<DraOffersRequest> parsed = ParseDraOffersRequest(request.body);
  if (!parsed.ok()) return fail(ErrorFromStatus(parsed.status()));
  Result<DraOffers> offers = RunDraOffers(*parsed);
  if (!offers.ok()) return fail(BadRequest(offers.status().message()));
  response.status = 200;
  response.body = FormatDraOffersJson(*offers);
  return response;
}

}  // namespace tessera
