// Broadcasting helpers (see broadcast.h).
#include "backends/compilers/broadcast.h"

namespace tessera {

bool broadcasts_to(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) return false;
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1 && in[i] != out[off + i]) return false;
  return true;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const size_t off = out.size() - in.size();
  int64_t s = 1;
  for (size_t i = in.size(); i-- > 0;) {
    strides[off + i] = in[i] == 1 ? 0 : s;
    s *= in[i];
  }
  return strides;
}

void broadcast_fill(const float* in, const std::vector<int64_t>& strides, const Shape& out, float* dst,
                    float scale, bool accumulate) {
  const size_t rank = out.size();
  if (rank == 0) {
    dst[0] = accumulate ? dst[0] + scale * in[0] : scale * in[0];
    return;
  }
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  if (total == 0) return;
  const int64_t inner = out[rank - 1], inner_stride = strides[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t src = 0;
  for (int64_t base = 0; base < total; base += inner) {
    float* d = dst + base;
    for (int64_t j = 0; j < inner; ++j) {
      const float v = scale * in[src + j * inner_stride];
      d[j] = accumulate ? d[j] + v : v;
    }
    for (size_t k = rank - 1; k-- > 0;) {  // advance the outer counter
      src += strides[k];
      if (++idx[k] < out[k]) break;
      src -= strides[k] * out[k];
      idx[k] = 0;
    }
  }
}

}  // namespace tessera
