// Dataflow patterns: which op nodes a composite (a backend's fused kernel) is made of.
//
// Terms: a Pattern matches a *value*. An op pattern `Op(arg, ...)` matches a value produced by a
// node whose op is one of its alternatives (`Conv|ConvTranspose(...)`), whose present inputs match
// the argument patterns one to one (exact arity; trailing missing optional inputs do not count),
// and which satisfies the optional C++ attribute predicate. `*` matches any value; `const`
// matches a constant (initializer or folded Constant). A bare `Op` without parentheses matches the
// op with any inputs. Only op patterns contribute nodes to a match; `*`/`const` values stay outside.
//
//   pattern  Relu(Add(Conv(*, const), const))
//   graph    x ─▶ Conv_0(x, W) ─▶ Add_1(., b) ─▶ Relu_2        match at Relu_2 = {0, 1, 2}
//
// Text syntax (docs/design.md), whitespace-insensitive:
//   pattern := '*' | 'const' | ops [ '(' [ pattern { ',' pattern } ] ')' ]
//   ops     := IDENT { '|' IDENT }          IDENT = [A-Za-z_][A-Za-z0-9_.]*
// A syntax error throws UserError naming the file, the field and the 1-based column.
//
// Patterns only match: they do not check that inner values are used only inside the
// match; the partition rule's validity check (exits, taps) rejects such matches with a reason.
// Matching is O(pattern size) per root node; match_all tries every node as the root.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/graph.h"

namespace tessera {

class DataflowIndex;
class Pattern;
using PatternPtr = std::shared_ptr<const Pattern>;
// An attribute (or any node-level) predicate, with a debug name shown by to_string().
using NodePredicate = std::function<bool(const Graph&, const Node&)>;

class Pattern {
 public:
  enum class Kind { Op, Any, Constant };

  static PatternPtr any();                                        // *
  static PatternPtr constant();                                   // const
  // `ops` are alternatives; `any_args` = the bare form `Op` (args are not checked).
  static PatternPtr op(std::vector<std::string> ops, std::vector<PatternPtr> args,
                       bool any_args = false);
  static PatternPtr op(std::string op, std::vector<PatternPtr> args) {
    return Pattern::op(std::vector<std::string>{std::move(op)}, std::move(args));
  }
  // A copy of this op pattern that also requires `predicate` ("group == 1").
  PatternPtr where(std::string debug_name, NodePredicate predicate) const;

  Kind kind() const { return kind_; }
  const std::vector<std::string>& ops() const { return ops_; }
  const std::vector<PatternPtr>& args() const { return args_; }
  bool any_args() const { return any_args_; }
  // Every op name in the pattern, in text order (duplicates kept).
  std::vector<std::string> op_names() const;
  // Canonical text: "Relu(Add(Conv(*, const), const))"; predicates print as "Conv[group == 1]".
  std::string to_string() const;
  // The node-local part of an op pattern: op among the alternatives and predicate holds.
  bool accepts_node(const Graph& graph, const Node& node) const;

 private:
  Kind kind_ = Kind::Any;
  std::vector<std::string> ops_;
  std::vector<PatternPtr> args_;
  bool any_args_ = false;
  std::string predicate_name_;
  NodePredicate predicate_;
};

// Parses the text syntax. `file` and `field` only name the place in error messages:
// UserError("FILE: FIELD: column N: WHAT").
PatternPtr parse_pattern(std::string_view text, const std::string& file = "pattern",
                         const std::string& field = "pattern");

// The op nodes matched when the pattern's root matches the outputs of node `root`, ascending;
// empty when it does not match there. The root pattern must be an op pattern.
std::vector<NodeId> match_at(const Graph& graph, const Pattern& pattern, NodeId root);

struct PatternMatch {
  NodeId root;
  std::vector<NodeId> nodes;   // ascending, root included
};
// Every match, one per root node that matches, in ascending root order.
std::vector<PatternMatch> match_all(const Graph& graph, const Pattern& pattern);

}  // namespace tessera
