#include "tessera/profile_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutator.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// ---- Helpers --------------------------------------------------------------

using testing::FreshTestDir;
using testing::WriteTextFile;

// What CSV mutants are made of: its delimiters and bytes, and numbers a
// parser must reject (or accept) without crashing.
const std::array<std::string, 12> kCsvNumbers = {
    "-1",  "NaN", "nan", "inf", "-inf", "1e400", "", "abc", "0", "1.5", "99999999999999999999",
    "0x10"};
const std::string kCsvBytes = std::string(",\n\r\"' :-.0\x01\xff", 13) + '\0';
const testing::MutationVocabulary kCsvMutations = {kCsvBytes, kCsvNumbers};

// Feeds `runs` mutants of `valid` to `parse`: each must give a value or an
// error whose message starts with `source`, and never throw.
template <typename Parse>
void Fuzz(const std::string& valid, const std::string& source, uint32_t seed, int runs,
          Parse parse) {
  std::mt19937 rng(seed);
  int errors = 0;
  for (int i = 0; i < runs; ++i) {
    const std::string mutant = testing::Mutate(valid, rng, kCsvMutations);
    EXPECT_NO_THROW({
      auto result = parse(mutant);
      if (!result.ok()) {
        ++errors;
        const std::string& message = result.status().message();
        EXPECT_TRUE(message.starts_with(source + ":")) << message << "\n--- input:\n" << mutant;
      }
    }) << mutant;
  }
  // Sanity: the mutations reach the error paths, and not every one breaks the input.
  EXPECT_GT(errors, runs / 10);
  EXPECT_LT(errors, runs);
}

const std::string kTesseraCsv =
    "model,gpu,profile,batch,procs,throughput_rps,latency_ms,p99_ms,mem_gib\n"
    "resnet50,a100-80gb,3g.40gb,8,2,1288.9,12.4,15.1,9.5\n"
    "resnet50,a100-80gb,3g.40gb,16,2,1500.25,21.3,,11\n"
    "BERT,A100-80GB,7g.80gb,1,1,74.408,13,,\n"
    "vgg19,h100-80gb,1g.10gb,4,3,210,55.5,60.25,7.75\n"
    "vgg19,a30-24gb,2g.12gb,32,1,400,80,90,10\n";

// ParvaGPU's format: CRLF, 0,0 rows, no final newline.
const std::string kParvaCsv =
    "Mig instance,Batch size,Workload Number,Throughput,Latency\r\n"
    "1,1,1,74.408,0.013\r\n"
    "1,1,2,52.42,0.019\r\n"
    "1,256,1,0,0\r\n"
    "2,8,3,120.5,0.066\r\n"
    "3,16,2,400,0.04\r\n"
    "4,32,5,300,0.107\r\n"
    "7,64,4,168.751,1.517\r\n"
    "7,256,5,0,0";

// ---- Tessera CSV ----------------------------------------------------------

TEST(ProfileIoTessera, ParsesRowsCanonicalizingNames) {
  Result<ProfileTable> table = ParseTesseraProfileCsv(kTesseraCsv, "t.csv");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->size(), 5u);
  // "BERT" on "A100-80GB" is stored under the canonical names.
  const ProfileEntry* bert = table->Find({"bert-large", "a100-80gb", "7g.80gb", 1, 1});
  ASSERT_NE(bert, nullptr);
  EXPECT_DOUBLE_EQ(bert->throughput_rps, 74.408);
  EXPECT_FALSE(bert->p99_ms.has_value());  // empty optional cell = not measured
  const ProfileEntry& first = table->entries()[0];
  EXPECT_EQ(first.key, (ProfileKey{"resnet50", "a100-80gb", "3g.40gb", 8, 2}));
  EXPECT_EQ(first.p99_ms, 15.1);
  EXPECT_EQ(first.mem_gib, 9.5);
  EXPECT_EQ(table->entries()[1].mem_gib, 11.0);
  EXPECT_FALSE(table->entries()[1].p99_ms.has_value());
}

