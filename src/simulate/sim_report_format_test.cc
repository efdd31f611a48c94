// Tests of FormatSimReportTable and FormatSimReportJson (simulator.h) on a
// hand-built report: the exact text of both forms, and the rules behind them
// (the MISS mark, rounding, what is shown when nothing was served).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tessera/simulator.h"

namespace tessera {
namespace {

// Two GPUs, three services, 10 s:
//   web   meets its SLO for 99.96% of 5003 requests;
//   qa    for 98.996%: marked MISS, and shown rounded down as 98.99, not 99.00;
//   batch has no instance (infeasible): all 50 requests dropped, no latency.
// requests = 5003 + 203 + 50 = 5256.
// GPU 0 busy = (4 x 0.8 + 3 x 0.7) / 7 = 0.757142857 -> 75.7 % and 0.7571.
SimReport SmallReport() {
  SimReport r;
  r.duration_s = 10;
  r.requests = 5256;
  r.services = {
      {"web", 500, 200, 5003, 0, 500.3, 499.9, 12.34567, 40.12, 88.88888, 150.5, 210.25, 0.9996},
      {"qa", 20, 2000, 203, 3, 20.3, 19.8, 900.5, 1200, 1900, 2400, 3100.75, 0.98996},
      {"batch", 5, 418.5, 50, 50, 5, 0, 0, 0, 0, 0, 0, 0},
  };
  r.instances = {{0, "4g.40gb", 0, "web", 0.8},
                 {0, "3g.40gb", 4, "qa", 0.7},
                 {1, "1g.10gb", 0, "web", 0.123456}};
  r.gpus = {{0, 0.757142857}, {1, 0.123456}};
  return r;
}

TEST(SimReportFormat, TableGolden) {
  const std::string expected =
      "Simulation: 10 s simulated, 5256 requests, 3 services (2 below 99% within SLO)\n"
      "\n"
      "Services\n"
      "  name                      rate rps  offered rps  achieved rps   requests   dropped  "
      "in SLO %\n"
      "  web                          500.0        500.3         499.9       5003         0  "
      "   99.96\n"
      "  qa                            20.0         20.3          19.8        203         3  "
      "   98.99  MISS\n"
      "  batch                          5.0          5.0           0.0         50        50  "
      "    0.00  MISS\n"
      "\n"
      "Latency ms (served requests: queueing + batching + execution)\n"
      "  name                          SLO        p50        p95        p99        max  mean wait\n"
      "  web                         200.0       40.1       88.9      150.5      210.2       12.3\n"
      "  qa                         2000.0     1200.0     1900.0     2400.0     3100.8      900.5\n"
      "  batch                       418.5          -          -          -          -          -\n"
      "\n"
      "GPUs\n"
      "    gpu   busy %\n"
      "      0     75.7\n"
      "      1     12.3\n"
      "\n"
      "Instances\n"
      "    gpu  instance        service                    busy %\n"
      "      0  4g.40gb@0       web                          80.0\n"
      "      0  3g.40gb@4       qa                           70.0\n"
      "      1  1g.10gb@0       web                          12.3\n";
  EXPECT_EQ(FormatSimReportTable(SmallReport()), expected);
}

TEST(SimReportFormat, JsonGolden) {
  // Measurements rounded to 4 decimals (12.34567 -> 12.3457), integral
  // values written as integers, inputs (rate, SLO) exactly.
  const std::string expected = R"({
  "duration_s": 10,
  "requests": 5256,
  "services": [
    {
      "name": "web",
      "rate_rps": 500,
      "slo_ms": 200,
      "requests": 5003,
      "dropped": 0,
      "offered_rps": 500.3,
      "achieved_rps": 499.9,
      "mean_wait_ms": 12.3457,
      "p50_ms": 40.12,
      "p95_ms": 88.8889,
      "p99_ms": 150.5,
      "max_ms": 210.25,
      "compliance": 0.9996
    },
    {
      "name": "qa",
      "rate_rps": 20,
      "slo_ms": 2000,
      "requests": 203,
      "dropped": 3,
      "offered_rps": 20.3,
      "achieved_rps": 19.8,
      "mean_wait_ms": 900.5,
      "p50_ms": 1200,
      "p95_ms": 1900,
      "p99_ms": 2400,
      "max_ms": 3100.75,
      "compliance": 0.99
    },
    {
      "name": "batch",
      "rate_rps": 5,
      "slo_ms": 418.5,
      "requests": 50,
      "dropped": 50,
      "offered_rps": 5,
      "achieved_rps": 0,
      "mean_wait_ms": 0,
      "p50_ms": 0,
      "p95_ms": 0,
      "p99_ms": 0,
      "max_ms": 0,
      "compliance": 0
    }
  ],
  "gpus": [
    {
      "gpu": 0,
      "busy_share": 0.7571
    },
    {
      "gpu": 1,
      "busy_share": 0.1235
    }
  ],
  "instances": [
    {
      "gpu": 0,
      "profile": "4g.40gb",
      "start": 0,
      "service": "web",
      "busy_share": 0.8
    },
    {
      "gpu": 0,
      "profile": "3g.40gb",
      "start": 4,
      "service": "qa",
      "busy_share": 0.7
    },
    {
      "gpu": 1,
      "profile": "1g.10gb",
      "start": 0,
      "service": "web",
      "busy_share": 0.1235
    }
  ]
}
)";
  EXPECT_EQ(FormatSimReportJson(SmallReport()), expected);
}

