// tessera cache merge A B -o C: one cost database from two (B wins on equal keys), compacted.
// tessera cache stats DB: records, corrupt lines, distinct entries, by cost model and backend.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "tessera/cost_database.h"
#include "tessera/error.h"

namespace tessera::cli {

void add_cache_command(CLI::App& app) {
  auto* cache = app.add_subcommand("cache", "inspect and merge cost databases");
  cache->require_subcommand(1);

  auto* merge = cache->add_subcommand("merge", "merge two cost databases into a third");
  auto a = std::make_shared<std::string>(), b = std::make_shared<std::string>(), c = std::make_shared<std::string>();
  merge->add_option("A", *a, "first database")->required();
  merge->add_option("B", *b, "second database (wins on equal keys)")->required();
  merge->add_option("-o,--output", *c, "merged database")->required();
  merge->callback([=] {
    for (const std::string* in : {a.get(), b.get()}) {
      if (!std::filesystem::is_regular_file(*in)) throw UserError(*in, "", "no such cost database");
    }
    size_t n = merge_cost_databases(*a, *b, *c);
    std::printf("merged %zu entries\n", n);
    note_written(*c);
  });

  auto* stats = cache->add_subcommand("stats", "summarise a cost database");
  auto db = std::make_shared<std::string>();
  stats->add_option("DB", *db, "database")->required();
  stats->callback([=] {
    if (!std::filesystem::is_regular_file(*db)) throw UserError(*db, "", "no such cost database");
    auto d = CostDatabase::open(*db);
    CostDatabaseStats s = d->stats();
    std::printf("%s: %zu records, %zu corrupt lines skipped, %zu entries\n", db->c_str(), s.records, s.corrupt,
                s.entries);
    std::map<std::pair<std::string, std::string>, std::map<std::string, size_t>> by;   // (model, backend) -> state
    for (const auto& [key, entry] : d->entries()) {
      ++by[{key.model, key.backend}][std::string(cost_state_name(entry.cost.state()))];
    }
    for (const auto& [mb, states] : by) {
      std::printf("  %-28s %-16s", mb.first.c_str(), mb.second.c_str());
      for (const auto& [state, n] : states) std::printf(" %s=%zu", state.c_str(), n);
      std::printf("\n");
    }
  });
}

}  // namespace tessera::cli