TEST(ProfileIoTessera, OptionalColumnsInEitherOrderOrAbsent) {
  const std::string mem_then_p99 =
      "model,gpu,profile,batch,procs,throughput_rps,latency_ms,mem_gib,p99_ms\n"
      "resnet50,a100-80gb,1g.10gb,1,1,100,5,3.5,6\n";
  Result<ProfileTable> a = ParseTesseraProfileCsv(mem_then_p99, "a.csv");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->entries()[0].mem_gib, 3.5);
  EXPECT_EQ(a->entries()[0].p99_ms, 6.0);

  Result<ProfileTable> b = ParseTesseraProfileCsv(
      "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n"
      "resnet50,a100-80gb,1g.10gb,1,1,100,5\n",
      "b.csv");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_FALSE(b->entries()[0].p99_ms.has_value());
}

TEST(ProfileIoTessera, AcceptsCrlfMissingFinalNewlineAndBlankLines) {
  const std::string text =
      "\xEF\xBB\xBFmodel,gpu,profile,batch,procs,throughput_rps,latency_ms\r\n"
      "resnet50,a100-80gb,1g.10gb,1,1,100,5\r\n"
      "\r\n"
      "resnet50,a100-80gb,1g.10gb,2,1,150,7";
  Result<ProfileTable> table = ParseTesseraProfileCsv(text, "crlf.csv");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->size(), 2u);
  EXPECT_DOUBLE_EQ(table->entries()[1].latency_ms, 7);
}

TEST(ProfileIoTessera, FormatRoundTripsExactly) {
  ProfileTable table;
  // Doubles without a short decimal form must survive the trip bit for bit.
  ASSERT_TRUE(table
                  .Add({{"resnet50", "a100-80gb", "3g.40gb", 8, 2},
                        0.1 + 0.2,
                        1.0 / 3,
                        std::nullopt,
                        std::nullopt})
                  .ok());
  ASSERT_TRUE(table
                  .Add({{"bert-large", "h100-80gb", "7g.80gb", 256, 5},
                        12345678.123456,
                        1.0 / 7,
                        2.0 / 3,
                        std::nullopt})
                  .ok());
  ASSERT_TRUE(
      table.Add({{"vgg19", "a30-24gb", "1g.6gb", 1, 1}, 5e-3 / 3, 42, std::nullopt, 5.75}).ok());
  const std::string csv = FormatTesseraProfileCsv(table);
  EXPECT_TRUE(
      csv.starts_with("model,gpu,profile,batch,procs,throughput_rps,latency_ms,p99_ms,mem_gib\n"));
  Result<ProfileTable> back = ParseTesseraProfileCsv(csv, "round.csv");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << csv;
  ASSERT_EQ(back->size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const ProfileEntry& want = table.entries()[i];
    const ProfileEntry& got = back->entries()[i];
    EXPECT_EQ(got.key, want.key);
    EXPECT_EQ(got.throughput_rps, want.throughput_rps);  // exact, not approximately
    EXPECT_EQ(got.latency_ms, want.latency_ms);
    EXPECT_EQ(got.p99_ms, want.p99_ms);
    EXPECT_EQ(got.mem_gib, want.mem_gib);
  }
  EXPECT_EQ(FormatTesseraProfileCsv(*back), csv);
}

TEST(ProfileIoTessera, FormatOmitsOptionalColumnsNobodyHas) {
  ProfileTable table;
  ASSERT_TRUE(
      table.Add({{"resnet50", "a100-80gb", "1g.10gb", 1, 1}, 100, 5, std::nullopt, std::nullopt})
          .ok());
  EXPECT_EQ(FormatTesseraProfileCsv(table),
            "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n"
            "resnet50,a100-80gb,1g.10gb,1,1,100,5\n");
}

