// Base rules (single op, composite, host) and the union, only-valid and dtype combinators.
// The fusion closure lives in fusion_rule.cc.
#include <algorithm>
#include <set>

#include "tessera/error.h"
#include "partition/partition_rule.h"

namespace tessera {

const char* fusion_style_name(FusionStyle s) {
  switch (s) {
    case FusionStyle::None: return "none";
    case FusionStyle::Tvm: return "tvm";
    case FusionStyle::Arbitrary: return "arbitrary";
  }
  return "?";
}

bool fusion_allows(FusionStyle s, OpKind up, OpKind down) {
  auto le = [](OpKind a, OpKind b) { return static_cast<int>(a) <= static_cast<int>(b); };
  switch (s) {
    case FusionStyle::None:
      return false;
    case FusionStyle::Tvm:
      return (le(up, OpKind::OutEWiseFusable) && le(down, OpKind::Broadcast)) ||
             (le(up, OpKind::Broadcast) && le(down, OpKind::Reduction)) ||
             (le(up, OpKind::Injective) && le(down, OpKind::Injective));
    case FusionStyle::Arbitrary:
      return le(up, OpKind::OutEWiseFusable) && le(down, OpKind::OutEWiseFusable);
  }
  return false;
}

void RuleStats::merge(const RuleStats& o) {
  for (const auto& [reason, n] : o.rejections) rejections[reason] += n;
  limits.insert(limits.end(), o.limits.begin(), o.limits.end());
  unions_tried += o.unions_tried;
  seeds += o.seeds;
}

namespace {

bool has_subgraph(const Node& n) {
  for (const auto& [_, a] : n.attrs)
    if (std::holds_alternative<GraphAttr>(a)) return true;
  return false;
}

// Nodes with sub-graphs (If) run only on ref, which interprets their branches: another backend's
// candidate that holds one is dropped, counted as "control flow runs on ref only".
void drop_control_flow(const RuleContext& context, std::vector<Candidate>& out) {
  if (context.backend == "ref") return;
  const Graph& g = context.index.graph();
  std::vector<char> control(static_cast<size_t>(g.num_nodes()), 0);
  bool any = false;
  for (NodeId i = 0; i < g.num_nodes(); ++i) any |= (control[static_cast<size_t>(i)] = has_subgraph(g.node(i))) != 0;
  if (!any) return;
  const size_t before = out.size();
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const Candidate& c) {
                             bool holds = false;
                             c.inside().for_each([&](int i) { holds |= control[static_cast<size_t>(i)] != 0; });
                             return holds;
                           }),
            out.end());
  if (out.size() != before) context.stats.rejections["control flow runs on ref only"] += static_cast<int64_t>(before - out.size());
}

}  // namespace

std::vector<Candidate> PartitionRule::run(const RuleContext& context) const {
  std::vector<Candidate> out = run_impl(context);
  drop_control_flow(context, out);
  sort_and_dedupe(out);
  return out;
}

namespace {

Candidate single_node(const RuleContext& ctx, const std::string& rule, NodeId i) {
  return Candidate{SubGraph(ctx.index, IndexSet::single(ctx.index.size(), i)), ctx.backend, rule, {}};
}

class SingleOpRule final : public PartitionRule {
 public:
  SingleOpRule(std::string name, std::vector<std::string> ops)
      : PartitionRule(std::move(name)), ops_(ops.begin(), ops.end()), all_(ops_.count("*") > 0) {}

  std::string describe() const override {
    std::string out = "SingleOp{";
    bool first = true;
    for (const auto& op : ops_) {
      out += (first ? "" : ",") + op;
      first = false;
    }
    return out + "}";
  }

 protected:
  std::vector<Candidate> run_impl(const RuleContext& ctx) const override {
    std::vector<Candidate> out;
    const Graph& g = ctx.index.graph();
    for (NodeId i = 0; i < g.num_nodes(); ++i)
      if (all_ || ops_.count(g.node(i).op)) out.push_back(single_node(ctx, name(), i));
    return out;
  }

 private:
  std::set<std::string> ops_;
  bool all_;
};

class CompositeRule final : public PartitionRule {
 public:
  CompositeRule(std::string name, std::vector<CompositeSpec> composites)
      : PartitionRule(std::move(name)), composites_(std::move(composites)) {}

  std::string describe() const override {
    std::string out = "Composite{";
    for (size_t i = 0; i < composites_.size(); ++i)
      out += (i ? ", " : "") + composites_[i].name + "=" + composites_[i].pattern->to_string();
    return out + "}";
  }

 protected:
  std::vector<Candidate> run_impl(const RuleContext& ctx) const override {
    std::vector<Candidate> out;
    const int n = ctx.index.size();
    for (const auto& spec : composites_) {
      for (const auto& match : match_all(ctx.index.graph(), *spec.pattern)) {
        IndexSet inside(n);
        for (NodeId i : match.nodes) inside.insert(i);
        Composite composite{spec.name, spec.text, inside};
        out.push_back(Candidate{SubGraph(ctx.index, inside), ctx.backend, name(), {std::move(composite)}});
      }
    }
    return out;
  }

