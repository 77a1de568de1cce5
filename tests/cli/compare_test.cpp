// End-to-end tests of `schedlab compare`: runs the built binary (SCHEDLAB_BINARY).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
};

class cliCompare : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("schedlab_compare_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& content) {
    auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Runs `schedlab compare ARGS` in the temp dir; `stdin_file` is fed to standard input.
  CliRun run(const std::string& args, const std::string& stdin_file = "/dev/null") {
    const auto out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string cmd = "cd '" + dir_.string() + "' && '" + SCHEDLAB_BINARY + "' compare " +
                            args + " < '" + stdin_file + "' > '" + out.string() + "' 2> '" +
                            err.string() + "'";
    const int rc = std::system(cmd.c_str());
    CliRun r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // A usage error: exit 2, nothing on stdout, one line "schedlab: error: <message>" on stderr.
  void expect_usage_error(const CliRun& r, const std::string& message) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "schedlab: error: " + message + "\n");
  }

  fs::path dir_;
  const std::string base_ = "100\n102\n98\n101\n99.5\n100.7\n103\n97.9\n";
  const std::string better_ = "96\n95.5\n97\n94.8\n96.3\n95.9\n96.6\n95.1\n";
};

}  // namespace

TEST_F(cliCompare, PlainFilesWithLabels) {
  write("a.txt", "# run 1\n" + base_ + "\n");
  write("b.txt", better_);
  auto r = run("--labels base,patched --unit usec --metric wakeup a.txt b.txt");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("wakeup (usec), Lower is better\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("verdict: patched is 4.35% better than base (KS p=0.0002, significant at 5%)"),
            std::string::npos)
      << r.out;
}

TEST_F(cliCompare, DefaultLabelsAreFileNames) {
  fs::create_directories(dir_ / "runs");
  write("runs/v6.8.txt", base_);
  write("runs/v6.9.txt", better_);
  auto r = run("runs/v6.8.txt runs/v6.9.txt");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: v6.9.txt is 4.35% better than v6.8.txt"), std::string::npos)
      << r.out;
}

TEST_F(cliCompare, HigherIsBetterFlipsTheSign) {
  write("a.txt", base_);
  write("b.txt", better_);
  auto r = run("--higher-is-better a.txt b.txt");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("value, Higher is better"), std::string::npos);
  EXPECT_NE(r.out.find("b.txt is 4.35% worse than a.txt"), std::string::npos) << r.out;
}

TEST_F(cliCompare, CsvJsonAndStdinInputsAgree) {
  write("a.txt", base_);
  write("b.csv", "run,lat_us\n1,96\n2,95.5\n3,97\n4,94.8\n5,96.3\n6,95.9\n7,96.6\n8,95.1\n");
  write("c.json", "[96, 95.5, 97, 94.8, 96.3, 95.9, 96.6, 95.1]");
  write("d.json", R"([{"lat_us": 96}, {"lat_us": 95.5}, {"lat_us": 97}, {"lat_us": 94.8},
                     {"lat_us": 96.3}, {"lat_us": 95.9}, {"lat_us": 96.6}, {"lat_us": 95.1}])");
  write("e.json", R"({"lat_us": [96, 95.5, 97, 94.8, 96.3, 95.9, 96.6, 95.1], "other": [1]})");
  const std::string in = write("in.txt", better_);
  auto r = run("--column lat_us --format json a.txt b.csv c.json d.json e.json -", in);
  ASSERT_EQ(r.status, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& m = doc.at("metrics").at(0);
  EXPECT_EQ(m.at("name"), "lat_us");
  const auto& sets = m.at("sets");
  ASSERT_EQ(sets.size(), 6u);
  EXPECT_EQ(sets.at(5).at("label"), "stdin");
  for (std::size_t i = 2; i < sets.size(); ++i) {
    EXPECT_EQ(sets.at(i).at("mean"), sets.at(1).at("mean")) << i;
    EXPECT_EQ(sets.at(i).at("ks_p"), sets.at(1).at("ks_p")) << i;
    EXPECT_EQ(sets.at(i).at("n"), 8);
  }
}

