// Tests of FormatReplayTable, FormatReplayJson, FormatReplayCsv and
// FormatReplaySvg (replay_report_format.h) on hand-built reports: the exact
// table, JSON keys and values, CSV rows, and an SVG without NaN whatever the
// number of reports and samples.
#include "tessera/online/replay_report_format.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

// Two policies on one 3-hour trace of 10 requests on an A100-40GB: 6 of
// 1g.5gb (profile 0), 4 of 3g.20gb (profile 4); no arrival in hour 1.
//   ff   accepts 9 (all 1g.5gb, 3 of 4 3g.20gb), migrates 2 + 1 times;
//   grmu accepts all 10 and never migrates.
std::vector<ReplayReport> TwoPolicies() {
  ReplayReport ff;
  ff.policy = "ff";
  ff.gpu = "a100-40gb";
  ff.hosts = 2;
  ff.gpus = 16;
  ff.requests = 10;
  ff.accepted = 9;
  ff.acceptance = 0.9;
  ff.per_profile = {{0, 6, 6}, {4, 4, 3}};
  ff.active_hw_auc = 1234.5678;
  ff.mean_active_hw_rate = 0.41152;
  ff.intra_migrations = 2;
  ff.inter_migrations = 1;
  ff.migration_share = 3.0 / 9;
  ff.peak_resident_vms = 7;
  ff.duration_s = 10800;
  ff.replay_ms = 12.345;
  ff.samples = {
      {0, 6, 6, 6, 6, 0.5, 6}, {3600, 0, 0, 6, 6, 0.625, 5}, {7200, 4, 3, 10, 9, 0.1094567, 7}};

  ReplayReport grmu = ff;
  grmu.policy = "grmu";
  grmu.accepted = 10;
  grmu.acceptance = 1;
  grmu.per_profile = {{0, 6, 6}, {4, 4, 4}};
  grmu.active_hw_auc = 987.4;
  grmu.mean_active_hw_rate = 0.3;
  grmu.intra_migrations = 0;
  grmu.inter_migrations = 0;
  grmu.migration_share = 0;
  grmu.peak_resident_vms = 8;
  grmu.replay_ms = 3.5;
  grmu.samples = {
      {0, 6, 6, 6, 6, 0.25, 6}, {3600, 0, 0, 6, 6, 0.25, 6}, {7200, 4, 4, 10, 10, 0.4, 8}};
  return {ff, grmu};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// ---- Table ----------------------------------------------------------------

TEST(ReplayReportFormat, TableGolden) {
  const std::string expected =
      "Replay: 10 requests on 2 hosts / 16 GPUs (a100-40gb), 3.0 h\n"
      "\n"
      "Policies\n"
      "  policy         accepted  accept %   HW AUC %h  mean HW %   intra   inter   migr %   "
      "replay ms\n"
      "  ff                    9     90.00       1,235       41.2       2       1    33.33        "
      "12.3\n"
      "  grmu                 10    100.00         987       30.0       0       0     0.00        "
      " 3.5\n"
      "\n"
      "Acceptance per profile (%)\n"
      "  profile       requests        ff      grmu\n"
      "  1g.5gb               6    100.00    100.00\n"
      "  3g.20gb              4     75.00    100.00\n";
  EXPECT_EQ(FormatReplayTable(TwoPolicies()), expected);
}

// 99.996% must not print as 100.00 next to a policy that accepted everything.
TEST(ReplayReportFormat, TableRoundsAcceptanceDown) {
  std::vector<ReplayReport> reports = TwoPolicies();
  reports[0].requests = 100000;
  reports[0].accepted = 99996;
  EXPECT_NE(FormatReplayTable(reports).find(" 99.99 "), std::string::npos);
}

TEST(ReplayReportFormat, TableShowsDashWithoutRequests) {
  ReplayReport empty;
  empty.policy = "bf";
  empty.gpu = "a100-40gb";
  const std::string table = FormatReplayTable(std::vector<ReplayReport>{empty});
  SCOPED_TRACE(table);
  EXPECT_NE(table.find("Replay: 0 requests on 0 hosts / 0 GPUs (a100-40gb), 0.0 h"),
            std::string::npos);
  const std::vector<std::string> lines = Lines(table);
  auto row = std::find_if(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.starts_with("  bf "); });
  ASSERT_NE(row, lines.end());
  EXPECT_NE(row->find("  -  "), std::string::npos);  // acceptance and migration share
  EXPECT_EQ(table.find("nan"), std::string::npos);
  EXPECT_EQ(FormatReplayTable({}), "Replay: no reports\n");
}

TEST(ReplayReportFormat, TableNamesUnknownProfilesByIndex) {
  std::vector<ReplayReport> reports = TwoPolicies();
  for (ReplayReport& r : reports) r.gpu = "no-such-gpu";
  const std::string table = FormatReplayTable(reports);
  EXPECT_NE(table.find("profile#0"), std::string::npos);
  EXPECT_NE(table.find("profile#4"), std::string::npos);
}