 private:
  std::vector<CompositeSpec> composites_;
};

class HostRule final : public PartitionRule {
 public:
  using PartitionRule::PartitionRule;
  std::string describe() const override { return "Host"; }

 protected:
  std::vector<Candidate> run_impl(const RuleContext& ctx) const override {
    std::vector<Candidate> out;
    for (NodeId i = 0; i < ctx.index.size(); ++i) out.push_back(single_node(ctx, name(), i));
    return out;
  }
};

class UnionRule final : public PartitionRule {
 public:
  UnionRule(std::string name, std::vector<PartitionRulePtr> rules)
      : PartitionRule(std::move(name)), rules_(std::move(rules)) {}

  std::string describe() const override {
    std::string out = "Union(";
    for (size_t i = 0; i < rules_.size(); ++i) out += (i ? ", " : "") + rules_[i]->describe();
    return out + ")";
  }

 protected:
  std::vector<Candidate> run_impl(const RuleContext& ctx) const override {
    std::vector<Candidate> out;
    for (const auto& rule : rules_) {
      auto part = rule->run(ctx);
      out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    return out;
  }

 private:
  std::vector<PartitionRulePtr> rules_;
};

class OnlyValidRule final : public PartitionRule {
 public:
  OnlyValidRule(std::string name, PartitionRulePtr rule, SubGraphConfig config)
      : PartitionRule(std::move(name)), rule_(std::move(rule)), config_(config) {}

  std::string describe() const override {
    return "OnlyValid[max_depth " + std::to_string(config_.max_depth) + ", max_exits " +
           std::to_string(config_.max_exits) + (config_.allow_taps ? ", taps" : ", no taps") + "](" +
           rule_->describe() + ")";
  }

 protected:
  std::vector<Candidate> run_impl(const RuleContext& ctx) const override {
    std::vector<Candidate> out;
    for (auto& c : rule_->run(ctx)) {
      if (auto reason = c.sub_graph.check(config_))
        ++ctx.stats.rejections[*reason];
      else
        out.push_back(std::move(c));
    }
    return out;
  }

 private:
  PartitionRulePtr rule_;
  SubGraphConfig config_;
};

class DTypeRule final : public PartitionRule {
 public:
  DTypeRule(std::string name, PartitionRulePtr rule, DTypeSupport dtypes)
      : PartitionRule(std::move(name)), rule_(std::move(rule)), dtypes_(std::move(dtypes)) {}

  std::string describe() const override { return "DTypes[" + dtypes_.describe() + "](" + rule_->describe() + ")"; }

 protected:
  std::vector<Candidate> run_impl(const RuleContext& ctx) const override {
    const Graph& g = ctx.index.graph();
    std::vector<std::optional<std::string>> refused(static_cast<size_t>(g.num_nodes()));
    for (NodeId i = 0; i < g.num_nodes(); ++i) refused[static_cast<size_t>(i)] = dtypes_.refuses(g, g.node(i));
    std::vector<Candidate> out;
    for (auto& c : rule_->run(ctx)) {
      const std::string* why = nullptr;
      c.inside().for_each([&](int i) {
        if (!why && refused[static_cast<size_t>(i)]) why = &*refused[static_cast<size_t>(i)];
      });
      if (why) ++ctx.stats.rejections[*why];
      else out.push_back(std::move(c));
    }
    return out;
  }

 private:
  PartitionRulePtr rule_;
  DTypeSupport dtypes_;
};

}  // namespace

PartitionRulePtr make_single_op_rule(std::string name, std::vector<std::string> ops) {
  return std::make_unique<SingleOpRule>(std::move(name), std::move(ops));
}
PartitionRulePtr make_composite_rule(std::string name, std::vector<CompositeSpec> composites) {
  for (const auto& c : composites)
    TESSERA_CHECK(c.pattern && c.pattern->kind() == Pattern::Kind::Op, "composite rule: root must be an op pattern");
  return std::make_unique<CompositeRule>(std::move(name), std::move(composites));
}
PartitionRulePtr make_host_rule(std::string name) { return std::make_unique<HostRule>(std::move(name)); }
PartitionRulePtr make_union_rule(std::string name, std::vector<PartitionRulePtr> rules) {
  return std::make_unique<UnionRule>(std::move(name), std::move(rules));
}
PartitionRulePtr make_only_valid_rule(std::string name, PartitionRulePtr rule, SubGraphConfig config) {
  return std::make_unique<OnlyValidRule>(std::move(name), std::move(rule), config);
}
PartitionRulePtr make_dtype_rule(std::string name, PartitionRulePtr rule, DTypeSupport dtypes) {
  return std::make_unique<DTypeRule>(std::move(name), std::move(rule), std::move(dtypes));
}

}  // namespace tessera
