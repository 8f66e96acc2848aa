// `tessera run --against`: the plan and others raced in one process, the way tune races its
// contenders (verified_choice.h), so that two plans can be compared on a machine others share.
//
// Timing two plans in two processes, minutes apart, compares two moments of the machine as much
// as two plans: at 2 threads on a shared host, one plan's `run --repeat 300` read 0.41 ms in one
// process and 0.93 in the next. Here every plan is compiled once, then timed in interleaved
// rounds (the first `repeat` runs, later ones at least 25 ms, alternating direction), and each
// reads its *paired* figure: the first plan its median round, every other one that figure times
// the median ratio of their round medians, round by round. Unlike tune's race, no plan is dropped
// and no round cut short: every plan runs every round, so the figures compare like with like.
//
//   tessera run ch_ppocr_mobile_v2.0_cls_infer.onnx --input-shape x=1x3x48x192 --threads 2 \
//       --plan onednn_ref.plan.json --against onednn.plan.json --repeat 50
//   race, 9 interleaved rounds, paired with the first plan:
//     onednn_ref.plan.json      0.445 ms  1.00x      (14 partitions, 7 lone ref nodes)
//     onednn.plan.json          0.416 ms  0.93x      (one oneDNN partition)
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/host_tensor.h"
#include "tessera/plan.h"

namespace tessera::cli {

struct RacedPlan {
  std::string path;    // as given on the command line
  double latency_ms;   // paired figure (see above)
};

inline constexpr int kPlanRaceRounds = 9;

// `plans[0]` is the run's --plan; the others follow in the order given.
std::vector<RacedPlan> race_plans(const Graph& graph, const std::vector<std::pair<std::string, Plan>>& plans,
                                  const std::vector<HostTensor>& inputs, int repeat);

}  // namespace tessera::cli
