// End-to-end: `schedlab run|ab -- rt-app FILE.json` on schedlab's own use cases (one per group of
// events, tests/workload/rtapp/), rt-app's log files, and bad input (exit 2, nothing written).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../common/process.hpp"

using namespace schedlab::fixture;
namespace fs = std::filesystem;

namespace {

std::string use_case(const std::string& name) {
  return std::string(SCHEDLAB_SOURCE_DIR) + "/tests/workload/rtapp/" + name;
}

// A fresh, empty directory for one test.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& name) {
    path = (fs::temp_directory_path() / ("schedlab_rtapp_" + std::to_string(::getpid()) + "_" + name)).string();
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
};

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(CliRtapp, UseCasesRunAndWriteRtAppsLogsInTheWorkingDirectory) {
  struct Case {
    const char* file;
    std::vector<std::string> logs;
  };
  const std::vector<Case> cases = {
      {"periodic.json",
       {"periodic-audio-0.log", "periodic-background-7.log", "periodic-render-1.log", "periodic-render-2.log",
        "periodic-render-3.log", "periodic-render-4.log", "periodic-ticker-5.log", "periodic-ticker-6.log"}},
      {"sync.json",
       {"sync-consumer-1.log", "sync-consumer-2.log", "sync-flusher-3.log", "sync-flusher-4.log", "sync-flusher-5.log",
        "sync-master-11.log", "sync-ping-6.log", "sync-pong-7.log", "sync-producer-0.log", "sync-stage-10.log",
        "sync-stage-8.log", "sync-stage-9.log", "sync-worker-12.log"}},
      {"misc.json",
       {"misc-child-4-0000.log", "misc-child-5-0001.log", "misc-child-6-0002.log", "misc-copier-3.log",
        "misc-polite-0.log", "misc-polite-1.log", "misc-spawner-2.log"}},
  };
  for (const auto& c : cases) {
    TempDir d(c.file);
    auto r = run_schedlab("run --machine tiny-4 --check -- rt-app " + use_case(c.file), d.path);
    ASSERT_EQ(r.status, 0) << c.file << "\n" << r.err;
    EXPECT_NE(r.out.find("[rt-app] <notice> [0] starting thread ..."), std::string::npos) << c.file;
    const std::string stem = std::string(c.file).substr(0, std::string(c.file).find('.'));
    EXPECT_NE(r.out.find("# schedlab: logs: ./" + stem + "-*.log ("), std::string::npos) << r.out;
    EXPECT_EQ(d.files(), c.logs) << c.file;
    for (const auto& f : c.logs) {
      std::string log = slurp(d.path + "/" + f);
      EXPECT_EQ(log.rfind("#idx     perf      run   period", 0), 0u) << f;
      EXPECT_GE(count_lines(log), 2) << f << " has no rows";
    }
  }
}

TEST(CliRtapp, SameSeedSameLogsAndOutput) {
  TempDir a("seed_a"), b("seed_b");
  auto ra = run_schedlab("run --machine spr-2s --seed 3 -- rt-app " + use_case("sync.json"), a.path);
  auto rb = run_schedlab("run --machine spr-2s --seed 3 -- rt-app " + use_case("sync.json"), b.path);
  ASSERT_EQ(ra.status, 0) << ra.err;
  EXPECT_EQ(ra.out, rb.out);
  ASSERT_EQ(a.files(), b.files());
  for (const auto& f : a.files()) EXPECT_EQ(slurp(a.path + "/" + f), slurp(b.path + "/" + f)) << f;
}

