// HttpEndpoint (util/http_endpoint.h).
#include "util/http_endpoint.h"

#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "tessera/util/text_io.h"

namespace tessera {

std::string EncodeQueryValue(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

Result<HttpEndpoint> ParseHttpEndpoint(const std::string& url, const std::string& what,
                                       int default_port) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(
        fmt::format("{} {}: {}; give http://HOST:PORT, e.g. http://127.0.0.1:8080", what,
                    QuoteForMessage(url), why));
  };
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) {
    return bad(url.rfind("https://", 0) == 0 ? "https is not supported (put TLS in a proxy)"
                                             : "expected a URL starting with http://");
  }
  std::string rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos) return bad("a path is not allowed");
  HttpEndpoint e;
  e.port = default_port;
  size_t colon = rest.rfind(':');
  if (!rest.empty() && rest.front() == '[') {  // [::1]:8080
    const size_t close = rest.find(']');
    if (close == std::string::npos) return bad("unclosed '['");
    e.host = rest.substr(1, close - 1);
    colon = rest.size() > close + 1 && rest[close + 1] == ':' ? close + 1 : std::string::npos;
    if (colon == std::string::npos && rest.size() != close + 1) return bad("junk after ']'");
  } else {
    e.host = rest.substr(0, colon);
  }
  if (e.host.empty()) return bad("no host");
  if (colon != std::string::npos) {
    const std::optional<int> port = ToPort(std::string_view(rest).substr(colon + 1));
    if (!port) return bad("the port must be 1..65535");
    e.port = *port;
  }
  return e;
}

}  // namespace tessera
