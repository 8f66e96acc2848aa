// The CLI's subcommands. Each lives in its own cmd_<name>.cc and adds itself to the app with one
// add_<name>_command function; main.cc calls them in a fixed order and is the only place that
// catches UserError (exit 2, one line on stderr).
#pragma once

#include <CLI/CLI.hpp>

namespace tessera::cli {

void add_info_command(CLI::App& app);
void add_candidates_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_partition_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_show_command(CLI::App& app);
void add_refit_command(CLI::App& app);

}  // namespace tessera::cli