// Long names are cut and many policies continue in a second block, so no
// line passes 100 columns; every policy still gets its column.
TEST(ReplayReportFormat, TableFitsOneHundredColumns) {
  std::vector<ReplayReport> reports;
  for (int i = 0; i < 9; ++i) {
    ReplayReport r = TwoPolicies()[0];
    r.policy = fmt::format("policy-{}-{}", i, std::string(40, 'x'));
    r.active_hw_auc = 123456789;
    r.replay_ms = 1234567.5;
    reports.push_back(r);
  }
  const std::string table = FormatReplayTable(reports);
  SCOPED_TRACE(table);
  for (const std::string& line : Lines(table)) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_NE(table.find("123,456,789"), std::string::npos);
  EXPECT_EQ(Count(table, "  profile "), 2u);  // 7 + 2 policy columns
  EXPECT_EQ(Count(table, "  3g.20gb "), 2u);
}

// ---- JSON -----------------------------------------------------------------

TEST(ReplayReportFormat, JsonHasKeysInOrderAndValues) {
  const auto j = nlohmann::ordered_json::parse(FormatReplayJson(TwoPolicies(), false));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j[0].items()) keys.push_back(key);
  const std::vector<std::string> expected = {"policy",
                                             "gpu",
                                             "hosts",
                                             "gpus",
                                             "requests",
                                             "accepted",
                                             "acceptance",
                                             "active_hw_auc",
                                             "mean_active_hw_rate",
                                             "migrations",
                                             "intra_migrations",
                                             "inter_migrations",
                                             "migration_share",
                                             "peak_resident_vms",
                                             "duration_s",
                                             "replay_ms",
                                             "per_profile"};
  EXPECT_EQ(keys, expected);

  const auto& ff = j[0];
  EXPECT_EQ(ff["policy"], "ff");
  EXPECT_EQ(ff["gpu"], "a100-40gb");
  EXPECT_EQ(ff["hosts"], 2);
  EXPECT_EQ(ff["gpus"], 16);
  EXPECT_EQ(ff["requests"], 10);
  EXPECT_EQ(ff["accepted"], 9);
  EXPECT_DOUBLE_EQ(ff["acceptance"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(ff["active_hw_auc"].get<double>(), 1234.5678);
  EXPECT_DOUBLE_EQ(ff["mean_active_hw_rate"].get<double>(), 0.4115);
  EXPECT_EQ(ff["migrations"], 3);
  EXPECT_EQ(ff["intra_migrations"], 2);
  EXPECT_EQ(ff["inter_migrations"], 1);
  EXPECT_DOUBLE_EQ(ff["migration_share"].get<double>(), 0.3333);
  EXPECT_EQ(ff["peak_resident_vms"], 7);
  EXPECT_TRUE(ff["duration_s"].is_number_integer());  // 10800, not 10800.0
  EXPECT_EQ(ff["duration_s"], 10800);
  EXPECT_DOUBLE_EQ(ff["replay_ms"].get<double>(), 12.345);
  ASSERT_EQ(ff["per_profile"].size(), 2u);
  EXPECT_EQ(ff["per_profile"][0]["profile"], "1g.5gb");
  EXPECT_EQ(ff["per_profile"][1]["profile"], "3g.20gb");
  EXPECT_EQ(ff["per_profile"][1]["requests"], 4);
  EXPECT_EQ(ff["per_profile"][1]["accepted"], 3);
  EXPECT_DOUBLE_EQ(ff["per_profile"][1]["acceptance"].get<double>(), 0.75);
  EXPECT_EQ(j[1]["policy"], "grmu");
  EXPECT_EQ(j[1]["migrations"], 0);
}

TEST(ReplayReportFormat, JsonSamplesOnlyWhenAsked) {
  std::vector<ReplayReport> reports = TwoPolicies();
  reports[1].samples[0].cumulative_arrivals = 0;  // before any arrival
  reports[1].samples[0].cumulative_accepted = 0;
  EXPECT_FALSE(nlohmann::json::parse(FormatReplayJson(reports, false))[0].contains("samples"));

  const auto j = nlohmann::ordered_json::parse(FormatReplayJson(reports, true));
  ASSERT_EQ(j[0]["samples"].size(), 3u);
  const auto& hour2 = j[0]["samples"][2];
  std::vector<std::string> keys;
  for (const auto& [key, value] : hour2.items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"hour", "start_s", "arrivals", "accepted",
                                      "cumulative_acceptance", "active_hw_rate", "resident_vms"}));
  EXPECT_EQ(hour2["hour"], 2);
  EXPECT_EQ(hour2["start_s"], 7200);
  EXPECT_EQ(hour2["arrivals"], 4);
  EXPECT_EQ(hour2["accepted"], 3);
  EXPECT_DOUBLE_EQ(hour2["cumulative_acceptance"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(hour2["active_hw_rate"].get<double>(), 0.1095);
  EXPECT_EQ(hour2["resident_vms"], 7);
  EXPECT_TRUE(j[1]["samples"][0]["cumulative_acceptance"].is_null());
}

TEST(ReplayReportFormat, JsonOfNoReportsIsAnEmptyArray) {
  EXPECT_EQ(FormatReplayJson({}, true), "[]\n");
}

// ---- CSV ------------------------------------------------------------------

TEST(ReplayReportFormat, CsvRows) {
  const std::vector<std::string> lines = Lines(FormatReplayCsv(TwoPolicies()));
  const std::vector<std::string> expected = {
      "policy,hour,start_s,arrivals,accepted,acceptance,cumulative_acceptance,active_hw_rate,"
      "resident_vms",
      "ff,0,0,6,6,1,1,0.5,6",
      "ff,1,3600,0,0,,1,0.625,5",  // no arrival: acceptance empty
      "ff,2,7200,4,3,0.75,0.9,0.109457,7",
      "grmu,0,0,6,6,1,1,0.25,6",
      "grmu,1,3600,0,0,,1,0.25,6",
      "grmu,2,7200,4,4,1,1,0.4,8",
  };
  EXPECT_EQ(lines, expected);
}

TEST(ReplayReportFormat, CsvQuotesPolicyAndLeavesUndefinedEmpty) {
  std::vector<ReplayReport> reports = TwoPolicies();
  reports.resize(1);
  reports[0].policy = "mecc,\"v2\"";
  reports[0].samples.resize(1);
  reports[0].samples[0] = {0, 0, 0, 0, 0, std::numeric_limits<double>::quiet_NaN(), 0};
  const std::vector<std::string> lines = Lines(FormatReplayCsv(reports));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "\"mecc,\"\"v2\"\"\",0,0,0,0,,,,0");
  EXPECT_EQ(Lines(FormatReplayCsv({})).size(), 1u);
}

