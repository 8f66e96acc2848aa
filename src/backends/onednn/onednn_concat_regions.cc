// OnednnProgram: Concats written in place (see onednn_program.h).
//
// A channel Concat of one image (N = 1) in plain NCHW or in whole channel blocks (aBcd16b with
// every input's channels a multiple of 16) is its inputs one after another, each a contiguous
// slab. Instead of copying every input into the Concat's buffer (build_concat's host copies),
// each input's producer writes its slab directly: before any step is built, plan_concat_regions
// gives each such Concat output a region (a buffer and a byte offset) and each of its inputs the
// slab at its position; dst_mem then places a value that has a region there, when the producer's
// layout is plain or whole blocks of its own dims (region_mem). build_concat (concat_dst) copies
// only the inputs that are not already in place (another layout, a function input, a view), and
// adds no step at all when every one is.
//
// DenseNet concatenates, in each layer, every feature before it: Concat(x0, .., xi) and then
// Concat(x0, .., xi, xi+1). The shorter is the longer one's prefix, with each xj at the same
// offset, so a whole chain shares one buffer: planned from the last Concat backwards, a Concat
// whose inputs begin a later one's takes that one's region at its start. Each feature is written
// once, by its conv, and no layer copies (a layer's copies grew with its depth: O(L^2) bytes over
// a block of L layers).
//
// A slab is written only by its value's producer, before every Concat that reads it (topological
// order); a residual in a region is never summed into in place (residual_in_place), since a Concat
// holding its bytes may be read after the sum. A Concat whose in-place inputs lie elsewhere than
// its own slabs, or in a layout other than the one it copies in, gets a buffer of its own.
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {
namespace {

// Bytes of an f32 value (its own dims, no padding).
size_t f32_bytes(const Graph& fn, ValueId v) { return static_cast<size_t>(fn.value(v).type.numel()) * sizeof(float); }

}  // namespace

std::optional<std::vector<ValueId>> OnednnProgram::channel_concat_inputs(size_t n) const {
  const Node& node = fn_.nodes[n];
  if (node.op != "Concat" || node.outputs.empty()) return std::nullopt;
  const ValueId y = node.outputs[0];
  const Shape& ys = fn_.value(y).type.shape;
  int64_t axis = attr_int(node.attrs, "axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(ys.size());
  if (ys.size() != 4 || axis != 1 || ys[0] != 1 || fn_.value(y).type.dtype != DType::f32) return std::nullopt;
  std::vector<ValueId> ins;
  for (ValueId v : node.inputs)
    if (v != kNoValue && fn_.value(v).type.numel() > 0) ins.push_back(v);
  if (ins.empty()) return std::nullopt;
  return ins;
}

void OnednnProgram::plan_concat_regions() {
  region_of_.assign(fn_.values.size(), Region{});
  if (compute_type() != memory::data_type::f32) return;
  std::vector<std::pair<ValueId, std::vector<ValueId>>> planned;   // later Concats first: output, inputs
  for (size_t n = fn_.nodes.size(); n-- > 0;) {
    const std::optional<std::vector<ValueId>> ins = channel_concat_inputs(n);
    if (!ins || shuffle_at_.count(n)) continue;   // a shuffle writes its own output (onednn_shuffle.cc)
    const ValueId y = fn_.nodes[n].outputs[0];
    if (frame_.is_function_output(y)) continue;
    Region r{y, 0};
    for (const auto& [later, later_ins] : planned)
      if (later_ins.size() > ins->size() && std::equal(ins->begin(), ins->end(), later_ins.begin())) {
        r = region_of_[static_cast<size_t>(later)];
        break;
      }
    region_of_[static_cast<size_t>(y)] = r;
    if (r.root == y) region_bytes_[y] = f32_bytes(fn_, y);
    size_t offset = r.offset;
    for (ValueId x : *ins) {
      const Value& v = fn_.value(x);
      const bool once = std::count(ins->begin(), ins->end(), x) == 1;
      if (once && v.kind == ValueKind::Intermediate && !frame_.is_function_output(x) && v.type.shape.size() == 4 &&
          region_of_[static_cast<size_t>(x)].root == kNoValue)
        region_of_[static_cast<size_t>(x)] = Region{r.root, offset};
      offset += f32_bytes(fn_, x);
    }
    planned.emplace_back(y, *ins);
  }
}

std::optional<memory> OnednnProgram::region_mem(ValueId v, const memory::desc& md) {
  const Region r = region_of_[static_cast<size_t>(v)];
  if (r.root == kNoValue || md.dims() != dims_of(v) || md.data_type() != f32 || md.get_size() != f32_bytes(fn_, v))
    return std::nullopt;
  const Dims d = dims_of(v);
  const std::optional<tag> blocks = channel_blocks(md, d);
  if (!(md == plain_md(d)) && !(blocks && d[1] % block_size(*blocks) == 0)) return std::nullopt;
  auto it = region_base_.find(r.root);
  if (it == region_base_.end())
    it = region_base_.emplace(r.root, new_mem(plain_md({static_cast<int64_t>(region_bytes_.at(r.root) / sizeof(float))}))).first;
  return memory(md, engine_, static_cast<char*>(it->second.get_data_handle()) + r.offset);
}

memory OnednnProgram::concat_dst(ValueId y, const memory::desc& md, const std::vector<ValueId>& ins,
                                 const std::vector<std::pair<memory, size_t>>& srcs) {
  const Region r = region_of_[static_cast<size_t>(y)];
  if (r.root != kNoValue) {
    // Every input already inside the region's buffer must sit at its own slab of y and be read
    // as it is (not through a copy in y's layout): it is then skipped. Else y gets a buffer of
    // its own, and the slabs keep the bytes of the values that live there.
    bool fits = region_mem(y, md).has_value();
    if (fits) {
      const char* base = static_cast<const char*>(region_base_.at(r.root).get_data_handle());
      const size_t size = region_bytes_.at(r.root);
      const char* at = base + r.offset;
      for (size_t i = 0; i < ins.size(); ++i) {
        const memory own = value_mem(ins[i]);
        const char* h = static_cast<const char*>(own.get_data_handle());
        if (h != nullptr && h >= base && h < base + size && (h != at || srcs[i].first.get_data_handle() != own.get_data_handle()))
          fits = false;
        at += srcs[i].second;
      }
    }
    if (!fits) region_of_[static_cast<size_t>(y)] = Region{};
  }
  return dst_mem(y, md);
}

}  // namespace tessera::onednn
