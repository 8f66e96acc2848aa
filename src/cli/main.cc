// tessera: search-based partition optimizer. See README.md and docs/cli.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <exception>
#include <new>

#include "cli/commands.h"
#include "tessera/error.h"
#include "support/text.h"

int main(int argc, char** argv) {
  CLI::App app{"tessera: search-based partition optimizer for neural networks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera 0.1.0");
  tessera::cli::add_info_command(app);
  tessera::cli::add_candidates_command(app);
  tessera::cli::add_calibrate_command(app);
  tessera::cli::add_cache_command(app);
  tessera::cli::add_partition_command(app);
  tessera::cli::add_tune_command(app);
  tessera::cli::add_run_command(app);
  tessera::cli::add_bench_command(app);
  tessera::cli::add_show_command(app);
  tessera::cli::add_refit_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; real usage errors are one line, exit 2.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::fprintf(stderr, "tessera: %s (see --help)\n", tessera::printable(what).c_str());
    return 2;
  } catch (const tessera::UserError& e) {
    // The one place a user error leaves the CLI: names from models are escaped here (text.h).
    std::fprintf(stderr, "tessera: %s\n", tessera::printable(e.what()).c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    // Whatever grows has a limit (the search's --search-memory, the import's folding bound); what
    // is left is a model or a request larger than this machine: a user's problem, not a bug.
    std::fprintf(stderr, "tessera: out of memory: the model or request needs more memory than this machine has "
                         "(try fewer backends, a smaller --search-memory or --input-shape)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: internal error: %s\n", tessera::printable(e.what()).c_str());
    return 1;
  }
  return 0;
}