// Each bad input and the start of the message it must give: file, line, field.
// `rows` are data rows the check puts under the header; `files`, whole files.
TEST(ProfileIoTessera, ErrorMessagesNameFileLineAndField) {
  const std::string kHeader = "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n";
  struct Case {
    std::string name, text, message;
  };
  const std::vector<Case> files = {
      {"empty file", "", "t.csv:1: field 'header': empty file, expected 'model,gpu,profile,"},
      {"bad header", "model,gpu,profile,batch,procs,throughput,latency_ms\n",
       "t.csv:1: field 'header': expected 'model,gpu,profile,batch,procs,throughput_rps,"
       "latency_ms' optionally followed by 'p99_ms' and/or 'mem_gib', got 'model,gpu,profile,"
       "batch,procs,throughput,latency_ms'"},
      {"unknown optional column", "model,gpu,profile,batch,procs,throughput_rps,latency_ms,p50\n",
       "t.csv:1: field 'header': expected"},
      {"optional column twice",
       "model,gpu,profile,batch,procs,throughput_rps,latency_ms,p99_ms,p99_ms\n",
       "t.csv:1: field 'header': expected"},
      {"negative p99",
       "model,gpu,profile,batch,procs,throughput_rps,latency_ms,p99_ms\n"
       "resnet50,a100-80gb,1g.10gb,1,1,100,5,-2\n",
       "t.csv:2: field 'p99_ms': must be a finite number in [0.001, 3.6e+06], got '-2'"},
      {"duplicate entry",
       kHeader + "resnet50,a100-80gb,1g.10gb,1,1,100,5\n\nResNet50,A100-80GB,1g.10gb,1,1,90,6\n",
       "t.csv:4: field 'model,gpu,profile,batch,procs': duplicate entry (resnet50, a100-80gb, "
       "1g.10gb, batch 1, procs 1), first at line 2"},
  };
  const std::vector<Case> rows = {
      {"too few columns", "resnet50,a100-80gb,1g.10gb,1,1,100",
       "t.csv:2: field 'latency_ms': missing: the row has 6 columns, the header 7"},
      {"too many columns", "resnet50,a100-80gb,1g.10gb,1,1,100,5,7",
       "t.csv:2: field 'row': 8 columns but the header has 7: "
       "'resnet50,a100-80gb,1g.10gb,1,1,100,5,7'"},
      {"empty model", ",a100-80gb,1g.10gb,1,1,100,5", "t.csv:2: field 'model': must not be empty"},
      {"unknown gpu", "resnet50,v100,1g.10gb,1,1,100,5",
       "t.csv:2: field 'gpu': unknown GPU 'v100' (known: a100-40gb"},
      {"unknown profile", "resnet50,a100-80gb,3g.20gb,1,1,100,5",
       "t.csv:2: field 'profile': unknown MIG profile '3g.20gb' on a100-80gb"},
      {"batch 0", "resnet50,a100-80gb,1g.10gb,0,1,100,5",
       "t.csv:2: field 'batch': must be an integer in [1, 4096], got '0'"},
      {"fractional procs", "resnet50,a100-80gb,1g.10gb,1,1.5,100,5",
       "t.csv:2: field 'procs': must be an integer in [1, 48], got '1.5'"},
      {"negative procs", "resnet50,a100-80gb,1g.10gb,1,-2,100,5",
       "t.csv:2: field 'procs': must be an integer in [1, 48], got '-2'"},
      {"text throughput", "resnet50,a100-80gb,1g.10gb,1,1,fast,5",
       "t.csv:2: field 'throughput_rps': must be a finite number in [0.001, 1e+08], got 'fast'"},
      {"negative throughput", "resnet50,a100-80gb,1g.10gb,1,1,-1,5",
       "t.csv:2: field 'throughput_rps': must be a finite number in [0.001, 1e+08], got '-1'"},
      {"zero throughput", "resnet50,a100-80gb,1g.10gb,1,1,0,5",
       "t.csv:2: field 'throughput_rps': must be a finite number in [0.001, 1e+08], got '0'"},
      {"empty throughput", "resnet50,a100-80gb,1g.10gb,1,1,,5",
       "t.csv:2: field 'throughput_rps': must be a finite number in [0.001, 1e+08], got ''"},
      {"NaN latency", "resnet50,a100-80gb,1g.10gb,1,1,100,NaN",
       "t.csv:2: field 'latency_ms': must be a finite number in [0.001, 3.6e+06], got 'NaN'"},
      {"inf latency", "resnet50,a100-80gb,1g.10gb,1,1,100,inf",
       "t.csv:2: field 'latency_ms': must be a finite number in [0.001, 3.6e+06], got 'inf'"},
      {"overflowing latency", "resnet50,a100-80gb,1g.10gb,1,1,100,1e400",
       "t.csv:2: field 'latency_ms': must be a finite number in [0.001, 3.6e+06], got '1e400'"},
      // Input limits (input_limits.h): batch and procs become allocations and
      // loop bounds, throughput and latency divisors.
      {"batch 2^31", "resnet50,a100-80gb,1g.10gb,2147483647,1,100,5",
       "t.csv:2: field 'batch': must be an integer in [1, 4096], got '2147483647'"},
      {"batch past int", "resnet50,a100-80gb,1g.10gb,2147483648,1,100,5",
       "t.csv:2: field 'batch': must be an integer in [1, 4096], got '2147483648'"},
      {"procs 2^31", "resnet50,a100-80gb,1g.10gb,1,2147483647,100,5",
       "t.csv:2: field 'procs': must be an integer in [1, 48], got '2147483647'"},
      {"procs past the MPS client limit", "resnet50,a100-80gb,1g.10gb,1,49,100,5",
       "t.csv:2: field 'procs': must be an integer in [1, 48], got '49'"},
      {"huge throughput", "resnet50,a100-80gb,1g.10gb,1,1,1e308,5",
       "t.csv:2: field 'throughput_rps': must be a finite number in [0.001, 1e+08], got '1e308'"},
      {"tiny throughput", "resnet50,a100-80gb,1g.10gb,1,1,1e-300,5",
       "t.csv:2: field 'throughput_rps': must be a finite number in [0.001, 1e+08], got '1e-300'"},
      {"tiny latency", "resnet50,a100-80gb,1g.10gb,1,1,100,1e-300",
       "t.csv:2: field 'latency_ms': must be a finite number in [0.001, 3.6e+06], got '1e-300'"},
  };
  auto check = [](const Case& c, const std::string& text) {
    Result<ProfileTable> r = ParseTesseraProfileCsv(text, "t.csv");
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_TRUE(r.status().message().starts_with(c.message))
        << c.name << "\n  got:  " << r.status().message() << "\n  want: " << c.message;
  };
  for (const Case& c : files) check(c, c.text);
  for (const Case& c : rows) check(c, kHeader + c.text + "\n");
}

