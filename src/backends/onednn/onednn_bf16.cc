// Is bf16 native here? The availability test of the `onednn_bf16` precision variant
// (onednn_compiler.h).
//
// oneDNN runs bf16 convolutions and matmuls on any AVX-512 CPU, but without AVX512_BF16 (Cooper
// Lake, Zen 4 and later) or AMX-BF16 (Sapphire Rapids and later) it emulates the conversions and
// dot products and is slower than f32: a bf16 candidate would only ever lose, and its measured
// cost would say so at length. So the backend is refused outright, with the reason, when
//   - cpuid lacks both AVX512_BF16 (leaf 7 subleaf 1, EAX bit 5) and AMX-BF16 (leaf 7, EDX bit 22), or
//   - oneDNN's dispatcher is capped below avx512_core_bf16 (DNNL_MAX_CPU_ISA, dnnl_set_max_cpu_isa),
//     which is also how a test can see the refusal on a CPU that has bf16.
#include <cpuid.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/onednn/onednn_compiler.h"

namespace tessera {
namespace {

bool cpuid_bf16(std::string& which) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5))) {
    which = "avx512_bf16";
    return true;
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 22))) {
    which = "amx_bf16";
    return true;
  }
  return false;
}

// oneDNN's ISA values are nested bit masks: an ISA includes another when it has all its bits.
bool isa_includes(dnnl::cpu_isa have, dnnl::cpu_isa want) {
  const auto h = static_cast<unsigned>(have), w = static_cast<unsigned>(want);
  return (h & w) == w;
}

}  // namespace

bool cpu_has_native_bf16(std::string* why) {
  std::string which;
  if (!cpuid_bf16(which)) {
    if (why) *why = "this CPU has neither avx512_bf16 nor amx_bf16 (cpuid); oneDNN would emulate bf16, slower than f32";
    return false;
  }
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  if (isa != dnnl::cpu_isa::all && !isa_includes(isa, dnnl::cpu_isa::avx512_core_bf16)) {
    if (why) *why = "the CPU has " + which + " but oneDNN is capped below avx512_core_bf16 (DNNL_MAX_CPU_ISA)";
    return false;
  }
  return true;
}

}  // namespace tessera
