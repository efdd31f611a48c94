// ControlServer (include/tessera/control/control_server.h) on cpp-httplib.
//
// Every request passes, on one worker thread: the pre-routing handler (its
// start time; the token of a mutation, 401; a Content-Length far over the
// limit, 413 at once without reading the body), then a handler (GET: the
// embedded files, the long-poll's wait, then ControlPlane::Handle; a
// mutation: the body read through a bounded receiver, 413 past the limit,
// chunked or not, then Handle), then the logger, which records the latency.
#include <arpa/inet.h>
#include <httplib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "control/dra_routes.h"
#include "control/extender_routes.h"
#include "tessera/control/control_assets.h"
#include "tessera/control/control_server.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A body whose Content-Length exceeds the limit by this factor or more is
// refused before any of it is read; a smaller excess is read and dropped by
// cpp-httplib, so that the client, still sending, reads the 413 rather than
// a reset connection.
constexpr size_t kDrainFactor = 4;
// The long-poll's `wait` range (docs/control-plane.md).
constexpr double kMaxWaitSeconds = 60;

std::string ErrorBody(std::string_view code, std::string_view message) {
  nlohmann::json body = {{"error", {{"code", code}, {"message", message}, {"field", nullptr}}}};
  return body.dump();
}

// The route templates the server knows with their methods: the API's and
// the server's own (for 405's Allow header, and its own routes' 405s).
struct RouteMethods {
  std::string_view route;
  std::string_view allow;
};
constexpr std::array<RouteMethods, 27> kRoutes = {{
    {"/", "GET, HEAD"},
    {"/static/{file}", "GET, HEAD"},
    {"/v1/openapi.json", "GET, HEAD"},
    {"/healthz", "GET, HEAD"},
    {"/readyz", "GET, HEAD"},
    {"/metrics", "GET, HEAD"},
    {"/v1/scenario", "GET, HEAD, PUT"},
    {"/v1/services/{name}", "PATCH"},
    {"/v1/plans", "GET, HEAD, POST"},
    {"/v1/plans/{id}", "GET, HEAD"},
    {"/v1/plans/{id}/svg", "GET, HEAD"},
    {"/v1/deployment", "GET, HEAD"},
    {"/v1/deployment/svg", "GET, HEAD"},
    {"/v1/transitions", "GET, HEAD, POST"},
    {"/v1/transitions/{id}", "GET, HEAD"},
    {"/v1/transitions/{id}/start", "POST"},
    {"/v1/transitions/{id}/resume", "POST"},
    {"/v1/transitions/{id}/abort", "POST"},
    {"/v1/nodes", "GET, HEAD"},
    {"/v1/nodes/{node}/plan", "GET, HEAD"},
    {"/v1/nodes/{node}/status", "POST"},
    {"/v1/dra/offers", "POST"},
    {"/scheduler/filter", "POST"},
    {"/scheduler/prioritize", "POST"},
    {"/scheduler/bind", "POST"},
    {"/scheduler/state", "GET, HEAD"},
    {"/scheduler/nodes/{node}/plan", "GET, HEAD"},
}};

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t from = 0;
  while (from <= path.size()) {
    const size_t slash = path.find('/', from);
    const size_t end = slash == std::string_view::npos ? path.size() : slash;
    segments.push_back(path.substr(from, end - from));
    from = end + 1;
  }
  return segments;
}

// The route template `path` falls under ("/v1/plans/{id}"), or "" when none.
// /static/{file} takes the rest of the path, slashes included.
std::string_view RouteOf(std::string_view path) {
  if (path.starts_with("/static/") && path.size() > 8) return "/static/{file}";
  const std::vector<std::string_view> have = Segments(path);
  for (const RouteMethods& route : kRoutes) {
    const std::vector<std::string_view> want = Segments(route.route);
    if (want.size() != have.size() || route.route == "/static/{file}") continue;
    bool match = true;
    for (size_t i = 0; i < want.size() && match; ++i)
      match = want[i].starts_with('{') ? !have[i].empty() : want[i] == have[i];
    if (match) return route.route;
  }
  return "";
}