TEST_F(cliCompare, CsvAndMarkdownOutputs) {
  write("a.txt", base_);
  write("b.txt", better_);
  auto csv = run("--format csv a.txt b.txt");
  EXPECT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("metric,unit,direction,label,", 0), 0u);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 3);
  auto md = run("--format markdown a.txt b.txt");
  EXPECT_EQ(md.status, 0) << md.err;
  EXPECT_EQ(md.out.rfind("### value, Lower is better\n", 0), 0u) << md.out;
}

TEST_F(cliCompare, OutputIsByteDeterministic) {
  write("a.txt", base_);
  write("b.txt", better_);
  for (const char* f : {"text", "json", "csv"}) {
    auto r1 = run(std::string("--format ") + f + " a.txt b.txt");
    auto r2 = run(std::string("--format ") + f + " a.txt b.txt");
    EXPECT_EQ(r1.out, r2.out) << f;
    EXPECT_FALSE(r1.out.empty());
  }
}

TEST_F(cliCompare, NotANumberNamesFileAndLine) {
  write("a.txt", base_);
  write("b.txt", "# header\n96\n\nabc\n97\n");
  expect_usage_error(run("a.txt b.txt"), "b.txt:4: not a number: 'abc'");
}

TEST_F(cliCompare, TrailingGarbageIsNotANumber) {
  write("a.txt", base_);
  write("b.txt", "96\n12ms\n");
  expect_usage_error(run("a.txt b.txt"), "b.txt:2: not a number: '12ms'");
}

TEST_F(cliCompare, NanAndInfinityAreRejected) {
  write("a.txt", base_);
  write("b.txt", "96\nnan\n");
  write("c.txt", "96\n-inf\n");
  expect_usage_error(run("a.txt b.txt"), "b.txt:2: not a finite number: 'nan'");
  expect_usage_error(run("a.txt c.txt"), "c.txt:2: not a finite number: '-inf'");
}

TEST_F(cliCompare, EmptySampleIsRejected) {
  write("a.txt", base_);
  write("empty.txt", "# nothing measured\n\n");
  expect_usage_error(run("a.txt empty.txt"), "empty.txt: no values (empty sample)");
  write("empty.json", "[]");
  expect_usage_error(run("a.txt empty.json"), "empty.json: no values (empty sample)");
}

TEST_F(cliCompare, MissingColumnIsRejected) {
  write("a.csv", "run,lat_us\n1,3\n");
  write("b.csv", "run,latency\n1,4\n");
  expect_usage_error(run("--column lat_us a.csv b.csv"), "b.csv: no column 'lat_us' in the CSV header");
  write("c.json", R"({"latency": [1, 2]})");
  expect_usage_error(run("--column lat_us a.csv c.json"), "c.json: no field 'lat_us'");
  write("d.json", R"([{"lat_us": 1}, {"latency": 2}])");
  expect_usage_error(run("--column lat_us a.csv d.json"), "d.json: element 1: no field 'lat_us'");
}

TEST_F(cliCompare, CsvSingleColumnBomCommentsAndQuotes) {
  write("a.csv", "\xEF\xBB\xBF# exported from a spreadsheet\nlatency\n3\n\n4\n");
  write("b.txt", "5\n6\n");
  auto r = run("--format csv a.csv b.txt");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);
  EXPECT_NE(r.out.find(",a.csv,true,2,3.5,"), std::string::npos) << r.out;
  // Quoted header and cells (commas and doubled quotes inside quotes).
  write("c.csv", "\"run, id\",\"lat \"\"us\"\"\"\n\"x,1\",\" 5 \"\n\"x,2\",6\n");
  write("d.csv", "\"lat \"\"us\"\"\"\n7\n8\n");
  r = run("--column 'lat \"us\"' --format csv c.csv d.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(",c.csv,true,2,5.5,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(",d.csv,false,2,7.5,"), std::string::npos) << r.out;
  write("empty.csv", "lat\n");
  expect_usage_error(run("a.csv empty.csv"), "empty.csv: no values (empty sample)");
}

TEST_F(cliCompare, CsvWithSeveralColumnsNeedsColumn) {
  write("a.csv", "run,lat_us\n1,3\n");
  write("b.csv", "run,lat_us\n1,4\n");
  expect_usage_error(run("a.csv b.csv"), "a.csv: CSV has 2 columns, choose one with --column");
}

