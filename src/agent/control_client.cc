// ControlClient (control_client.h).
#include "agent/control_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "tessera/util/text_io.h"
#include "util/http_endpoint.h"

namespace tessera {

std::string ApiErrorText(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object() &&
      j["error"].contains("message") && j["error"]["message"].is_string()) {
    return j["error"]["message"].get<std::string>();
  }
  return body.size() > 200 ? body.substr(0, 200) + "..." : body;
}

Result<std::unique_ptr<ControlClient>> ControlClient::Create(ControlClientOptions options) {
  std::vector<Server> servers;
  size_t at = 0;
  const std::string& list = options.server;
  while (at <= list.size()) {
    const size_t comma = list.find(',', at);
    std::string url = list.substr(at, comma == std::string::npos ? comma : comma - at);
    TESSERA_ASSIGN_OR_RETURN(const HttpEndpoint endpoint, ParseHttpEndpoint(url, "--server", 80));
    while (!url.empty() && url.back() == '/') url.pop_back();
    servers.push_back({std::move(url), endpoint.host, endpoint.port});
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return std::unique_ptr<ControlClient>(new ControlClient(std::move(options), std::move(servers)));
}

ControlClient::ControlClient(ControlClientOptions options, std::vector<Server> servers)
    : options_(std::move(options)), servers_(std::move(servers)) {
  Connect(servers_.front());
}

void ControlClient::Connect(const Server& server) {
  auto client = std::make_unique<httplib::Client>(server.host, server.port);
  client->set_connection_timeout(5, 0);
  client->set_read_timeout(options_.read_timeout_s, 0);
  client->set_write_timeout(15, 0);
  if (!options_.token.empty()) client->set_bearer_token_auth(options_.token);
  std::lock_guard<std::mutex> lock(mu_);
  current_ = server;
  client_ = std::move(client);
}

std::string ControlClient::server() const { return current_.url; }

bool ControlClient::Follow(const std::string& location) {
  // Location: http://HOST:PORT/path?query
  constexpr std::string_view kScheme = "http://";
  if (location.rfind(kScheme, 0) != 0) return false;
  const size_t slash = location.find('/', kScheme.size());
  const std::string url = location.substr(0, slash);
  Result<HttpEndpoint> endpoint = ParseHttpEndpoint(url, "Location", 80);
  if (!endpoint.ok()) return false;
  if (options_.say) options_.say(fmt::format("{} leads: following it", url));
  Connect({url, endpoint->host, endpoint->port});
  return true;
}

ControlClient::~ControlClient() = default;

std::optional<ControlReply> ControlClient::Send(const std::string& method, const std::string& path,
                                                const std::string& body) {
  // A follower's 307 is followed at once, a few times in a row (the
  // leadership may move while it is followed); then backoff as for an error.
  constexpr int kRedirectsInARow = 5;
  double delay = options_.backoff_first_s;
  int redirects = 0;
  while (!stopping_) {
    httplib::Result res = method == "GET" ? client_->Get(path.c_str())
                                          : client_->Post(path.c_str(), body, "application/json");
    if (res && res->status == 307 && redirects < kRedirectsInARow &&
        Follow(res->get_header_value("Location"))) {
      ++redirects;
      continue;
    }
    redirects = 0;
    if (res && res->status < 500 && res->status != 307) return ControlReply{res->status, res->body};
    if (stopping_) break;
    const std::string why = res ? fmt::format("HTTP {}: {}", res->status, ApiErrorText(res->body))
                                : httplib::to_string(res.error());
    // Another replica may lead, or be up, while this one is not.
    if (servers_.size() > 1) {
      auto it = std::find_if(servers_.begin(), servers_.end(),
                             [&](const Server& s) { return s.url == current_.url; });
      const size_t next = it == servers_.end() ? 0 : (it - servers_.begin() + 1) % servers_.size();
      Connect(servers_[next]);
    }
    if (options_.say)
      options_.say(fmt::format("{} {}: {}; retrying in {} s{}", method, path, why, delay,
                               servers_.size() > 1 ? " on " + current_.url : ""));
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
    client_->stop();
  }
  wake_.notify_all();
}

}  // namespace tessera
