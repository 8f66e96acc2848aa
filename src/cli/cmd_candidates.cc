// tessera candidates MODEL --backends LIST [--backend-spec FILE]... [--json] [--explain] [-j N]:
// per backend, how many candidate partitions its rule proposes, their size histogram, and with
// --explain the rule, the rejections counted by reason and any limit the closure hit. A limit is
// always printed (on stderr as a warning in text mode): a bounded closure is never silent.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "support/plural.h"
#include "cli/model_options.h"
#include "tessera/backend_spec.h"
#include "backends/spec/candidate_space.h"

namespace tessera::cli {
namespace {

struct CandidatesOptions {
  ModelOptions model;
  std::string backends;
  std::vector<std::string> spec_files;
  bool json = false;
  bool explain = false;
  int threads = 1;
};

nlohmann::json space_json(const Graph& g, const CandidateSpace& space, bool explain) {
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& b : space.per_backend) {
    std::map<int, int64_t> sizes;
    for (const auto& c : b.candidates) ++sizes[c.inside().count()];
    nlohmann::json histogram = nlohmann::json::object();
    for (const auto& [size, n] : sizes) histogram[std::to_string(size)] = n;
    nlohmann::json entry{{"backend", b.backend}, {"candidates", b.candidates.size()}, {"sizes", histogram},
                         {"limits", b.stats.limits}};
    if (explain) {
      entry["rule"] = b.rule;
      entry["rejections"] = b.stats.rejections;
      entry["seeds"] = b.stats.seeds;
      entry["unions_tried"] = b.stats.unions_tried;
    }
    backends.push_back(entry);
  }
  return {{"model", g.source}, {"nodes", g.num_nodes()}, {"candidates", space.size()}, {"backends", backends}};
}

void print_text(const nlohmann::json& j, bool explain, double ms) {
  std::printf("model: %s (%s)\n", j["model"].get<std::string>().c_str(), count_of(j["nodes"].get<size_t>(), "node").c_str());
  for (const auto& b : j["backends"]) {
    std::printf("%-10s %8lld candidates   sizes:", b["backend"].get<std::string>().c_str(),
                static_cast<long long>(b["candidates"].get<int64_t>()));
    for (const auto& [size, n] : b["sizes"].items()) std::printf(" %s:%lld", size.c_str(), static_cast<long long>(n.get<int64_t>()));
    std::printf("\n");
    if (explain) {
      std::printf("  rule: %s\n", b["rule"].get<std::string>().c_str());
      std::printf("  seeds: %lld, unions tried: %lld\n", static_cast<long long>(b["seeds"].get<int64_t>()),
                  static_cast<long long>(b["unions_tried"].get<int64_t>()));
      if (b["rejections"].empty()) std::printf("  rejected: none\n");
      for (const auto& [reason, n] : b["rejections"].items())
        std::printf("  rejected %8lld  %s\n", static_cast<long long>(n.get<int64_t>()), reason.c_str());
    }
    for (const auto& limit : b["limits"]) std::fprintf(stderr, "warning: %s\n", limit.get<std::string>().c_str());
  }
  std::printf("total: %lld candidates in %.1f ms\n", static_cast<long long>(j["candidates"].get<int64_t>()), ms);
}

}  // namespace

void add_candidates_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("candidates", "enumerate every backend's candidate partitions of a model");
  auto opt = std::make_shared<CandidatesOptions>();
  opt->model.add_to(*cmd);
  cmd->add_option("--backends", opt->backends, "comma-separated backend names (built-in or from --backend-spec)")
      ->required();
  cmd->add_option("--backend-spec", opt->spec_files, "a tessera.backend JSON file; repeatable");
  cmd->add_flag("--json", opt->json, "print one JSON object");
  cmd->add_flag("--explain", opt->explain, "also print each backend's rule and rejections by reason");
  cmd->add_option("-j", opt->threads, "backends enumerated in parallel (result is the same for any N)")
      ->check(CLI::Range(1, 1024));
  cmd->callback([opt] {
    auto backends = resolve_backends(split_backend_list(opt->backends), opt->spec_files);
    Graph g = opt->model.load();
    auto start = std::chrono::steady_clock::now();
    DataflowIndex index(g);
    CandidateSpace space = enumerate_candidates(index, backends, opt->threads);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json j = space_json(g, space, opt->explain);
    if (opt->json) {
      std::cout << j.dump(2) << "\n";
      for (const auto& b : j["backends"])
        for (const auto& limit : b["limits"]) std::fprintf(stderr, "warning: %s\n", limit.get<std::string>().c_str());
    } else {
      print_text(j, opt->explain, ms);
    }
  });
}

}  // namespace tessera::cli
