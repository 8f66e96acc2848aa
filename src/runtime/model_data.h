// Model data for running: weights where the model has none, and seeded random inputs.
//
// A model imported without its weights file (a clean clone: data/models/*.weights are untracked)
// has shape-only constants. Running it needs numbers, and every consumer of the run (the
// partitioned executor, the ref oracle of --check, a rerun tomorrow) must see the *same* numbers,
// so they are fixed once, on the Graph, before anything is outlined or compiled:
//
//   load_model ─▶ Graph (w: f32[64,3,7,7], no data) ─▶ with_seeded_weights ─▶ w has data
//              ─▶ outline / compile / ref interpret all read the same bytes
//
// Weights are HostTensor::random (uniform [-1, 1), splitmix64, seeded by `seed` and the value's
// name, so a value keeps its numbers when unrelated constants are added) scaled by 1/sqrt(fan_in)
// for rank >= 2 (fan_in = numel / dim0), which keeps activations O(1) through deep CNNs the way
// framework initializers do; unscaled uniform weights grow resnet18's activations by ~10x per
// layer, which hides numerical errors behind huge magnitudes. Data-less integer constants cannot
// be invented (they are shapes and indices): they stay data-less and a kernel that needs one
// reports it. Inputs are HostTensor::random seeded by `seed` and the input's position, except
// a one-element integer input the graph compares with a constant (Equal(sr, 16000): silero VAD's
// sample rate, which decides an If): it gets that constant, the value the model is built around,
// where random small integers would choose a branch meant for other inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/host_tensor.h"

namespace tessera {

// A copy of `graph` in which every floating-point constant without data has seeded random data.
// Returns how many constants were filled through `filled` when non-null.
Graph with_seeded_weights(const Graph& graph, uint64_t seed, int* filled = nullptr);

// The values of graph.inputs, in order: `given` by input name where present (its type must match
// the input's: UserError naming the input otherwise), seeded random otherwise. An unknown name in
// `given` is a UserError too.
std::vector<HostTensor> model_inputs(const Graph& graph, uint64_t seed,
                                     const std::map<std::string, HostTensor>& given = {});

}  // namespace tessera
