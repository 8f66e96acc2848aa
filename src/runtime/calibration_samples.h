// Calibration inputs as samples: one .npy file per input may hold several samples, stacked along
// axis 0, and an accuracy budget is verified on every one of them.
//
//   input x: f32[1, 3, 224, 224]     --calibration x=cal.npy, cal.npy: f32[8, 3, 224, 224]
//     -> 8 samples, sample k = rows [k, k + 1) of the file; each runs as its own batch-1 input
//
// A file of the input's own type is one sample (what every plan made so far used). A file whose
// dtype, rank and trailing dimensions match and whose first dimension is K times the input's holds
// K samples. Inputs that hold several must hold the same K; an input given as one sample is the
// same in every sample; inputs not given are seeded random, with seed `seed + k` for sample k.
// When some input is seeded random and no file stacks samples, there are kSeededSamples samples
// (not one): the seeded inputs differ between them, the given ones are the same in each. Seeded
// samples cost nothing to draw, and one of them is one draw of a noisy error (below). They come in
// two scales: the even samples' seeded inputs are uniform in [-1, 1) (model_data.h, what `run`
// feeds), the odd samples' f32 ones standard normal (seeded_normal below; the scale of normalized
// data, and of PyTorch's torch.randn reference inputs).
//
// Why both scales: seeded calibration stands in for data nobody gave, and an int8 range fit to
// one scale saturates on wider inputs. Ranges from uniform [-1, 1) samples alone cap the input at
// +-1, and a standard-normal input (up to +-4.7 on 150k elements) then clips at the first
// convolution and at every activation after it: mnasnet1_0 (random weights, E = 0.01) verified at
// 0.00797 on four uniform samples read 0.111 on its normal reference input. With both scales the
// ranges span the wider one and the budget is verified on each.
//
// Why: one input is a noisy measurement of a plan's error. On models whose int8 error is
// dominated by where values fall against rounding boundaries (efficientnet_b0 with random weights:
// two exact implementations of the same QDQ model differ by 0.03 relative), a plan verified at
// 0.034 on its calibration input read 0.046 on another; the budget then holds on new inputs only
// as well as the maximum over several samples predicts them (docs/accuracy.md, "int8").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/host_tensor.h"

namespace tessera {

// How many samples seeded random inputs give when no file stacks several (see above).
inline constexpr int64_t kSeededSamples = 4;

// The samples in `calibration` (input name -> data), each a map of the given inputs at the model's
// own types, in order (with the seeded samples' standard-normal inputs filled in). Never empty: with an input not given and no file stacking several, kSeededSamples. A file that
// fits neither form is passed on whole (model_inputs then names the type mismatch); different K
// across inputs is UserError::option("calibration", ...).
// `seed` seeds the standard-normal samples (sample k, input i: (seed + k) * 1000003 + i, as
// model_inputs seeds the uniform ones).
std::vector<std::map<std::string, HostTensor>> calibration_samples(const Graph& graph,
                                                                   const std::map<std::string, HostTensor>& calibration, uint64_t seed = 0);

}  // namespace tessera
