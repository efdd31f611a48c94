#include "tessera/profile/triton_import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <tuple>

#include "fuzz_mutator.h"
#include "tessera/profile_io.h"
#include "tessera/util/text_io.h"
#include "test_paths.h"
#include "triton_csv_writer.h"

namespace tessera {
namespace {

using testing::Micros;

constexpr std::string_view kPaHeader =
    "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
    "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
    "p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response,"
    "response wait\n";
constexpr std::string_view kMaHeader =
    "Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,"
    "Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms),Avg Latency (ms)\n";

TritonImportOptions PaOptions() {
  TritonImportOptions o;
  o.format = TritonFormat::kPerfAnalyzer;
  o.gpu = "a100-80gb";
  o.mig_profile = "3g.40gb";
  o.model = "resnet50";
  o.batch = 8;
  return o;
}

TritonImportOptions MaOptions() {
  TritonImportOptions o;
  o.format = TritonFormat::kModelAnalyzer;
  o.gpu = "A100-80GB";  // catalog names match case-insensitively
  o.mig_profile = "2g.20gb";
  return o;
}

// The import's error for `text` under `options`; empty when it succeeds.
std::string ImportError(std::string_view text, const TritonImportOptions& options) {
  TritonImporter importer;
  const Status s = importer.Add(text, "run.csv", options);
  return s.ok() ? std::string() : s.message();
}

TEST(TritonImportPerfAnalyzer, MapsConcurrencyToProcsAndMicrosToMs) {
  // The documented example's rows (perf_analyzer docs, "Visualizing Latency
  // vs. Throughput"), with the --verbose-csv columns; rows come sorted by
  // throughput, not by concurrency.
  const std::string text = std::string(kPaHeader) +
                           "1,69.2,225,2148,64,206,11781,19,0,13891,18795,19753,21018,14503,225,"
                           "14278\n"
                           "3,84.2,237,1768,21673,209,11742,17,0,35398,43984,47085,51701,35846,"
                           "237,35609\n";
  TritonImporter importer;
  ASSERT_TRUE(importer.Add(text, "run.csv", PaOptions()).ok());
  const ProfileTable& t = importer.table();
  ASSERT_EQ(t.size(), 2u);
  const ProfileEntry* one = t.Find({"resnet50", "a100-80gb", "3g.40gb", 8, 1});
  ASSERT_NE(one, nullptr);
  EXPECT_DOUBLE_EQ(one->throughput_rps, 69.2);
  EXPECT_DOUBLE_EQ(one->latency_ms, 14.503);  // Avg latency, us -> ms
  EXPECT_DOUBLE_EQ(*one->p99_ms, 21.018);
  const ProfileEntry* three = t.Find({"resnet50", "a100-80gb", "3g.40gb", 8, 3});
  ASSERT_NE(three, nullptr);
  EXPECT_DOUBLE_EQ(three->throughput_rps, 84.2);

  TritonImportOptions p95 = PaOptions();
  p95.latency = LatencyStat::kP95;
  TritonImporter percentile;
  ASSERT_TRUE(percentile.Add(text, "run.csv", p95).ok());
  EXPECT_DOUBLE_EQ(percentile.table().entries()[0].latency_ms, 19.753);
}

TEST(TritonImportModelAnalyzer, TakesRowsWhoseConcurrencyIsTheInstanceCount) {
  const std::string text = std::string(kMaHeader) +
                           "resnet50_libtorch,4,2,resnet50_libtorch_config_1,2:GPU,16,Yes,400,"
                           "30.5,20\n"
                           "resnet50_libtorch,4,4,resnet50_libtorch_config_1,2:GPU,16,No,410,"
                           "60,41\n"
                           "resnet50_libtorch,1,1,resnet50_libtorch_config_0,1/GPU,16,Yes,150,"
                           "9,6.5\n";
  TritonImporter importer;
  ASSERT_TRUE(importer.Add(text, "m.csv", MaOptions()).ok());
  EXPECT_EQ(importer.set_aside(), 1);
  const ProfileTable& t = importer.table();
  ASSERT_EQ(t.size(), 2u);
  const ProfileEntry* e = t.Find({"resnet50_libtorch", "a100-80gb", "2g.20gb", 4, 2});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->throughput_rps, 400);
  EXPECT_EQ(e->latency_ms, 20);
  EXPECT_EQ(*e->p99_ms, 30.5);
  // --model renames every row.
  TritonImportOptions renamed = MaOptions();
  renamed.model = "ResNet50";
  TritonImporter other;
  ASSERT_TRUE(other.Add(text, "m.csv", renamed).ok());
  EXPECT_NE(other.table().Find({"resnet50", "a100-80gb", "2g.20gb", 1, 1}), nullptr);
}

// Conformance: ParvaGPU's measured A100-80GB profiles (prof_data, all 11
// models, 1,747 feasible configurations), written out as perf_analyzer and
// Model Analyzer document their CSVs and imported again, give the same table.
TEST(TritonImportConformance, ParvaProfilesSurviveBothToolsFormats) {
  if (!testing::SharedDataPresent("parvagpu/prof_data")) {
    GTEST_SKIP() << testing::SharedDataPath("parvagpu/prof_data")
                 << " is absent (docs/data-sources.md says where ParvaGPU's data comes from)";
  }
  Result<ProfileTable> parva = LoadProfiles(testing::SharedDataPath("parvagpu/prof_data"));
  ASSERT_TRUE(parva.ok()) << parva.status().message();

  TritonImporter pa;
  for (const auto& [key, text] : testing::PerfAnalyzerCsvs(*parva)) {
    TritonImportOptions o = PaOptions();
    std::tie(o.model, o.mig_profile, o.batch) = key;
    ASSERT_TRUE(pa.Add(text, o.model + "-" + o.mig_profile + ".csv", o).ok());
  }
  TritonImporter ma;
  for (const auto& [profile, text] : testing::ModelAnalyzerCsvs(*parva)) {
    TritonImportOptions o = MaOptions();
    o.mig_profile = profile;
    ASSERT_TRUE(ma.Add(text, profile + ".csv", o).ok());
  }
  EXPECT_EQ(ma.set_aside(), static_cast<int>(parva->size()));
  for (const TritonImporter* imported : {&pa, &ma}) {
    ASSERT_EQ(imported->table().size(), parva->size());
    for (const ProfileEntry& want : parva->entries()) {
      const ProfileEntry* got = imported->table().Find(want.key);
      ASSERT_NE(got, nullptr) << want.key.model << " " << want.key.profile;
      // Exact to the CSV's printed precision: both writers print the
      // throughput at 6 significant digits, which reads back to the very
      // double of that printed text. 548 of ParvaGPU's 1,747 segment
      // throughputs have more digits (per-process figures to 3 decimals
      // times the processes, e.g. 1234.567) and move by that rounding alone,
      // at most 5e-6 relative.
      EXPECT_EQ(got->throughput_rps, *ToDouble(fmt::format("{:.6g}", want.throughput_rps)));
      // ParvaGPU's latencies are whole milliseconds (seconds to 3 decimals):
      // perf_analyzer's whole microseconds hold them exactly, and so does
      // Model Analyzer's 6 digits in ms; compared in whole microseconds to
      // absorb the x1000 / x0.001 of the two unit conversions (< 1e-12 ms).
      EXPECT_EQ(Micros(got->latency_ms), Micros(want.latency_ms));
      EXPECT_NEAR(got->latency_ms, want.latency_ms, 1e-9);
      ASSERT_TRUE(got->p99_ms.has_value());
      EXPECT_EQ(Micros(*got->p99_ms), Micros(want.latency_ms * 1.3));
    }
  }
}

TEST(TritonImportHostile, ErrorsNameFileLineAndColumn) {
  const std::string row1 =
      "1,69.2,225,2148,64,206,11781,19,0,13891,18795,19753,21018,14503,225,1\n";
  const std::array<std::pair<std::string, std::string>, 14> cases = {{
      {"", "run.csv:1: field 'header': empty; expected the header of perf_analyzer's"},
      {"\n\n", "run.csv:1: field 'header': empty"},
      {std::string(kPaHeader), "run.csv:1: field 'row': no measurement row after the header"},
      {"Concurrency,Inferences/Second\n1,5\n",
       "run.csv:1: field 'Avg latency': missing column, needed for the mean latency (--latency "
       "mean); perf_analyzer writes it with --verbose-csv"},
      {"Request Rate,Inferences/Second,Avg latency\n10,5,100\n",
       "run.csv:1: field 'Request Rate': an open-loop request-rate sweep"},
      {"Concurrency,Concurrency,Inferences/Second\n",
       "run.csv:1: field 'Concurrency': column repeated (columns 1 and 2)"},
      {std::string(kPaHeader) + "1,69.2\n",
       "run.csv:2: field 'row': 2 columns but the header has 16"},
      {std::string(kPaHeader) + "1,,225,2148,64,206,11781,19,0,1,1,1,1,1,1,1\n",
       "run.csv:2: field 'Inferences/Second': not a number: ''"},
      {std::string(kPaHeader) + "1,abc,225,2148,64,206,11781,19,0,1,1,1,1,1,1,1\n",
       "run.csv:2: field 'Inferences/Second': not a number: 'abc'"},
      {std::string(kPaHeader) + "1,1e308,225,2148,64,206,11781,19,0,1,1,1,1,1,1,1\n",
       "run.csv:2: field 'Inferences/Second': must be a finite number in [0.001, 1e+08], got "
       "'1e308'"},
      {std::string(kPaHeader) + "1,5,225,2148,64,206,11781,19,0,1,1,1,1,nan,1,1\n",
       "run.csv:2: field 'Avg latency': 'nan' us = nan ms"},
      {std::string(kPaHeader) + "1,5,225,2148,64,206,11781,19,0,1,1,1,1,1e20,1,1\n",
       "run.csv:2: field 'Avg latency': '1e20' us = 1e+17 ms: must be"},
      {std::string(kPaHeader) + "64,5,225,2148,64,206,11781,19,0,1,1,1,1,10,1,1\n",
       "run.csv:2: field 'Concurrency': (batches in flight = the segment's processes) must be an "
       "integer in [1, 48], got '64'"},
      {std::string(kPaHeader) + row1 + "\n" + row1,
       "run.csv:4: field 'row': duplicate entry (resnet50, a100-80gb, 3g.40gb, batch 8, procs 1), "
       "first at run.csv:2"},
  }};
  for (const auto& [text, want] : cases) {
    const std::string got = ImportError(text, PaOptions());
    EXPECT_TRUE(got.starts_with(want)) << "got:  " << got << "\nwant: " << want;
  }
  const std::array<std::pair<std::string, std::string>, 5> ma_cases = {{
      {std::string(kMaHeader) + "m,4,2,c,2:CPU,16,Yes,400,30,20\n",
       "run.csv:2: field 'Instance Group': expected 'N:GPU' (one KIND_GPU group, N in [1, 48]), "
       "got '2:CPU'"},
      {std::string(kMaHeader) + "m,4,2,c,1:CPU + 2:GPU,16,Yes,400,30,20\n",
       "run.csv:2: field 'Instance Group': expected 'N:GPU'"},
      {std::string(kMaHeader) + "m,0,2,c,2:GPU,16,Yes,400,30,20\n",
       "run.csv:2: field 'Batch': (client batch) must be an integer in [1, 4096], got '0'"},
      // A row set aside is still checked.
      {std::string(kMaHeader) + "m,4,3,c,2:GPU,16,Yes,400,30,-1\n",
       "run.csv:2: field 'Avg Latency (ms)': must be a finite number in [0.001, 3.6e+06], got "
       "'-1'"},
      {std::string(kMaHeader) + ",4,2,c,2:GPU,16,Yes,400,30,20\n",
       "run.csv:2: field 'Model': must not be empty"},
  }};
  for (const auto& [text, want] : ma_cases) {
    const std::string got = ImportError(text, MaOptions());
    EXPECT_TRUE(got.starts_with(want)) << "got:  " << got << "\nwant: " << want;
  }
}

TEST(TritonImportHostile, OptionsNameTheirFlag) {
  TritonImportOptions o = PaOptions();
  o.gpu = "v100";
  EXPECT_TRUE(ImportError("x", o).starts_with("--gpu: ")) << ImportError("x", o);
  o = PaOptions();
  o.mig_profile = "9g.99gb";
  EXPECT_EQ(ImportError("x", o), "--mig-profile: '9g.99gb' is not a MIG profile of a100-80gb");
  o = PaOptions();
  o.model = "";
  EXPECT_TRUE(ImportError("x", o).starts_with("--model: required")) << ImportError("x", o);
  for (const std::string model : {" ", "a,b", "a\nb"}) {
    o.model = model;
    EXPECT_TRUE(ImportError("x", o).starts_with("--model: ")) << ImportError("x", o);
    o.format = TritonFormat::kModelAnalyzer;
    EXPECT_TRUE(ImportError("x", o).starts_with("--model: ")) << ImportError("x", o);
    o.format = TritonFormat::kPerfAnalyzer;
  }
  o = PaOptions();
  o.batch = 0;
  EXPECT_TRUE(ImportError("x", o).starts_with("--batch: ")) << ImportError("x", o);
  o = MaOptions();
  o.latency = LatencyStat::kP50;
  EXPECT_TRUE(ImportError("x", o).starts_with("--latency: ")) << ImportError("x", o);
  EXPECT_FALSE(ParseTritonFormat("perf_analyzer").ok());
  EXPECT_FALSE(ParseLatencyStat("p100").ok());
}

TEST(TritonImportHostile, AFailedFileLeavesTheTableAsItWas) {
  TritonImporter importer;
  const std::string good = std::string(kPaHeader) +
                           "1,69.2,225,2148,64,206,11781,19,0,13891,18795,19753,21018,14503,1,1\n";
  ASSERT_TRUE(importer.Add(good, "a.csv", PaOptions()).ok());
  TritonImportOptions other = PaOptions();
  other.batch = 16;
  const std::string bad = std::string(kPaHeader) +
                          "2,69.2,225,2148,64,206,11781,19,0,13891,18795,19753,21018,14503,1,1\n"
                          "3,x,225,2148,64,206,11781,19,0,13891,18795,19753,21018,14503,1,1\n";
  EXPECT_FALSE(importer.Add(bad, "b.csv", other).ok());
  EXPECT_EQ(importer.table().size(), 1u);
  // The same file again repeats every key, naming where each was first read.
  const Status twice = importer.Add(good, "c.csv", PaOptions());
  EXPECT_EQ(twice.message(),
            "c.csv:2: field 'row': duplicate entry (resnet50, a100-80gb, 3g.40gb, batch 8, procs "
            "1), first at a.csv:2");
}

// Mutants of valid files of both tools: each gives an error naming the file,
// or a table whose Tessera CSV `tessera plan --profiles` reads back as is.
TEST(TritonImportFuzz, MutantsFailNamingTheFileOrImportReadably) {
  const std::array<std::string, 12> numbers = {"-1",   "NaN", "nan", "inf", "1e400",
                                               "",     "abc", "0",   "1.5", "99999999999999999999",
                                               "0x10", "49"};
  const std::string bytes = std::string(",\n\r\"' :/-.0\x01\xff", 14) + '\0';
  const testing::MutationVocabulary vocabulary = {bytes, numbers};
  const std::string pa = std::string(kPaHeader) +
                         "1,69.2,225,2148,64,206,11781,19,0,13891,18795,19753,21018,14503,1,1\n"
                         "2,87.2,235,1973,9151,190,11346,17,0,21874,28557,29768,34766,22000,1,1\n";
  const std::string ma = std::string(kMaHeader) +
                         "resnet50,4,2,resnet50_config_1,2:GPU,16,Yes,400,30.5,20\n"
                         "resnet50,4,4,resnet50_config_1,2:GPU,16,No,410,60,41\n"
                         "bert,1,1,bert_config_0,1/GPU,16,Yes,150,9,6.5\n";
  std::mt19937 rng(23);
  int ok = 0;
  for (int i = 0; i < 1500; ++i) {
    const bool is_pa = i % 2 == 0;
    const std::string mutant = testing::Mutate(is_pa ? pa : ma, rng, vocabulary);
    TritonImporter importer;
    const Status s = importer.Add(mutant, "run.csv", is_pa ? PaOptions() : MaOptions());
    if (!s.ok()) {
      EXPECT_TRUE(s.message().starts_with("run.csv:")) << s.message();
      continue;
    }
    ++ok;
    Result<ProfileTable> back =
        ParseTesseraProfileCsv(FormatTesseraProfileCsv(importer.table()), "out.csv");
    ASSERT_TRUE(back.ok()) << back.status().message() << "\nfrom:\n" << mutant;
    EXPECT_EQ(back->size(), importer.table().size());
  }
  EXPECT_GT(ok, 0);  // some mutants (e.g. a swapped data row) still import
}

}  // namespace
}  // namespace tessera
