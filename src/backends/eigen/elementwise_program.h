// ElementwiseProgram: a fused chain of elementwise (E) and broadcast (B) ops, evaluated in one
// pass over the output, block by block, in a small register interpreter.
//
//   Add(x, b) ─▶ Relu ─▶ Mul(., s) -> y         (x, y: [N,C,H,W]; b, s: [C,1,1])
//     program:  r0 = load x; r1 = load b (broadcast); r2 = add r0 r1; r3 = relu r2;
//               r4 = load s (broadcast); r5 = mul r3 r4; store r5 -> y
//     run:      for each block of 256 output elements: execute the program over the block
//
// Registers are blocks of floats that stay in L1, so each element of the inputs is read once and
// each stored value written once, however long the chain; an op is one tight loop over a block
// (vectorized by the compiler), not one pass over the tensor. Values inside the chain that are
// used outside it (or are function outputs) are stored as well. Every op's output has the
// program's shape; inputs broadcast to it. Blocks run in parallel under OpenMP.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/compilers/function_frame.h"
#include "tessera/graph.h"

namespace tessera::eigen {

enum class EOp : uint8_t {
  Relu, Abs, Neg, Sqrt, Reciprocal, Sigmoid, Tanh, Exp, Log, Erf, Clip, LeakyRelu, Add, Sub, Mul, Div, Pow, Max, Min
};

// The op of an elementwise/broadcast node this backend can fuse, or nullopt.
std::optional<EOp> elementwise_op(const std::string& op);

class ElementwiseProgram {
 public:
  explicit ElementwiseProgram(Shape shape) : shape_(std::move(shape)) {}

  // Appends `node` (an elementwise op of the program's shape); inputs not yet in a register are
  // loaded. Throws KernelUnsupported for an op or a broadcast it cannot do.
  void add(const Graph& fn, const Node& node);
  // Marks `v` (a value computed by the program) to be written to memory.
  void store(ValueId v);
  // Values the program reads from memory.
  std::vector<ValueId> loads() const;
  void run(const FunctionFrame& frame) const;

 private:
  struct Load {
    ValueId value;
    int reg;
    std::vector<int64_t> strides;   // broadcast strides over shape_
    bool contiguous, scalar;
  };
  struct Instr {
    EOp op;
    int dst, a, b;
    float p0, p1;
  };
  int reg_of(const Graph& fn, ValueId v);
  void run_block(const FunctionFrame& frame, int64_t base, int64_t len, std::vector<float>& regs) const;

  Shape shape_;
  std::vector<Load> loads_;
  std::vector<Instr> code_;
  std::vector<std::pair<ValueId, int>> value_reg_;   // value -> register
  std::vector<std::pair<ValueId, int>> stores_;
  int num_regs_ = 0;
};

}  // namespace tessera::eigen
