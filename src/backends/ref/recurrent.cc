// Recurrent layers: RNN, GRU and LSTM (ONNX opset 14 semantics, older opsets alike).
//
// All three run the same loop: for each direction (forward, reverse, or both), for each batch
// row, for each time step t < sequence_lens[b], compute the gate pre-activations
//   g = X_t W^T + H_{t-1} R^T + Wb + Rb          (one row of gates per batch row)
// and update the state. Gate order is ONNX's: LSTM i, o, f, c; GRU z, r, h; RNN one gate.
//   LSTM: i = f(g_i + P_i . C), f = f(g_f + P_f . C), c~ = g(g_c), C' = f . C + i . c~,
//         o = f(g_o + P_o . C'), H' = o . h(C')            (input_forget: f = 1 - i)
//   GRU:  z = f(g_z), r = f(g_r), h~ = g(X Wh^T + (r . H) Rh^T + Rbh + Wbh)
//         (linear_before_reset: g(X Wh^T + r . (H Rh^T + Rbh) + Wbh)), H' = (1 - z) . h~ + z . H
//   RNN:  H' = f(g)
// `clip` bounds pre-activations to [-clip, clip]. Steps past a row's sequence length leave Y zero
// and the state unchanged, so Y_h / Y_c hold each row's last valid step. layout 1 swaps the
// batch and sequence axes of X, Y, initial_h/c, Y_h/c as the spec says.
//
// Plain loops accumulating in double. The gate pre-activations are dot products over rows of W
// and R (4 x 128 rows of 128 + 128 for silero VAD's one-step LSTM of 128 units); each runs over
// eight independent partial sums (dot()), the same double arithmetic as one running sum up to
// the order of the additions, but without one sum's chain of dependent adds, so it pipelines
// and vectorizes (a serial double sum made this LSTM 5x slower).
#include <cmath>
#include <functional>
#include <vector>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

enum class Cell { Rnn, Gru, Lstm };

int gate_count(Cell c) { return c == Cell::Lstm ? 4 : c == Cell::Gru ? 3 : 1; }
int activation_count(Cell c) { return c == Cell::Lstm ? 3 : c == Cell::Gru ? 2 : 1; }

using Activation = std::function<double(double)>;

// sum_i a[i] * b[i] in double, over eight partial sums combined at the end.
template <typename A, typename B>
double dot(const A* a, const B* b, int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += static_cast<double>(a[i + l]) * static_cast<double>(b[i + l]);
  double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) s += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return s;
}

