// tessera-api-load: the load tool of `make bench` for `tessera serve`
// (docs/control-plane.md). Two jobs:
//
//   tessera-api-load load --url http://127.0.0.1:PORT --method GET --path /v1/deployment
//                    [--body JSON]... [--token T] [--connections 4] [--seconds 5]
//                    [--gzip] [--if-none-match ETAG]
//     sends requests back to back on `connections` keep-alive connections for
//     `seconds`, cycling through the bodies, and prints one line:
//     "requests N  rps R  p50_ms A  p99_ms B  max_ms C  non_2xx E".
//     Requests send Accept-Encoding: identity, or gzip with --gzip (the body
//     is received, not decoded); --if-none-match sends If-None-Match, and a
//     304 then counts as a 2xx.
//
//   tessera-api-load drive --url ... --transition ID [--token T]
//     plays every node agent of a transition: posts an ok phase result for
//     each node with steps in the running phase until the transition is done
//     (sets up a stored deployment without agents). Prints the phases driven.
//
// Exit 0 on success, 1 when a request fails, 2 for bad flags.
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Target {
  std::string url;
  std::string token;
};

httplib::Headers Auth(const Target& target) {
  if (target.token.empty()) return {};
  return {{"Authorization", "Bearer " + target.token}};
}

struct LoadFlags {
  std::string method = "GET";
  std::string path = "/v1/deployment";
  std::vector<std::string> bodies;
  int connections = 4;
  double seconds = 5;
  bool gzip = false;
  std::string if_none_match;
};

// One connection's latencies (ms) and its non-2xx count.
struct ConnectionResult {
  std::vector<double> latencies_ms;
  long non_2xx = 0;
  bool failed = false;
  std::string error;
};

void RunConnection(const Target& target, const LoadFlags& flags, Clock::time_point end,
                   ConnectionResult& out) {
  httplib::Client client(target.url);
  client.set_keep_alive(true);
  // A request's header and body are separate writes: without TCP_NODELAY,
  // Nagle holds the body back until the server's delayed ACK (~40 ms).
  client.set_tcp_nodelay(true);
  client.set_decompress(false);
  httplib::Headers headers = Auth(target);
  headers.emplace("Accept-Encoding", flags.gzip ? "gzip" : "identity");
  if (!flags.if_none_match.empty()) headers.emplace("If-None-Match", flags.if_none_match);
  size_t next_body = 0;
  while (Clock::now() < end) {
    const std::string body =
        flags.bodies.empty() ? "" : flags.bodies[next_body++ % flags.bodies.size()];
    const auto start = Clock::now();
    httplib::Result result =
        flags.method == "GET"     ? client.Get(flags.path, headers)
        : flags.method == "PATCH" ? client.Patch(flags.path, headers, body, "application/json")
        : flags.method == "PUT"   ? client.Put(flags.path, headers, body, "application/json")
                                  : client.Post(flags.path, headers, body, "application/json");
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result) {
      out.failed = true;
      out.error = httplib::to_string(result.error());
      return;
    }
    out.latencies_ms.push_back(ms);
    const bool not_modified = result->status == 304 && !flags.if_none_match.empty();
    if ((result->status < 200 || result->status > 299) && !not_modified) ++out.non_2xx;
  }
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
  return sorted[i];
}

int Load(const Target& target, const LoadFlags& flags) {
  std::vector<ConnectionResult> results(flags.connections);
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(flags.seconds));
  for (int c = 0; c < flags.connections; ++c) {
    threads.emplace_back(
        [&, c] { RunConnection(target, flags, end, results[static_cast<size_t>(c)]); });
  }
  for (std::thread& t : threads) t.join();
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  long non_2xx = 0;
  for (const ConnectionResult& r : results) {
    if (r.failed) {
      std::fprintf(stderr, "tessera-api-load: error: %s %s: %s\n", flags.method.c_str(),
                   flags.path.c_str(), r.error.c_str());
      return 1;
    }
    all.insert(all.end(), r.latencies_ms.begin(), r.latencies_ms.end());
    non_2xx += r.non_2xx;
  }
  std::sort(all.begin(), all.end());
  std::printf("requests %zu  rps %.0f  p50_ms %.3f  p99_ms %.3f  max_ms %.3f  non_2xx %ld\n",
              all.size(), static_cast<double>(all.size()) / elapsed_s, Quantile(all, 0.5),
              Quantile(all, 0.99), all.empty() ? 0.0 : all.back(), non_2xx);
  return non_2xx == 0 ? 0 : 1;
}