TEST_F(cliCompare, BadCsvCellNamesFileAndLine) {
  write("a.csv", "lat_us\n3\n4\n");
  write("b.csv", "run,lat_us\n1,4\n2,n/a\n");
  expect_usage_error(run("--column lat_us a.csv b.csv"), "b.csv:3: not a number: 'n/a'");
}

TEST_F(cliCompare, BadJsonIsRejected) {
  write("a.txt", base_);
  write("b.json", "[1, 2,");
  auto r = run("a.txt b.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("schedlab: error: b.json: invalid JSON: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  write("c.json", R"([1, "two", 3])");
  expect_usage_error(run("a.txt c.json"), "c.json: element 1: not a number: \"two\"");
}

TEST_F(cliCompare, UnknownFormatIsRejected) {
  write("a.txt", base_);
  write("b.txt", better_);
  expect_usage_error(run("--format xml a.txt b.txt"),
                     "--format: unknown format 'xml' (text, markdown, json, csv, mmtests, perf-sched-stats)");
}

TEST_F(cliCompare, LabelCountMismatchIsRejected) {
  write("a.txt", base_);
  write("b.txt", better_);
  expect_usage_error(run("--labels A,B,C a.txt b.txt"), "--labels has 3 labels for 2 files");
}

TEST_F(cliCompare, MissingFileAndSingleFileAreRejected) {
  write("a.txt", base_);
  expect_usage_error(run("a.txt nope.txt"), "nope.txt: cannot open file: No such file or directory");
  expect_usage_error(run("a.txt"), "compare needs at least two sample files (FILE_A FILE_B ...)");
}

// Found by the compare fuzzers: magnitudes that overflow the statistics (1e308 - -1e308 is inf
// in the bootstrap) and a JSON number beyond double (nlohmann's out_of_range, not parse_error)
// ended in internal errors.
TEST_F(cliCompare, HugeValuesAreRejectedByName) {
  write("a.txt", base_);
  write("big.txt", "1e308\n-1e308\n");
  expect_usage_error(run("a.txt big.txt"), "big.txt:1: 1e+308 is too large for the statistics (at most 1e100 in magnitude)");
  write("big.json", "[1e400]");
  auto r = run("a.txt big.json");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("big.json: invalid JSON: "), std::string::npos) << r.err;
  write("ok.txt", "1e100\n-1e100\n");
  EXPECT_EQ(run("a.txt ok.txt").status, 0);
}

// A directory opens as a stream but fails on the first read ("basic_filebuf::underflow ... Is a
// directory", an internal error before): it is named as what it is.
TEST_F(cliCompare, DirectoryIsRejected) {
  write("a.txt", base_);
  fs::create_directories(dir_ / "samples");
  expect_usage_error(run("samples a.txt"), "samples: is a directory, not a sample file");
  expect_usage_error(run("a.txt samples"), "samples: is a directory, not a sample file");
}

TEST_F(cliCompare, SampleStdAndQuantileMethodOptions) {
  write("a.txt", "2\n4\n4\n4\n5\n5\n7\n9\n");
  write("b.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
  auto pop = run("--format json a.txt b.txt");
  ASSERT_EQ(pop.status, 0) << pop.err;
  auto d = nlohmann::json::parse(pop.out);
  EXPECT_EQ(d["metrics"][0]["sets"][0]["std"], 2.0);
  EXPECT_EQ(d["metrics"][0]["sets"][1]["q90"], 9.1);  // h = 8.1 between 9 and 10
  auto smp = run("--sample-std --quantile-method inverted_cdf --format json a.txt b.txt");
  ASSERT_EQ(smp.status, 0) << smp.err;
  d = nlohmann::json::parse(smp.out);
  EXPECT_DOUBLE_EQ(d["metrics"][0]["sets"][0]["std"].get<double>(), std::sqrt(32.0 / 7.0));
  EXPECT_EQ(d["metrics"][0]["sets"][1]["q90"], 9.0);  // 9th of 10 values
  EXPECT_EQ(d["options"]["std"], "sample");
  EXPECT_EQ(d["options"]["quantile_method"], "inverted_cdf");
  expect_usage_error(run("--quantile-method type7 a.txt b.txt"),
                     "unknown quantile method 'type7' (use linear, lower, higher, nearest, "
                     "midpoint or inverted_cdf)");
}
