// PartitionRule: how a backend proposes candidates (docs/design.md; Collage's partition_rule.h).
//
// Base rules propose seeds; combinators build on other rules:
//   SingleOpRule      one candidate per node whose op the backend supports ("*" = every op)
//   CompositeRule     one candidate per pattern match, carrying the Composite (name + pattern)
//   HostRule          one candidate per node, every op: the fallback that can always cover a
//                     node (the host runs anything, alone; Collage's HostPartitionRule)
//   UnionRule         all candidates of its sub-rules
//   FusionRule        full closure of a sub-rule's candidates under uniting two touching
//                     candidates whose kinds allow it: `none` unites nothing; `tvm` allows
//                     upstream->downstream A->B, B->R, I->I (upstream kind <= first, downstream
//                     kind <= second); `arbitrary` allows A->A (no opaque op ever fuses)
//   OnlyValidRule     keeps the candidates SubGraph::check accepts, counting rejections by reason
//   DTypeRule         keeps the candidates whose every node's tensors have dtypes the backend
//                     takes (dtype_support.h), counting rejections by reason; applied to the
//                     seeds, so the fusion closure never unites what the compiler would refuse
//
//   spec {ops: [Conv, Add, Relu], fusion: tvm, max_exits: 1}
//   -> OnlyValid(Fusion[tvm](SingleOp{Conv, Add, Relu}))
//   x ─▶ Conv_0 ─▶ Add_1 ─▶ Relu_2 :  {0} {1} {2} {0,1} {1,2} {0,1,2}
//
// Closure, not a heuristic: every union of two touching members whose kinds allow it is a member,
// found with a worklist and a hash set of seen unions. There is no depth_i + depth_j pre-check
// (TVM's drops valid unions). The one pruning is FusionOptions::max_depth, which is sound: a
// union deeper than the limit can never become valid again, because depth only grows under union.
// If the closure passes FusionOptions::max_candidates it stops and says so in RuleStats::limits
// (never a silent drop); --explain and the CLI print it.
//
// Rules are immutable and thread-safe; run() sorts and dedupes (candidate.h) so every rule's output
// is deterministic. Structure: public non-virtual run, protected run_impl.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "partition/candidate.h"
#include "partition/dataflow_index.h"
#include "partition/dtype_support.h"
#include "partition/pattern.h"
#include "partition/sub_graph.h"

namespace tessera {

enum class FusionStyle { None, Tvm, Arbitrary };
const char* fusion_style_name(FusionStyle s);                  // "none", "tvm", "arbitrary"
// True when an upstream candidate of kind `up` may be united with a downstream one of kind `down`.
bool fusion_allows(FusionStyle s, OpKind up, OpKind down);

// What a rule run counted: rejections by reason, limits hit, work done.
struct RuleStats {
  std::map<std::string, int64_t> rejections;    // reason -> count (OnlyValidRule)
  std::vector<std::string> limits;              // a limit that cut the closure short, in words
  int64_t unions_tried = 0;                     // FusionRule: touching pairs examined
  int64_t seeds = 0;                            // FusionRule: candidates of its sub-rule
  void merge(const RuleStats& o);
};

struct RuleContext {
  const DataflowIndex& index;
  std::string backend;     // written into every Candidate
  RuleStats& stats;
};

class PartitionRule {
 public:
  explicit PartitionRule(std::string name) : name_(std::move(name)) {}
  virtual ~PartitionRule() = default;
  const std::string& name() const { return name_; }
  // Sorted and deduplicated candidates (candidate.h order). A backend other than ref gets none
  // holding a node with a sub-graph (If): only ref interprets branches (docs/control_flow.md).
  std::vector<Candidate> run(const RuleContext& context) const;
  // One line per rule, nested, for --explain: "OnlyValid[max_exits 1](Fusion[tvm](SingleOp{*}))".
  virtual std::string describe() const = 0;

 protected:
  virtual std::vector<Candidate> run_impl(const RuleContext& context) const = 0;

 private:
  std::string name_;
};

using PartitionRulePtr = std::unique_ptr<PartitionRule>;

// ops: op types; {"*"} = every op.
PartitionRulePtr make_single_op_rule(std::string name, std::vector<std::string> ops);
struct CompositeSpec {
  std::string name;        // composite name, "byoc.conv_bias_relu"
  std::string text;        // pattern text, for debug output
  PatternPtr pattern;
};
PartitionRulePtr make_composite_rule(std::string name, std::vector<CompositeSpec> composites);
PartitionRulePtr make_host_rule(std::string name);
PartitionRulePtr make_union_rule(std::string name, std::vector<PartitionRulePtr> rules);

struct FusionOptions {
  FusionStyle style = FusionStyle::None;
  int max_depth = 0;                  // 0 = no limit; sound pruning (see above)
  // Per rule run: members kept, and unions examined (kept or not: the closure remembers each, so
  // both are memory) at most four times as many; hitting either is reported in RuleStats::limits.
  int64_t max_candidates = 250000;
  // The exits the valid candidates may have (0 = no limit). Sound pruning too: a node that feeds a
  // graph output is an exit of every member holding it, whatever joins later, so a union with
  // more such nodes than this can never be valid, nor can any union containing it.
  int max_exits = 0;
};
PartitionRulePtr make_fusion_rule(std::string name, PartitionRulePtr seeds, FusionOptions options);
PartitionRulePtr make_only_valid_rule(std::string name, PartitionRulePtr rule, SubGraphConfig config);
PartitionRulePtr make_dtype_rule(std::string name, PartitionRulePtr rule, DTypeSupport dtypes);

}  // namespace tessera