// ---- SVG ------------------------------------------------------------------

// Every x,y pair of every polyline, to check they stay inside the picture.
std::vector<std::pair<double, double>> PolylinePoints(const std::string& svg) {
  std::vector<std::pair<double, double>> points;
  const std::string tag = "points=\"";
  for (size_t at = svg.find(tag); at != std::string::npos; at = svg.find(tag, at + 1)) {
    std::istringstream in(
        svg.substr(at + tag.size(), svg.find('"', at + tag.size()) - at - tag.size()));
    double x, y;
    char comma;
    while (in >> x >> comma >> y) points.emplace_back(x, y);
  }
  return points;
}

void ExpectWellFormed(const std::string& svg) {
  EXPECT_TRUE(svg.starts_with("<svg")) << svg.substr(0, 40);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  std::string lower = svg;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  EXPECT_EQ(lower.find("nan"), std::string::npos);
  EXPECT_EQ(lower.find("inf"), std::string::npos);
  EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
  EXPECT_EQ(Count(svg, "<polyline"), Count(svg, "</polyline>"));
}

TEST(ReplayReportFormat, SvgHasOneLinePerPolicyPerChart) {
  const std::string svg = FormatReplaySvg(TwoPolicies());
  ExpectWellFormed(svg);
  EXPECT_NE(svg.find("Acceptance (cumulative, %)"), std::string::npos);
  EXPECT_NE(svg.find("Active hardware rate (%)"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 4u);
  EXPECT_EQ(Count(svg, "stroke=\"#0072B2\""), 3u);  // legend + two lines of ff
  EXPECT_EQ(Count(svg, "stroke=\"#E69F00\""), 3u);  // and of grmu
  EXPECT_NE(svg.find(">grmu</text>"), std::string::npos);
  const auto points = PolylinePoints(svg);
  EXPECT_EQ(points.size(), 12u);  // 2 policies x 2 charts x 3 hours
  for (const auto& [x, y] : points) {
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 900);
    EXPECT_GE(y, 0);
  }
}

TEST(ReplayReportFormat, SvgEscapesPolicyNames) {
  std::vector<ReplayReport> reports = TwoPolicies();
  reports[0].policy = "a<b&c";
  const std::string svg = FormatReplaySvg(reports);
  EXPECT_NE(svg.find("a&lt;b&amp;c"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
}

TEST(ReplayReportFormat, SvgWithoutReportsOrSamples) {
  const std::string none = FormatReplaySvg({});
  ExpectWellFormed(none);
  EXPECT_EQ(Count(none, "<polyline"), 0u);
  EXPECT_NE(none.find("Active hardware rate (%)"), std::string::npos);

  std::vector<ReplayReport> reports = TwoPolicies();
  for (ReplayReport& r : reports) r.samples.clear();
  const std::string empty = FormatReplaySvg(reports);
  ExpectWellFormed(empty);
  EXPECT_EQ(Count(empty, "<polyline"), 4u);
  EXPECT_TRUE(PolylinePoints(empty).empty());
}

// A lone sample still shows: a one-point polyline draws nothing, so it gets a dot.
TEST(ReplayReportFormat, SvgWithOneSample) {
  std::vector<ReplayReport> reports = TwoPolicies();
  for (ReplayReport& r : reports) r.samples.resize(1);
  reports[0].samples[0].active_hw_rate = std::numeric_limits<double>::infinity();
  const std::string svg = FormatReplaySvg(reports);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "<polyline"), 4u);
  EXPECT_EQ(PolylinePoints(svg).size(), 3u);  // the infinite rate is left out
  EXPECT_EQ(Count(svg, "<circle"), 3u);
}

}  // namespace
}  // namespace tessera