// ---- ParvaGPU CSV ---------------------------------------------------------

TEST(ProfileIoParva, ConvertsUnitsAndSkipsInfeasibleRows) {
  Result<ProfileTable> table = ParseParvaProfileCsv(kParvaCsv, "bert.csv", "bert", "a100-80gb");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->size(), 6u);  // 8 rows, 2 of them `0,0`
  // Row 3: 52.42 samples/s per process x 2 processes; 0.019 s -> 19 ms.
  const ProfileEntry* e = table->Find({"bert-large", "a100-80gb", "1g.10gb", 1, 2});
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->throughput_rps, 104.84);
  EXPECT_DOUBLE_EQ(e->latency_ms, 19);
  // Sizes map to the primary profiles: 2 -> 2g.20gb, 3 -> 3g.40gb, 4 -> 4g.40gb, 7 -> 7g.80gb.
  EXPECT_NE(table->Find({"bert-large", "a100-80gb", "2g.20gb", 8, 3}), nullptr);
  EXPECT_NE(table->Find({"bert-large", "a100-80gb", "3g.40gb", 16, 2}), nullptr);
  EXPECT_NE(table->Find({"bert-large", "a100-80gb", "4g.40gb", 32, 5}), nullptr);
  EXPECT_NE(table->Find({"bert-large", "a100-80gb", "7g.80gb", 64, 4}), nullptr);
  EXPECT_EQ(table->Find({"bert-large", "a100-80gb", "1g.10gb", 256, 1}), nullptr);
}

