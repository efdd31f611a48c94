// ControlClient (control_client.h).
#include "agent/control_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

struct Endpoint {
  std::string host;
  int port = 80;
};

// "http://HOST[:PORT][/]"; InvalidArgument naming --server otherwise.
Result<Endpoint> ParseServer(const std::string& url) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(
        fmt::format("--server {}: {}; give http://HOST:PORT, e.g. http://127.0.0.1:8080",
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
  Endpoint e;
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

}  // namespace

std::string ApiErrorText(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object() &&
      j["error"].contains("message") && j["error"]["message"].is_string()) {
    return j["error"]["message"].get<std::string>();
  }
  return body.size() > 200 ? body.substr(0, 200) + "..." : body;
}

Result<std::unique_ptr<ControlClient>> ControlClient::Create(ControlClientOptions options) {
  TESSERA_ASSIGN_OR_RETURN(const Endpoint endpoint, ParseServer(options.server));
  while (!options.server.empty() && options.server.back() == '/') options.server.pop_back();
  return std::unique_ptr<ControlClient>(
      new ControlClient(std::move(options), endpoint.host, endpoint.port));
}

ControlClient::ControlClient(ControlClientOptions options, std::string host, int port)
    : options_(std::move(options)), client_(std::make_unique<httplib::Client>(host, port)) {
  client_->set_connection_timeout(5, 0);
  client_->set_read_timeout(options_.read_timeout_s, 0);
  client_->set_write_timeout(15, 0);
  if (!options_.token.empty()) client_->set_bearer_token_auth(options_.token);
}

ControlClient::~ControlClient() = default;

std::optional<ControlReply> ControlClient::Send(const std::string& method, const std::string& path,
                                                const std::string& body) {
  double delay = options_.backoff_first_s;
  while (!stopping_) {
    httplib::Result res = method == "GET" ? client_->Get(path.c_str())
                                          : client_->Post(path.c_str(), body, "application/json");
    if (res && res->status < 500) return ControlReply{res->status, res->body};
    if (stopping_) break;
    const std::string why = res ? fmt::format("HTTP {}: {}", res->status, ApiErrorText(res->body))
                                : httplib::to_string(res.error());
    if (options_.say)
      options_.say(fmt::format("{} {}: {}; retrying in {} s", method, path, why, delay));
    Sleep(delay);
    delay = std::min(delay * 2, options_.backoff_max_s);
  }
  return std::nullopt;
}

Result<int> ControlClient::PostStatus(const std::string& path, const std::string& body) {
  const std::optional<ControlReply> reply = Send("POST", path, body);
  if (!reply) return 0;
  if (reply->status == 200 || reply->status == 409) return reply->status;
  const std::string why = fmt::format("POST {}: the server answered HTTP {}: {}", path,
                                      reply->status, ApiErrorText(reply->body));
  return reply->status == 404 ? Status::NotFound(why) : Status::InvalidArgument(why);
}

void ControlClient::Sleep(double seconds) {
  if (options_.sleep) return options_.sleep(seconds);
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return stopping_.load(); });
}

void ControlClient::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  client_->stop();
}

}  // namespace tessera
