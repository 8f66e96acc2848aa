#include "tessera/error.h"

#include <cstdio>
#include <cstdlib>

namespace tessera {

void internal_error(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "tessera: internal error at %s:%d: %s\n", file, line, what.c_str());
  std::abort();
}

}  // namespace tessera