TEST(ProfileIoParva, MapsSizesOntoOtherGpus) {
  // On an H100 80GB the 3-slice primary profile is 3g.40gb, the 1-slice one 1g.10gb.
  Result<ProfileTable> table = ParseParvaProfileCsv(kParvaCsv, "p.csv", "vgg16", "h100-80gb");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->Gpus(), std::vector<std::string>{"h100-80gb"});
}

TEST(ProfileIoParva, ErrorMessagesNameFileLineAndField) {
  const std::string kHeader = "Mig instance,Batch size,Workload Number,Throughput,Latency\r\n";
  struct Case {
    std::string name, text, message;
  };
  const std::vector<Case> cases = {
      {"empty file", "", "p.csv:1: field 'header': empty file, expected 'Mig instance,"},
      {"tessera header", "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n",
       "p.csv:1: field 'header': expected 'Mig instance,Batch size,Workload Number,Throughput,"
       "Latency', got 'model,gpu"},
      {"size 5", kHeader + "5,1,1,10,0.1\r\n",
       "p.csv:2: field 'Mig instance': no MIG profile with 5 compute slices on a100-80gb"},
      {"size 0", kHeader + "0,1,1,10,0.1\r\n",
       "p.csv:2: field 'Mig instance': must be an integer in [1, 8], got '0'"},
      {"batch 0", kHeader + "1,0,1,10,0.1\r\n",
       "p.csv:2: field 'Batch size': must be an integer in [1, 4096], got '0'"},
      {"procs 0", kHeader + "1,1,0,10,0.1\r\n",
       "p.csv:2: field 'Workload Number': must be an integer in [1, 48], got '0'"},
      {"procs 2^31", kHeader + "1,1,2147483647,10,0.1\r\n",
       "p.csv:2: field 'Workload Number': must be an integer in [1, 48], got '2147483647'"},
      {"batch 2^31", kHeader + "1,2147483647,1,10,0.1\r\n",
       "p.csv:2: field 'Batch size': must be an integer in [1, 4096], got '2147483647'"},
      {"huge segment throughput", kHeader + "1,1,40,1e7,0.1\r\n",
       "p.csv:2: field 'Throughput': '1e7' x 40 processes = 4e+08 req/s per segment: must be a "
       "finite number in [0.001, 1e+08], got 4e+08"},
      {"latency of a year", kHeader + "1,1,1,10,31536000\r\n",
       "p.csv:2: field 'Latency': '31536000' s = 3.1536e+10 ms: must be a finite number in "
       "[0.001, 3.6e+06], got 3.1536e+10"},
      {"only latency zero", kHeader + "1,1,1,74.4,0\r\n",
       "p.csv:2: field 'Latency': is 0 but Throughput is '74.4'; only '0,0' marks an infeasible "
       "configuration"},
      {"only throughput zero", kHeader + "1,1,1,0,0.013\r\n",
       "p.csv:2: field 'Throughput': is 0 but Latency is '0.013'"},
      {"negative latency", kHeader + "1,1,1,10,-0.1\r\n",
       "p.csv:2: field 'Latency': must be a finite number >= 0, got '-0.1'"},
      {"nan throughput", kHeader + "1,1,1,nan,0.1\r\n",
       "p.csv:2: field 'Throughput': must be a finite number >= 0, got 'nan'"},
      {"missing column", kHeader + "1,1,1,10\r\n",
       "p.csv:2: field 'Latency': missing: the row has 4 columns, the header 5"},
      {"duplicate infeasible row", kHeader + "1,1,1,0,0\r\n1,1,1,0,0",
       "p.csv:3: field 'Mig instance,Batch size,Workload Number': duplicate entry (bert-large, "
       "a100-80gb, 1g.10gb, batch 1, procs 1), first at line 2"},
  };
  for (const Case& c : cases) {
    Result<ProfileTable> r = ParseParvaProfileCsv(c.text, "p.csv", "bert", "a100-80gb");
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_TRUE(r.status().message().starts_with(c.message))
        << c.name << "\n  got:  " << r.status().message() << "\n  want: " << c.message;
  }
  Result<ProfileTable> bad_gpu = ParseParvaProfileCsv(kParvaCsv, "p.csv", "bert", "v100");
  ASSERT_FALSE(bad_gpu.ok());
  EXPECT_TRUE(bad_gpu.status().message().starts_with("p.csv: unknown GPU 'v100'"))
      << bad_gpu.status().message();
}