std::string_view AllowOf(std::string_view route) {
  for (const RouteMethods& entry : kRoutes)
    if (entry.route == route) return entry.allow;
  return "";
}

bool IsMutation(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

// Equal iff same length and bytes; the time depends on the lengths only, not
// on where the first differing byte lies.
bool SameToken(std::string_view given, std::string_view token) {
  const size_t n = std::max(given.size(), token.size());
  volatile unsigned char differ = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char a = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    const unsigned char b = i < token.size() ? static_cast<unsigned char>(token[i]) : 0;
    differ = differ | (a ^ b);
  }
  return differ == 0;
}

bool ParseInt64(std::string_view text, int64_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool ParseSeconds(std::string_view text, double& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty() && value >= 0 &&
         value <= kMaxWaitSeconds;
}

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr address{};
  if (inet_pton(AF_INET, host.c_str(), &address) != 1) return false;
  return (ntohl(address.s_addr) >> 24) == 127;
}

std::string EscapeLabel(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// tessera_http_request_duration_seconds{method,route,code}.
class LatencyHistogram {
 public:
  void Record(const std::string& method, const std::string& route, int code, double seconds) {
    std::lock_guard lock(mutex_);
    Series& series = series_[{method, route, code}];
    for (size_t i = 0; i < kBounds.size(); ++i)
      if (seconds <= kBounds[i]) ++series.buckets[i];
    series.sum += seconds;
    ++series.count;
  }

  std::string Format() const {
    std::ostringstream out;
    out << "# HELP tessera_http_request_duration_seconds Time to answer an HTTP request of the "
           "API.\n# TYPE tessera_http_request_duration_seconds histogram\n";
    std::lock_guard lock(mutex_);
    for (const auto& [key, series] : series_) {
      const auto& [method, route, code] = key;
      const std::string labels = "method=\"" + EscapeLabel(method) + "\",route=\"" +
                                 EscapeLabel(route) + "\",code=\"" + std::to_string(code) + "\"";
      for (size_t i = 0; i < kBounds.size(); ++i)
        out << "tessera_http_request_duration_seconds_bucket{" << labels << ",le=\"" << kBounds[i]
            << "\"} " << series.buckets[i] << "\n";
      out << "tessera_http_request_duration_seconds_bucket{" << labels << ",le=\"+Inf\"} "
          << series.count << "\n";
      out << "tessera_http_request_duration_seconds_sum{" << labels << "} " << series.sum << "\n";
      out << "tessera_http_request_duration_seconds_count{" << labels << "} " << series.count
          << "\n";
    }
    return out.str();
  }

 private:
  static constexpr std::array<double, 14> kBounds = {.0005, .001, .0025, .005, .01, .025, .05,
                                                     .1,    .25,  .5,    1,    2.5, 5,    10};
  struct Series {
    std::array<uint64_t, kBounds.size()> buckets{};
    double sum = 0;
    uint64_t count = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, Series> series_;
};

// What the stages of one request share; cpp-httplib runs them all on the
// request's worker thread.
struct RequestContext {
  bool active = false;  // false: cpp-httplib refused the request before routing
  SteadyClock::time_point start;
  std::string route = "unmatched";
};
thread_local RequestContext t_request;

}  // namespace

Status ParseListenAddress(const std::string& text, const std::string& flag,
                          ServerOptions& options) {
  const Status bad = Status::InvalidArgument(
      flag + ": expected HOST:PORT such as 127.0.0.1:8080 or [::1]:8080 (port 0..65535), got '" +
      text + "'");
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return bad;
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string::npos) return bad;
  } else if (host.find_first_of(":[]") != std::string::npos) {
    return bad;
  }
  const std::optional<int> port = port_text == "0" ? 0 : ToPort(port_text);
  if (host.empty() || !port) return bad;
  options.host = host;
  options.port = *port;
  return Status::Ok();
}

class ControlServer::Impl {
 public:
  Impl(ControlPlane& plane, ServerOptions options) : plane_(plane), options_(std::move(options)) {}

