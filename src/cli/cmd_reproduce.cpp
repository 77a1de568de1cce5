// schedlab reproduce [--list] [CASE...] [--runs N] [--jobs J] [--max-runs N] [--convergence] [--cold] [--format text|markdown|json]
//                    [--catalogue DIR] [--html FILE]
// Runs the published-results catalogue (published/*.toml) on the model and says, per case,
// whether the model lands in the band the case set before it was run.
#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/reports.hpp"
#include "experiment/reproduce.hpp"
#include "io/output.hpp"

namespace schedlab::cli {

namespace {
struct ReproduceArgs {
  bool list = false;
  std::vector<std::string> cases;
  int runs = 0;
  int jobs = 0;
  bool convergence = false;
  bool cold = false;
  int max_runs = 24;
  std::string format = "text";
  std::string dir;
  std::optional<std::string> html;
};
}  // namespace

void register_reproduce(CLI::App& app) {
  auto a = std::make_shared<ReproduceArgs>();
  auto* cmd = app.add_subcommand(
      "reproduce", "Run the published-results catalogue: published vs model per case, in band or not");
  cmd->add_flag("--list", a->list, "list the cases with their source and whether they can run now");
  cmd->add_option("case", a->cases, "case names (file stems in the catalogue); default: all");
  cmd->add_option("--runs", a->runs, "runs per side for every case (default: each case's own)")
      ->type_name("N")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--jobs", a->jobs, "parallel simulations (0: one per CPU of this machine)")
      ->type_name("J")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--convergence", a->convergence,
                "also run each case at twice its length and mark it not converged when the gain moves by "
                "more than the band's tolerance (doubles the run time)");
  cmd->add_option("--max-runs", a->max_runs,
                  "cap on runs per side: from --runs (or the case's own) the runs double while the gain's 95 % "
                  "bootstrap interval is wider than the band (--max-runs equal to --runs: no growth)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  cmd->add_flag("--cold", a->cold,
                "start every machine as just booted instead of as one that has been up and idle (see `run --cold`)");
  cmd->add_option("--format", a->format, "text, markdown or json")->capture_default_str();
  cmd->add_option("--catalogue", a->dir, "catalogue directory (default: the source tree's published/, or "
                                         "$SCHEDLAB_PUBLISHED)");
  add_optional(cmd, "--html", a->html,
               "write a self-contained HTML report (published vs model gain against each band)");
  cmd->callback(deferred([a] {
    if (a->html && a->list) throw UsageError("--html: a report of runs, not of --list");
    if (a->html) io::check_output_paths({{"--html", *a->html, false}});
    auto fmt_opt = report::parse_format(a->format);
    if (!fmt_opt || *fmt_opt == report::Format::Csv)
      throw UsageError(fmt::format("--format: unknown format '{}' (text, markdown or json)", a->format));
    experiment::Catalogue cat;
    try {
      cat = experiment::load_catalogue(a->dir.empty() ? experiment::default_catalogue_dir() : a->dir);
    } catch (const experiment::CatalogueError& e) {
      throw UsageError(e.what());
    }
    std::vector<const experiment::Case*> chosen;
    for (const auto& name : a->cases) {
      const experiment::Case* c = cat.find(name);
      if (!c) throw UsageError(fmt::format("unknown case '{}' (see `schedlab reproduce --list`)", name));
      chosen.push_back(c);
    }
    if (a->cases.empty())
      for (const auto& c : cat.cases) chosen.push_back(&c);
    if (a->list) {
      fmt::print("{}", experiment::render_case_list(cat, chosen, *fmt_opt));
      return;
    }
    experiment::ReproduceOptions opt;
    opt.runs = a->runs;
    opt.convergence = a->convergence;
    opt.cold = a->cold;
    opt.max_runs = a->max_runs;
    opt.jobs = a->jobs > 0 ? a->jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const bool tty = isatty(2);
    std::vector<experiment::CaseOutcome> outcomes;
    for (size_t i = 0; i < chosen.size(); ++i) {
      const auto& c = *chosen[i];
      auto progress = [&](int done, int total) {
        if (tty) {
          io::set_progress_line_open(true);  // a signal or an error ends the line first
          fmt::print(stderr, "\rreproduce: [{}/{}] {}: {}/{} runs", i + 1, chosen.size(), c.name, done, total);
        } else if (done == total) {
          fmt::print(stderr, "reproduce: [{}/{}] {}: {} runs done\n", i + 1, chosen.size(), c.name, total);
        }
        if (tty && done == total) {
          fmt::print(stderr, "\n");
          io::set_progress_line_open(false);
        }
      };
      if (!c.runnable())
        fmt::print(stderr, "reproduce: [{}/{}] {}: not runnable yet\n", i + 1, chosen.size(), c.name);
      try {
        outcomes.push_back(experiment::reproduce_case(c, opt, progress));
      } catch (const experiment::CatalogueError& e) {
        throw UsageError(e.what());
      }
    }
    // Results only once every case has run, so an error leaves no partial output.
    std::string html;
    if (a->html)
      html = experiment::reproduce_html(outcomes, experiment::render_reproduce(cat, outcomes, report::Format::Text));
    fmt::print("{}", experiment::render_reproduce(cat, outcomes, *fmt_opt));
    io::flush_stdout();
    if (a->html) io::write_file_atomic("--html", *a->html, html);
  }));
}

}  // namespace schedlab::cli
