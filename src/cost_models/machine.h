// The identity of the machine tessera runs on: what measured costs and fitted roofline profiles
// are keyed by, so numbers taken on one machine are never mistaken for another's.
//
//   cpu_model_name()       "AMD EPYC"                    (/proc/cpuinfo "model name")
//   cpu_isa_flags()        "aes avx avx2 avx512f ..."    (only flags that choose code paths)
//   machine_fingerprint()  "AMD EPYC/isa-3f9c01d2"       (model + hash of the ISA flags)
//
// The thread count is not part of the machine: callers append "/t<threads>" where it matters
// (measured costs, host profiles). AVX-512 masked in one VM and not in another is another machine.
#pragma once

#include <string>

namespace tessera {

// The first "model name" of /proc/cpuinfo, or "unknown-cpu".
std::string cpu_model_name();
// The ISA flags of /proc/cpuinfo that choose code paths ("flags" on x86, "Features" on ARM),
// sorted, space-separated; "" when unknown.
std::string cpu_isa_flags();
// "<cpu_model_name()>/isa-<8 hex digits of a hash of cpu_isa_flags()>". Test hook:
// $TESSERA_MACHINE_FINGERPRINT, when set and not empty, replaces it (to simulate other hardware,
// tests/distributed/); never set it for real tuning.
std::string machine_fingerprint();

}  // namespace tessera
