#include "scenarios/cli/analysis_commands.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>

#include "analysis/analysis_command.hpp"
#include "analysis/fidelity.hpp"
#include "analysis/import_command.hpp"

namespace sluice::cli {

using namespace sluice::analysis;

void add_analysis_commands(CLI::App& app, CommandExit& exit) {
  auto compare = std::make_shared<CompareArgs>();
  CLI::App* c = app.add_subcommand("compare", "predicted (sim) vs measured (hw/emulate) runs, per metric and point");
  c->add_option("files", compare->files,
                "results files (results.json; also the single-file emulate output of earlier versions)")
      ->required();
  c->add_option("--metric", compare->metrics, "metric to compare (default: throughput, ops, time, latencies)");
  c->add_option("--ignore-param", compare->ignored_params, "param left out when aligning runs");
  c->add_option("--measured", compare->measured_backend, "reference backend (default cluster, else hw, else emulate)");
  c->add_option("--json", compare->json_out, "also write the comparison as JSON here");
  on_parsed(c, exit, [compare] { return run_compare(*compare, std::cout, std::cerr); });

  auto rep = std::make_shared<ReportArgs>();
  CLI::App* r = app.add_subcommand("report", "Markdown report with gnuplot plots of results");
  r->add_option("files", rep->files, "results files")->required();
  r->add_option("--out", rep->out_dir, "output directory")->required();
  r->add_option("--x", rep->x_param, "param on the x axis (default: the first that varies)");
  r->add_option("--phase", rep->phase, "phase plotted")->capture_default_str();
  r->add_option("--title", rep->title, "report title")->capture_default_str();
  on_parsed(r, exit, [rep] { return run_report(*rep, std::cout, std::cerr); });

  // sluice fidelity (fidelity.hpp): the seed studies' claims against their published figures.
  auto fid = std::make_shared<FidelityArgs>();
  CLI::App* f = app.add_subcommand("fidelity", "the seed studies' figures, published vs simulated; RESULT F3");
  f->add_option("files", fid->files, "the studies' results.json files")->required();
  f->add_option("--markdown", fid->markdown, "also write the report as Markdown here (with the studies' plots)");
  on_parsed(f, exit, [fid] { return run_fidelity(*fid, std::cout, std::cerr); });

  // sluice import (import_command.hpp): other tools' measurements as a results.json.
  auto imp = std::make_shared<ImportArgs>();
  CLI::App* i = app.add_subcommand("import", "fio/elbencho/IOR/mdtest/gdsio measurements as DIR/results.json");
  i->add_option("files", imp->files, "the tools' output files")->required();
  i->add_option("--out", imp->out_dir, "output directory (results.json)")->required();
  i->add_option("--tool", imp->tool, "fio|elbencho|ior|mdtest|gdsio (default: detected from the content)");
  i->add_option("--scenario", imp->scenario, "the runs' scenario (default: the tool's name)");
  i->add_option("--label", imp->label, "the runs' label (default: the tool's job name)");
  on_parsed(i, exit, [imp] { return run_import(*imp, std::cout, std::cerr); });
}

}  // namespace sluice::cli