// ---- LoadProfiles ---------------------------------------------------------

TEST(ProfileIoLoad, MissingPathIsNotFound) {
  Result<ProfileTable> r = LoadProfiles("/nonexistent/tessera/profiles.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "/nonexistent/tessera/profiles.csv: no such file or directory");
}

TEST(ProfileIoLoad, DetectsTheFormatOfAFile) {
  const fs::path dir = FreshTestDir();
  WriteTextFile(dir / "mine.csv", kTesseraCsv);
  WriteTextFile(dir / "bert.csv", kParvaCsv);
  WriteTextFile(dir / "other.csv", "a,b,c\n1,2,3\n");

  Result<ProfileTable> mine = LoadProfiles((dir / "mine.csv").string());
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  EXPECT_EQ(mine->size(), 5u);

  // A single ParvaGPU file: the model is the file stem, canonicalized.
  Result<ProfileTable> bert = LoadProfiles((dir / "bert.csv").string(), "a100-40gb");
  ASSERT_TRUE(bert.ok()) << bert.status().ToString();
  EXPECT_EQ(bert->Models(), std::vector<std::string>{"bert-large"});
  EXPECT_EQ(bert->Gpus(), std::vector<std::string>{"a100-40gb"});

  Result<ProfileTable> other = LoadProfiles((dir / "other.csv").string());
  ASSERT_FALSE(other.ok());
  EXPECT_TRUE(other.status().message().starts_with(
      (dir / "other.csv").string() + ":1: field 'header': unrecognized profile CSV header 'a,b,c'"))
      << other.status().message();
  fs::remove_all(dir);
}

TEST(ProfileIoLoad, ReadsEveryCsvOfADirectoryInNameOrder) {
  const fs::path dir = FreshTestDir();
  WriteTextFile(dir / "vgg16.csv", kParvaCsv);
  WriteTextFile(dir / "bert.csv", kParvaCsv);
  WriteTextFile(dir / "notes.txt", "not a profile");
  Result<ProfileTable> table = LoadProfiles(dir.string());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->Models(), (std::vector<std::string>{"bert-large", "vgg16"}));
  EXPECT_EQ(table->entries()[0].key.model, "bert-large");  // bert.csv first

  // A broken file names itself, its line and its field.
  WriteTextFile(dir / "resnet50.csv",
                "Mig instance,Batch size,Workload Number,Throughput,Latency\n"
                "1,1,1,abc,0.1\n");
  Result<ProfileTable> broken = LoadProfiles(dir.string());
  ASSERT_FALSE(broken.ok());
  EXPECT_TRUE(broken.status().message().starts_with(
      (dir / "resnet50.csv").string() + ":2: field 'Throughput': must be a finite number >= 0"))
      << broken.status().message();

  // Two files of one canonical model is an error, not a silent merge.
  fs::remove(dir / "resnet50.csv");
  WriteTextFile(dir / "BERT.csv", kParvaCsv);
  Result<ProfileTable> twice = LoadProfiles(dir.string());
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("model 'bert-large' is already loaded from"),
            std::string::npos)
      << twice.status().message();
  fs::remove_all(dir);
}

