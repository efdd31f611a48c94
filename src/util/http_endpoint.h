// HttpEndpoint: "http://HOST[:PORT][/]" as the programs that talk to a
// server over plain HTTP take it (the node agent's --server, the control
// plane's etcd endpoints), and a query string's values.
#ifndef TESSERA_UTIL_HTTP_ENDPOINT_H_
#define TESSERA_UTIL_HTTP_ENDPOINT_H_

#include <string>
#include <string_view>

#include "tessera/status.h"

namespace tessera {

struct HttpEndpoint {
  std::string host;  // without brackets: "::1"
  int port = 80;
};

// `value` percent-encoded for a query string (RFC 3986's unreserved bytes
// as they are).
std::string EncodeQueryValue(std::string_view value);

// InvalidArgument "<what> 'URL': <why>; give http://HOST:PORT, ..." for
// https, a path, a bad port, no host or a bad bracketed IPv6 address.
Result<HttpEndpoint> ParseHttpEndpoint(const std::string& url, const std::string& what,
                                       int default_port);

}  // namespace tessera

#endif  // TESSERA_UTIL_HTTP_ENDPOINT_H_