TEST(CliRtapp, BadUseCasesExitTwoWithFileLineAndWriteNothing) {
  TempDir d("bad");
  struct Case {
    std::string name, text, want;
  };
  const std::vector<Case> cases = {
      {"syntax.json", "{\n \"tasks\": {\n  \"t\": { \"run\": 10 \"sleep\": 5 }\n }\n}\n", "syntax.json:3:"},
      {"type.json", "{\n \"tasks\": {\n  \"t\": { \"loop\": 2,\n \"sleep\": true } } }\n", "type.json:4: tasks.t.sleep:"},
      {"event.json", "{\n \"tasks\": {\n  \"t\": { \"loop\": 2,\n \"spin\": 5 } } }\n", "event.json:4: tasks.t.spin: unknown event"},
      {"lock.json", "{\n \"tasks\": {\n  \"t\": { \"loop\": 1,\n \"lock\": \"m\",\n \"run\": 1 } } }\n",
       "lock.json:4: tasks.t: lock 'm' is never unlocked"},
      {"barrier.json",
       "{\n \"tasks\": {\n  \"a\": { \"loop\": 4, \"barrier\": \"b\", \"run\": 1 },\n  \"b\": { \"loop\": 1,\n \"barrier\": \"b\" } } }\n",
       "barrier.json:5: tasks.b.barrier: barrier 'b' is reached 1 times"},
      {"deadlock.json",
       "{\n \"tasks\": {\n  \"a\": { \"loop\": 1,\n \"suspend\": \"x\", \"run\": 1 } } }\n",
       "deadlock.json:4: deadlock at"},
      {"dl.json", "{\n \"tasks\": {\n  \"a\": { \"loop\": 1, \"run\": 1,\n \"policy\": \"SCHED_DEADLINE\" } } }\n",
       "dl.json:4: tasks.a.policy: SCHED_DEADLINE is not modeled"},
  };
  for (const auto& c : cases) {
    std::string f = d.write(c.name, c.text);
    auto r = run_schedlab("run --json out.json -- rt-app " + f, d.path);
    EXPECT_EQ(r.status, 2) << c.name << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("schedlab: error: " + d.path + "/" + c.want, 0), 0u) << c.name << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    fs::remove(f);
    EXPECT_TRUE(d.files().empty()) << c.name << " left files behind";
  }
  auto r = run_schedlab("run -- rt-app missing.json", d.path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot read 'missing.json'"), std::string::npos) << r.err;
  std::string f = d.write("logdir.json", "{ \"global\": { \"logdir\": \"nowhere\" },\n \"tasks\": { \"t\": { \"loop\": 1, \"run\": 1 } } }");
  r = run_schedlab("run -- rt-app logdir.json", d.path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("log directory 'nowhere' does not exist"), std::string::npos) << r.err;
}

TEST(CliRtapp, LogsAndJsonAreWrittenTogether) {
  TempDir d("json");
  d.write("uc.json", R"({ "global": { "calibration": 100, "logdir": "logs" },
      "tasks": { "t": { "loop": 3, "run": 100, "timer": { "ref": "unique", "period": 1000 } } } })");
  fs::create_directories(d.path + "/logs");
  auto r = run_schedlab("run --machine tiny-4 --json out.json -- rt-app uc.json", d.path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_lines(slurp(d.path + "/logs/rt-app-t-0.log")), 4);
  std::string json = slurp(d.path + "/out.json");
  EXPECT_NE(json.find("\"t.wu_lat_p99\""), std::string::npos) << json.substr(0, 400);
  EXPECT_EQ(d.files(), (std::vector<std::string>{"logs", "out.json", "uc.json"}));  // no temp files left
}

TEST(CliRtapp, AbComparesPerTaskMetricsPrintsWarningsOnceAndWritesNoLogs) {
  TempDir d("ab");
  d.write("uc.json", R"({ "global": { "duration": 1, "calibration": 100, "gnuplot": true },
      "tasks": { "p": { "instance": 6, "run": 3000, "timer": { "ref": "unique", "period": 8000 } },
                 "q": { "run": 500, "sleep": 700 } } })");
  auto r = run_schedlab("ab --machine epyc-milan-2s --base '' --test SM_IDLE --runs 3 --jobs 2 -- rt-app uc.json",
                        d.path);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* m : {"wu_lat_p99 (us)", "p.wu_lat_p50 (us)", "p.slack_p1 (us)", "p.missed (count)",
                        "q.period_p50 (us)"})
    EXPECT_NE(r.out.find(m), std::string::npos) << m << "\n" << r.out;
  size_t first = r.err.find("global.gnuplot");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("global.gnuplot", first + 1), std::string::npos) << "warning printed more than once\n" << r.err;
  EXPECT_EQ(d.files(), (std::vector<std::string>{"uc.json"}));
}