TEST(ProfileIoLoad, DirectoryWithoutCsvIsAnError) {
  const fs::path dir = FreshTestDir();
  Result<ProfileTable> r = LoadProfiles(dir.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(r.status().message().starts_with(dir.string() + ": no *.csv file"));
  fs::remove_all(dir);
}

// ---- Conformance with the artifact's data ---------------------------------

TEST(ProfileIoConformance, ParvaProfDataFeasibleRowCounts) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("parvagpu/prof_data");
  const std::string dir = testing::SharedDataPath("parvagpu/prof_data");
  Result<ProfileTable> table = LoadProfiles(dir);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  // data/parvagpu/README.md: the feasible (non 0,0) rows per model.
  const std::map<std::string, size_t> expected = {
      {"bert-large", 214},  {"densenet121", 151}, {"densenet169", 139}, {"densenet201", 131},
      {"inceptionv3", 179}, {"mobilenetv2", 170}, {"resnet101", 150},   {"resnet152", 134},
      {"resnet50", 161},    {"vgg16", 160},       {"vgg19", 158}};
  for (const auto& [model, rows] : expected) {
    EXPECT_EQ(table->EntriesFor(model, "a100-80gb").size(), rows) << model;
  }
  EXPECT_EQ(table->size(), 1747u);
  EXPECT_EQ(table->Gpus(), std::vector<std::string>{"a100-80gb"});
  // bert.csv line 2 is "1,1,1,74.408,0.013": 1g.10gb, batch 1, one process.
  const ProfileEntry* bert = table->Find({"bert-large", "a100-80gb", "1g.10gb", 1, 1});
  ASSERT_NE(bert, nullptr);
  EXPECT_DOUBLE_EQ(bert->throughput_rps, 74.408);
  EXPECT_DOUBLE_EQ(bert->latency_ms, 13);
  // bert.csv line 3 is "1,1,2,52.42,0.019": the segment runs two processes.
  const ProfileEntry* two = table->Find({"bert-large", "a100-80gb", "1g.10gb", 1, 2});
  ASSERT_NE(two, nullptr);
  EXPECT_DOUBLE_EQ(two->throughput_rps, 2 * 52.42);

  // One model file alone reads the same.
  Result<ProfileTable> resnet50 = LoadProfiles(dir + "/resnet50.csv");
  ASSERT_TRUE(resnet50.ok()) << resnet50.status().ToString();
  EXPECT_EQ(resnet50->size(), 161u);
}

// ---- Fuzz -----------------------------------------------------------------

TEST(ProfileIoFuzz, TesseraCsvNeverCrashes) {
  Fuzz(kTesseraCsv, "fuzz.csv", 20240917, 4000,
       [](const std::string& text) { return ParseTesseraProfileCsv(text, "fuzz.csv"); });
}

TEST(ProfileIoFuzz, ParvaCsvNeverCrashes) {
  Fuzz(kParvaCsv, "fuzz.csv", 11, 4000, [](const std::string& text) {
    return ParseParvaProfileCsv(text, "fuzz.csv", "resnet50", "a100-80gb");
  });
}

TEST(ProfileIoFuzz, FormatOfAnyParsedMutantRoundTrips) {
  std::mt19937 rng(7);
  for (int i = 0; i < 1000; ++i) {
    Result<ProfileTable> table =
        ParseTesseraProfileCsv(testing::Mutate(kTesseraCsv, rng, kCsvMutations), "fuzz.csv");
    if (!table.ok()) continue;
    const std::string csv = FormatTesseraProfileCsv(*table);
    Result<ProfileTable> back = ParseTesseraProfileCsv(csv, "fuzz.csv");
    ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << csv;
    EXPECT_EQ(FormatTesseraProfileCsv(*back), csv);
  }
}

}  // namespace
}  // namespace tessera
