// What the kube client's transport (kube_client.cc) and its watch decoder
// (watch_stream.cc) say about the API server's errors. Internal to the k8s
// floor.
#ifndef TESSERA_K8S_KUBE_ERRORS_H_
#define TESSERA_K8S_KUBE_ERRORS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "tessera/status.h"

namespace tessera {

// How much of an error reply's body, or of a server's message, goes into a
// Status message.
inline constexpr size_t kMaxMessageBytes = 2000;

// The API server's message from an error reply's body (its Status object's
// `message`), else the body itself, shortened; "no message" when empty.
std::string ServerMessage(const std::string& body);

// "<what>: HTTP <code>: <message>", coded by the HTTP code's class: NotFound
// for 404, InvalidArgument for other 4xx, IoError otherwise.
Status HttpError(std::string_view what, int code, std::string_view message);

}  // namespace tessera

#endif  // TESSERA_K8S_KUBE_ERRORS_H_