// GET `path` as JSON, or nullopt after printing why.
std::optional<nlohmann::json> GetJson(httplib::Client& client, const Target& target,
                                      const std::string& path) {
  httplib::Result result = client.Get(path, Auth(target));
  if (!result || result->status != 200) {
    std::fprintf(stderr, "tessera-api-load: error: GET %s: %s\n", path.c_str(),
                 result ? result->body.c_str() : httplib::to_string(result.error()).c_str());
    return std::nullopt;
  }
  return nlohmann::json::parse(result->body, nullptr, /*allow_exceptions=*/false);
}

int Drive(const Target& target, long id) {
  httplib::Client client(target.url);
  const std::string path = "/v1/transitions/" + std::to_string(id);
  for (int round = 0; round < 100000; ++round) {
    std::optional<nlohmann::json> view = GetJson(client, target, path);
    if (!view || view->is_discarded()) return 1;
    const std::string state = view->value("state", "");
    if (state == "done") {
      std::printf("transition %ld done after %d phase(s)\n", id, round);
      return 0;
    }
    if (state != "running") {
      std::fprintf(stderr, "tessera-api-load: error: transition %ld is %s\n", id, state.c_str());
      return 1;
    }
    const int phase = view->value("phase", 0);
    std::set<std::string> nodes;
    for (const auto& p : (*view)["phases"]) {
      if (p.value("index", 0) != phase) continue;
      for (const auto& step : p["steps"]) nodes.insert(step.value("node", ""));
    }
    for (const std::string& node : nodes) {
      const nlohmann::json body = {{"transition", {{"id", id}, {"phase", phase}, {"ok", true}}},
                                   {"converged", true}};
      httplib::Result result = client.Post("/v1/nodes/" + node + "/status", Auth(target),
                                           body.dump(), "application/json");
      if (!result || (result->status != 200 && result->status != 409)) {
        std::fprintf(stderr, "tessera-api-load: error: status of %s: %s\n", node.c_str(),
                     result ? result->body.c_str() : httplib::to_string(result.error()).c_str());
        return 1;
      }
    }
  }
  std::fprintf(stderr, "tessera-api-load: error: transition %ld never finished\n", id);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Load and set-up tool for tessera serve's benchmarks (make bench)"};
  app.require_subcommand(1);
  Target target;
  app.add_option("--url", target.url, "The daemon, e.g. http://127.0.0.1:8080")->required();
  app.add_option("--token", target.token, "Bearer token for mutations");
  LoadFlags flags;
  CLI::App* load = app.add_subcommand("load", "Send requests back to back and print rps, p50, p99");
  load->add_option("--method", flags.method)->check(CLI::IsMember({"GET", "PATCH", "PUT", "POST"}));
  load->add_option("--path", flags.path);
  load->add_option("--body", flags.bodies, "Request bodies, sent in turn");
  load->add_option("--connections", flags.connections)->check(CLI::Range(1, 256));
  load->add_option("--seconds", flags.seconds)->check(CLI::Range(0.1, 600.0));
  load->add_flag("--gzip", flags.gzip, "Send Accept-Encoding: gzip (else identity)");
  load->add_option("--if-none-match", flags.if_none_match, "Send If-None-Match: this ETag");
  long transition = 0;
  CLI::App* drive = app.add_subcommand("drive", "Play every node agent until a transition is done");
  drive->add_option("--transition", transition)->required()->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (load->parsed()) return Load(target, flags);
  return Drive(target, transition);
}