// The mark is decided on the exact share, against 99%; a service that got no
// request has nothing to judge and is not marked.
TEST(SimReportFormat, MissMarkFollowsTheTarget) {
  struct Case {
    long requests;
    double compliance;
    bool marked;
    std::string shown;
  };
  const Case cases[] = {
      {1000, 1.0, false, "100.00"},   {1000, 0.99, false, "99.00"}, {1000, 0.989, true, "98.90"},
      {1000, 0.98999, true, "98.99"}, {1000, 0.0, true, "0.00"},    {0, 0.0, false, "-"},
  };
  for (const Case& c : cases) {
    SimReport r;
    r.duration_s = 1;
    r.requests = c.requests;
    r.services = {{"svc", 10, 100, c.requests, 0, 10, 10, 1, 2, 3, 4, 5, c.compliance}};
    const std::string table = FormatSimReportTable(r);
    std::istringstream lines(table);
    std::string line;
    while (std::getline(lines, line) && !line.starts_with("  svc ")) {
    }
    SCOPED_TRACE(table);
    EXPECT_EQ(line.ends_with("  MISS"), c.marked) << c.compliance;
    const std::string without_mark = c.marked ? line.substr(0, line.size() - 6) : line;
    EXPECT_TRUE(without_mark.ends_with(" " + c.shown)) << c.compliance;
    EXPECT_NE(table.find(c.marked ? "(1 below 99%" : "(0 below 99%"), std::string::npos);
  }
}

// Long names are cut, so no line of the table passes 100 columns.
TEST(SimReportFormat, TableFitsOneHundredColumns) {
  SimReport r = SmallReport();
  r.services[0].name = std::string(60, 'w');
  r.instances[0].service = r.services[0].name;
  r.services[1].p99_ms = 123456.75;
  std::istringstream lines(FormatSimReportTable(r));
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 100u) << line;
}

// JSON has no NaN or infinity: they come out as null (never invalid JSON),
// and a rounded "-0" as 0.
TEST(SimReportFormat, JsonStaysValidForNonFiniteValues) {
  SimReport r = SmallReport();
  r.services[0].p99_ms = std::numeric_limits<double>::quiet_NaN();
  r.services[0].max_ms = std::numeric_limits<double>::infinity();
  r.gpus[0].busy_share = -0.00001;
  const nlohmann::json j = nlohmann::json::parse(FormatSimReportJson(r), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["services"][0]["p99_ms"].is_null());
  EXPECT_TRUE(j["services"][0]["max_ms"].is_null());
  EXPECT_EQ(j["gpus"][0]["busy_share"].dump(), "0");
}

}  // namespace
}  // namespace tessera
