// The CLI's "wrote" lines. See cli_output.h.
#include "cli_output.h"

#include <cstdio>

#include "tessera/text.h"

namespace tessera::cli {

void note_written(const std::string& path) { std::fprintf(stderr, "wrote %s\n", printable(path).c_str()); }

}  // namespace tessera::cli