Activation make_activation(const Node& n, const std::string& name, double alpha, double beta, bool has_alpha,
                           bool has_beta) {
  auto a = [&](double d) { return has_alpha ? alpha : d; };
  auto b = [&](double d) { return has_beta ? beta : d; };
  if (name == "Sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (name == "Tanh") return [](double x) { return std::tanh(x); };
  if (name == "Relu") return [](double x) { return x > 0 ? x : 0.0; };
  if (name == "LeakyRelu") return [al = a(0.01)](double x) { return x >= 0 ? x : al * x; };
  if (name == "ThresholdedRelu") return [al = a(1.0)](double x) { return x > al ? x : 0.0; };
  if (name == "HardSigmoid")
    return [al = a(0.2), be = b(0.5)](double x) { return std::fmax(0.0, std::fmin(1.0, al * x + be)); };
  if (name == "Affine") return [al = a(1.0), be = b(0.0)](double x) { return al * x + be; };
  if (name == "ScaledTanh") return [al = a(1.0), be = b(1.0)](double x) { return al * std::tanh(be * x); };
  if (name == "Elu") return [al = a(1.0)](double x) { return x >= 0 ? x : al * (std::exp(x) - 1.0); };
  if (name == "Softsign") return [](double x) { return x / (1.0 + std::fabs(x)); };
  if (name == "Softplus") return [](double x) { return std::log1p(std::exp(x)); };
  unsupported(n, "activation '" + name + "'");
}

// The activations of one direction, defaults filled in (LSTM: Sigmoid, Tanh, Tanh).
std::vector<Activation> activations(const Node& n, Cell cell, int direction) {
  static const std::vector<std::string> kDefaults = {"Sigmoid", "Tanh", "Tanh"};
  const int count = activation_count(cell);
  std::vector<std::string> names;
  if (auto it = n.attrs.find("activations"); it != n.attrs.end())
    if (auto v = std::get_if<std::vector<std::string>>(&it->second)) names = *v;
  std::vector<double> alphas, betas;
  for (auto [key, list] : {std::pair{"activation_alpha", &alphas}, std::pair{"activation_beta", &betas}})
    if (auto it = n.attrs.find(key); it != n.attrs.end())
      if (auto v = std::get_if<std::vector<double>>(&it->second)) *list = *v;
  std::vector<Activation> out;
  for (int k = 0; k < count; ++k) {
    const size_t i = static_cast<size_t>(direction * count + k);
    const std::string name = i < names.size() ? names[i] : cell == Cell::Rnn ? "Tanh" : kDefaults[static_cast<size_t>(k)];
    out.push_back(make_activation(n, name, i < alphas.size() ? alphas[i] : 0, i < betas.size() ? betas[i] : 0,
                                  i < alphas.size(), i < betas.size()));
  }
  return out;
}

template <typename T>
void run_cell(const Node& n, Cell cell, Inputs in, Outputs out) {
  const int gates = gate_count(cell);
  const bool batch_first = attr_int(n.attrs, "layout", 0) == 1;
  const Shape& xs = in[0].type.shape;
  if (xs.size() != 3) bad_node(n, "X must be 3-D");
  const int64_t seq = batch_first ? xs[1] : xs[0], batch = batch_first ? xs[0] : xs[1], input = xs[2];
  const Shape& ws = in[1].type.shape;
  if (ws.size() != 3 || in[2].type.shape.size() != 3) bad_node(n, "W and R must be 3-D");
  const int64_t dirs = ws[0], hidden = ws[1] / gates;
  if (ws[1] != gates * hidden || ws[2] != input) bad_node(n, "W's shape does not match X and the gate count");
  const std::string direction = attr_string(n.attrs, "direction", "forward");
  if ((direction == "bidirectional") != (dirs == 2)) bad_node(n, "direction and W's first dimension disagree");
  const double clip = attr_float(n.attrs, "clip", 0.0);
  const bool input_forget = attr_int(n.attrs, "input_forget", 0) != 0;
  const bool linear_before_reset = attr_int(n.attrs, "linear_before_reset", 0) != 0;

  const T* x = in[0].as<T>();
  const T* w = in[1].as<T>();
  const T* r = in[2].as<T>();
  const T* bias = has_input(in, 3) ? in[3].as<T>() : nullptr;
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (has_input(in, 4)) {
    lens = read_ints(n, in[4]);
    if (static_cast<int64_t>(lens.size()) != batch) bad_node(n, "sequence_lens must have one entry per batch row");
  }
  const T* h0 = has_input(in, 5) ? in[5].as<T>() : nullptr;
  const T* c0 = cell == Cell::Lstm && has_input(in, 6) ? in[6].as<T>() : nullptr;
  const T* peep = cell == Cell::Lstm && has_input(in, 7) ? in[7].as<T>() : nullptr;

  T* y = has_output(out, 0) ? out[0].as<T>() : nullptr;
  T* yh = has_output(out, 1) ? out[1].as<T>() : nullptr;
  T* yc = cell == Cell::Lstm && has_output(out, 2) ? out[2].as<T>() : nullptr;
  if (y) std::fill_n(y, out[0].numel(), T(0));

  // Index helpers for the layout-dependent tensors.
  auto x_at = [&](int64_t t, int64_t b) { return x + (batch_first ? b * seq + t : t * batch + b) * input; };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return y + (batch_first ? ((b * seq + t) * dirs + d) : ((t * dirs + d) * batch + b)) * hidden;
  };
  auto state_at = [&](int64_t d, int64_t b) { return (batch_first ? b * dirs + d : d * batch + b) * hidden; };
  auto clipped = [&](double v) { return clip > 0 ? std::fmax(-clip, std::fmin(clip, v)) : v; };

  std::vector<double> g(static_cast<size_t>(gates * hidden)), rh(static_cast<size_t>(hidden));
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const auto act = activations(n, cell, static_cast<int>(d));
    const T* wd = w + d * gates * hidden * input;
    const T* rd = r + d * gates * hidden * hidden;
    const T* wb = bias ? bias + d * 2 * gates * hidden : nullptr;
    const T* rb = bias ? wb + gates * hidden : nullptr;
    const T* pd = peep ? peep + d * 3 * hidden : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> h(static_cast<size_t>(hidden), 0.0), c(static_cast<size_t>(hidden), 0.0);
      for (int64_t j = 0; j < hidden; ++j) {
        if (h0) h[j] = h0[state_at(d, b) + j];
        if (c0) c[j] = c0[state_at(d, b) + j];
      }
      const int64_t len = std::min(lens[static_cast<size_t>(b)], seq);
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        const T* xt = x_at(t, b);
        for (int64_t k = 0; k < gates * hidden; ++k) {
          double s = wb ? static_cast<double>(wb[k]) : 0.0;
          s += dot(xt, wd + k * input, input);
          // GRU's candidate gate reads the reset state: computed below.
          const bool gru_h = cell == Cell::Gru && k >= 2 * hidden;
          if (!gru_h) {
            if (rb) s += static_cast<double>(rb[k]);
            s += dot(h.data(), rd + k * hidden, hidden);
          }
          g[k] = s;
        }
        if (cell == Cell::Rnn) {
          for (int64_t j = 0; j < hidden; ++j) h[j] = act[0](clipped(g[j]));
        } else if (cell == Cell::Gru) {
          std::vector<double> z(static_cast<size_t>(hidden)), rr(static_cast<size_t>(hidden));
          for (int64_t j = 0; j < hidden; ++j) {
            z[j] = act[0](clipped(g[j]));
            rr[j] = act[0](clipped(g[hidden + j]));
          }
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t k = 2 * hidden + j;
            double s = 0;
            if (linear_before_reset) {
              for (int64_t i = 0; i < hidden; ++i) s += h[i] * static_cast<double>(rd[k * hidden + i]);
              if (rb) s += static_cast<double>(rb[k]);
              s *= rr[j];
            } else {
              for (int64_t i = 0; i < hidden; ++i) s += rr[i] * h[i] * static_cast<double>(rd[k * hidden + i]);
              if (rb) s += static_cast<double>(rb[k]);
            }
            rh[j] = act[1](clipped(g[k] + s));
          }
          for (int64_t j = 0; j < hidden; ++j) h[j] = (1 - z[j]) * rh[j] + z[j] * h[j];
        } else {
          for (int64_t j = 0; j < hidden; ++j) {
            const double pi = pd ? static_cast<double>(pd[j]) : 0, po = pd ? static_cast<double>(pd[hidden + j]) : 0;
            const double pf = pd ? static_cast<double>(pd[2 * hidden + j]) : 0;
            const double ig = act[0](clipped(g[j] + pi * c[j]));
            const double fg = input_forget ? 1 - ig : act[0](clipped(g[2 * hidden + j] + pf * c[j]));
            const double cand = act[1](clipped(g[3 * hidden + j]));
            c[j] = fg * c[j] + ig * cand;
            const double og = act[0](clipped(g[hidden + j] + po * c[j]));
            h[j] = og * act[2](c[j]);
          }
        }
        if (y)
          for (int64_t j = 0; j < hidden; ++j) y_at(t, d, b)[j] = static_cast<T>(h[j]);
      }
      for (int64_t j = 0; j < hidden; ++j) {
        if (yh) yh[state_at(d, b) + j] = static_cast<T>(h[j]);
        if (yc) yc[state_at(d, b) + j] = static_cast<T>(c[j]);
      }
    }
  }
}

NodeKernel recurrent_kernel(Cell cell) {
  return [cell](const Node& n, Inputs in, Outputs out) {
    expect_inputs(n, in, 3, cell == Cell::Lstm ? 8 : 6);
    expect_outputs(n, out, 0, cell == Cell::Lstm ? 3 : 2);
    visit_float(n, in[0].type.dtype, [&]<typename T>() { run_cell<T>(n, cell, in, out); });
  };
}

}  // namespace

void register_recurrent(KernelRegistry& r) {
  r.add("RNN", recurrent_kernel(Cell::Rnn));
  r.add("GRU", recurrent_kernel(Cell::Gru));
  r.add("LSTM", recurrent_kernel(Cell::Lstm));
}

}  // namespace tessera::ref