  Status Start() {
    if (options_.token.empty() && !IsLoopback(options_.host))
      return Status::InvalidArgument("listening on " + options_.host +
                                     ", not a loopback address, needs a token (--token-file): "
                                     "anyone who reaches it could change the cluster");
    if (options_.max_body_bytes == 0 || options_.threads < 1)
      return Status::InvalidArgument("server options: max_body_bytes and threads must be > 0");
    Configure();
    const std::string where = options_.host + ":" + std::to_string(options_.port);
    if (options_.port == 0) {
      port_ = server_.bind_to_any_port(options_.host);
      if (port_ < 0) return Status::IoError("cannot listen on " + where);
    } else {
      if (!server_.bind_to_port(options_.host, options_.port))
        return Status::IoError("cannot listen on " + where +
                               " (in use, not an address of this host, or not allowed)");
      port_ = options_.port;
    }
    plane_.SetExtraMetrics(
        [this] { return histogram_.Format() + SchedulerMetrics(options_.extender); });
    listener_ = std::thread([this] {
      server_.listen_after_bind();
      listen_returned_ = true;
    });
    // cpp-httplib's stop() does nothing before its loop runs: Stop right
    // after Start would leave the loop running and the join waiting.
    while (!server_.is_running() && !listen_returned_)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!server_.is_running()) {
      listener_.join();
      return Status::IoError("cannot serve on " + where);
    }
    return Status::Ok();
  }

  int port() const { return port_; }

  void Stop() {
    std::call_once(stop_once_, [this] {
      plane_.Shutdown();
      server_.stop();
      if (listener_.joinable()) listener_.join();
      // The plane may outlive the server: /metrics no longer reads it.
      plane_.SetExtraMetrics(nullptr);
      std::lock_guard lock(mutex_);
      stopped_ = true;
    });
    stopped_cv_.notify_all();
  }

  void Wait() {
    std::unique_lock lock(mutex_);
    stopped_cv_.wait(lock, [this] { return stopped_; });
  }

 private:
  void Configure() {
    const int threads = options_.threads;
    server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server_.set_payload_max_length(options_.max_body_bytes);
    server_.set_keep_alive_max_count(options_.keep_alive_max_requests);
    // A reply's header and body are separate writes: without TCP_NODELAY,
    // Nagle holds a small body back until the client's delayed ACK (~40 ms).
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_timeout(options_.keep_alive_timeout_s);
    server_.set_pre_routing_handler(
        [this](const httplib::Request& request, httplib::Response& response) {
          return PreRoute(request, response);
        });
    server_.set_error_handler(httplib::Server::HandlerWithResponse(&FillError));
    server_.set_logger([this](const httplib::Request& request, const httplib::Response& response) {
      if (!t_request.active) return;
      const double seconds =
          std::chrono::duration<double>(SteadyClock::now() - t_request.start).count();
      histogram_.Record(request.method, t_request.route, response.status, seconds);
      t_request.active = false;
    });
    server_.Get(".*", [this](const httplib::Request& request, httplib::Response& response) {
      Reply(Get(request), request, response);
    });
    server_.Options(".*", [this](const httplib::Request& request, httplib::Response& response) {
      Reply(plane_.Handle(ToApi(request, "")), request, response);
    });
    const auto mutation = [this](const httplib::Request& request, httplib::Response& response,
                                 const httplib::ContentReader& reader) {
      Mutate(request, response, reader);
    };
    server_.Post(".*", mutation);
    server_.Put(".*", mutation);
    server_.Patch(".*", mutation);
    server_.Delete(".*", mutation);
  }

  // cpp-httplib's own error replies (a malformed request, a body over the
  // limit it read and dropped) get the API's error object.
  static httplib::Server::HandlerResponse FillError(const httplib::Request&,
                                                    httplib::Response& response) {
    if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const int status = response.status;
    response.set_content(status == 413
                             ? ErrorBody("payload_too_large", "the body is over the limit")
                         : status == 404 ? ErrorBody("not_found", "no such route")
                         : status >= 500 ? ErrorBody("internal", "the server failed")
                                         : ErrorBody("bad_request", "malformed HTTP request"),
                         "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }

  static ApiResponse Error(int status, std::string_view code, std::string_view message) {
    ApiResponse response;
    response.status = status;
    response.body = ErrorBody(code, message);
    return response;
  }

  httplib::Server::HandlerResponse PreRoute(const httplib::Request& request,
                                            httplib::Response& response) {
    t_request = RequestContext{true, SteadyClock::now()};
    // kube-scheduler sends no bearer token to its extenders: the scheduler
    // routes are open (docs/kubernetes.md, "Security").
    if (IsMutation(request.method) && !options_.token.empty() &&
        !IsSchedulerRoute(RouteOf(request.path))) {
      const std::string header = request.get_header_value("Authorization");
      constexpr std::string_view kScheme = "Bearer ";
      const bool bearer =
          header.size() >= kScheme.size() &&
          std::equal(kScheme.begin(), kScheme.end(), header.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          });
      if (!bearer || !SameToken(std::string_view(header).substr(kScheme.size()), options_.token)) {
        ApiResponse refused =
            Error(401, "unauthorized",
                  bearer ? "the bearer token is wrong"
                         : "this request changes state: it needs 'Authorization: Bearer <token>'");
        response.set_header("WWW-Authenticate", "Bearer");
        Reply(refused, request, response);
        // The body, unread, cannot be taken for the next request.
        response.set_header("Connection", "close");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if (request.has_header("Content-Length")) {
      int64_t length = 0;
      if (!ParseInt64(request.get_header_value("Content-Length"), length) || length < 0) {
        Reply(Error(400, "bad_request", "Content-Length is not a number"), request, response);
        response.set_header("Connection", "close");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (static_cast<uint64_t>(length) / kDrainFactor >= options_.max_body_bytes) {
        Reply(TooLarge(), request, response);
        response.set_header("Connection", "close");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  ApiResponse TooLarge() const {
    return Error(
        413, "payload_too_large",
        "the body is over the limit of " + std::to_string(options_.max_body_bytes) + " bytes");
  }

  static ApiRequest ToApi(const httplib::Request& request, std::string body) {
    ApiRequest api;
    // cpp-httplib answers HEAD with the GET handler's reply, less the body.
    api.method = request.method == "HEAD" ? "GET" : request.method;
    api.path = request.path;
    for (const auto& [key, value] : request.params) api.query.emplace(key, value);
    api.body = std::move(body);
    api.content_type = request.get_header_value("Content-Type");
    api.if_none_match = request.get_header_value("If-None-Match");
    api.accepts_gzip = AcceptsGzip(request.get_header_value("Accept-Encoding"));
    return api;
  }

  // Whether an Accept-Encoding header ("gzip", "br, gzip;q=0.5", "*")
  // accepts gzip: named (or "*") without q=0.
  static bool AcceptsGzip(std::string_view header) {
    while (!header.empty()) {
      const size_t comma = header.find(',');
      std::string item(header.substr(0, comma));
      header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
      std::transform(item.begin(), item.end(), item.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
      const size_t semi = item.find(';');
      const std::string coding = item.substr(0, semi);
      const std::string q = semi == std::string::npos ? "" : item.substr(semi);
      const bool refused =
          q.rfind(";q=0", 0) == 0 && q.find_first_not_of("0.", 4) == std::string::npos;
      if ((coding == "gzip" || coding == "*") && !refused) return true;
    }
    return false;
  }

  // The server's own routes answer a method other than GET with 405.
  static bool OwnRoute(std::string_view route) {
    return route == "/" || route == "/static/{file}" || route == "/v1/openapi.json";
  }

  ApiResponse Get(const httplib::Request& request) {
    const std::string_view route = RouteOf(request.path);
    if (OwnRoute(route)) return Own(request.path, route);
    if (IsSchedulerRoute(route))
      return HandleSchedulerRoute(options_.extender, route, ToApi(request, ""));
    if (route == kDraOffersRoute) return HandleDraOffers(ToApi(request, ""));
    if (route == "/v1/nodes/{node}/plan") LongPoll(request);
    return plane_.Handle(ToApi(request, ""));
  }

  ApiResponse Own(std::string_view path, std::string_view route) {
    std::string name = "openapi.json";
    if (route == "/static/{file}")
      name = "web/" + std::string(path.substr(8));
    else if (route != "/v1/openapi.json")
      name = "web/index.html";
    const std::optional<Asset> asset = FindAsset(name);
    ApiResponse response = asset ? ApiResponse{} : Error(404, "not_found", "no such file");
    response.route = std::string(route);
    if (!asset) return response;
    response.content_type = std::string(asset->content_type);
    response.body = std::string(asset->bytes);
    return response;
  }

  // Waits (outside any lock) while the node's version is `since`, for at
  // most `wait` seconds; bad parameters are left to the plane's 400.
  void LongPoll(const httplib::Request& request) {
    int64_t since = 0;
    double wait_s = 0;
    if (!request.has_param("since") || !request.has_param("wait") ||
        !ParseInt64(request.get_param_value("since"), since) ||
        !ParseSeconds(request.get_param_value("wait"), wait_s))
      return;
    if (plane_.Version() != since) return;
    plane_.WaitForVersion(since,
                          std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000 + 0.5)));
  }

  void Mutate(const httplib::Request& request, httplib::Response& response,
              const httplib::ContentReader& reader) {
    const std::string_view route = RouteOf(request.path);
    if (OwnRoute(route)) {
      ApiResponse refused = Error(405, "method_not_allowed",
                                  request.method + " is not allowed on " + std::string(route));
      refused.route = std::string(route);
      Reply(refused, request, response);
      response.set_header("Connection", "close");
      return;
    }
    std::string body;
    bool too_large = false;
    const bool read = reader([&](const char* data, size_t length) {
      if (body.size() + length > options_.max_body_bytes) {
        too_large = true;
        return false;
      }
      body.append(data, length);
      return true;
    });
    if (!read) {
      Reply(too_large || response.status == 413 ? TooLarge()
                                                : Error(400, "bad_request", "unreadable body"),
            request, response);
      response.set_header("Connection", "close");
      return;
    }
    const ApiRequest api = ToApi(request, std::move(body));
    Reply(IsSchedulerRoute(route)    ? HandleSchedulerRoute(options_.extender, route, api)
          : route == kDraOffersRoute ? HandleDraOffers(api)
                                     : plane_.Handle(api),
          request, response);
  }

  // A 405 names the path's methods in Allow.
  static void Reply(const ApiResponse& api, const httplib::Request& request,
                    httplib::Response& response) {
    t_request.route = api.route;
    response.status = api.status;
    if (api.status == 405) {
      const std::string_view allow = AllowOf(RouteOf(request.path));
      if (!allow.empty()) response.set_header("Allow", std::string(allow));
    }
    for (const auto& [name, value] : api.headers) response.set_header(name, value);
    response.set_content(api.body, api.content_type);
  }

  ControlPlane& plane_;
  ServerOptions options_;
  httplib::Server server_;
  LatencyHistogram histogram_;
  int port_ = -1;
  std::thread listener_;
  std::atomic<bool> listen_returned_ = false;
  std::once_flag stop_once_;
  std::mutex mutex_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
};

Result<std::unique_ptr<ControlServer>> ControlServer::Start(ControlPlane& plane,
                                                            ServerOptions options) {
  auto impl = std::make_unique<Impl>(plane, std::move(options));
  if (Status started = impl->Start(); !started.ok()) return started;
  return std::unique_ptr<ControlServer>(new ControlServer(std::move(impl)));
}

ControlServer::ControlServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControlServer::~ControlServer() { impl_->Stop(); }
int ControlServer::port() const { return impl_->port(); }
void ControlServer::Stop() { impl_->Stop(); }
void ControlServer::Wait() { impl_->Wait(); }

}  // namespace tessera
