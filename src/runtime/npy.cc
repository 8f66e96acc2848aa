// NumPy .npy reader and writer (see npy.h).
#include "runtime/npy.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tessera/error.h"
#include "ir/limits.h"

namespace tessera {
namespace {

struct Descr {
  const char* code;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"f4", DType::f32}, {"f8", DType::f64}, {"f2", DType::f16}, {"i8", DType::i64},
                             {"i4", DType::i32}, {"u1", DType::u8},  {"b1", DType::boolean}};

// The value text of `key` in the header dict: from after "'key':" to the matching delimiter.
std::string dict_field(const std::string& header, const std::string& key, const std::string& file) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw UserError(file, "header", "missing '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) throw UserError(file, "header", "malformed '" + key + "'");
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) throw UserError(file, "header", "malformed '" + key + "'");
  if (header[start] == '(') {
    size_t end = header.find(')', start);
    if (end == std::string::npos) throw UserError(file, "header", "unterminated shape");
    return header.substr(start, end - start + 1);
  }
  if (header[start] == '\'') {
    size_t end = header.find('\'', start + 1);
    if (end == std::string::npos) throw UserError(file, "header", "unterminated '" + key + "'");
    return header.substr(start + 1, end - start - 1);
  }
  size_t end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

Shape parse_shape(const std::string& text, const std::string& file) {
  Shape shape;
  std::string inner = text.substr(1, text.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t a = item.find_first_not_of(' ');
    if (a == std::string::npos) continue;   // trailing comma of a 1-tuple
    size_t b = item.find_last_not_of(' ');
    std::string digits = item.substr(a, b - a + 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18)
      throw UserError(file, "header: shape", "bad dimension '" + digits + "'");
    shape.push_back(std::stoll(digits));
  }
  return shape;
}

}  // namespace

HostTensor parse_npy(const std::string& bytes, const std::string& file) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw UserError(file, "", "not a .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw UserError(file, "", "truncated header");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)]);
    offset = 12;
  } else {
    throw UserError(file, "", "unsupported .npy version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) throw UserError(file, "", "truncated header");
  const std::string header = bytes.substr(offset, header_len);

  const std::string descr = dict_field(header, "descr", file);
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '|'))
    throw UserError(file, "header: descr", "'" + descr + "' is not a little-endian f4/f8/f2/i8/i4/u1/b1 dtype");
  const Descr* found = nullptr;
  for (const Descr& d : kDescrs)
    if (descr.compare(1, 2, d.code) == 0) found = &d;
  if (!found) throw UserError(file, "header: descr", "unsupported dtype '" + descr + "' (f4, f8, f2, i8, i4, u1, b1)");
  if (dict_field(header, "fortran_order", file) != "False")
    throw UserError(file, "header: fortran_order", "Fortran-ordered arrays are not supported (save with C order)");
  const std::string shape_text = dict_field(header, "shape", file);
  if (shape_text.empty() || shape_text.front() != '(') throw UserError(file, "header: shape", "not a tuple");

  const TensorType type{found->dtype, parse_shape(shape_text, file)};
  if (std::string why = size_limit_problem(type); !why.empty()) throw UserError(file, "header: shape", why);
  const size_t data_at = offset + header_len;
  if (bytes.size() - data_at < type.bytes())   // checked before allocating anything
    throw UserError(file, "data", std::to_string(bytes.size() - data_at) + " bytes, the shape needs " + std::to_string(type.bytes()));
  HostTensor t(type);
  if (!t.bytes.empty()) std::memcpy(t.bytes.data(), bytes.data() + data_at, t.bytes.size());
  return t;
}

HostTensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path, "", "cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_npy(ss.str(), path);
}

std::string npy_bytes(const HostTensor& tensor) {
  const char* code = nullptr;
  for (const Descr& d : kDescrs)
    if (d.dtype == tensor.type.dtype) code = d.code;
  if (!code) throw UserError("write_npy: dtype " + std::string(dtype_name(tensor.type.dtype)) + " has no .npy code here");
  std::string shape = "(";
  for (int64_t d : tensor.type.shape) shape += std::to_string(d) + ", ";
  if (tensor.type.shape.size() > 1) shape.resize(shape.size() - 2);
  else if (tensor.type.shape.size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + (tensor.type.dtype == DType::u8 || tensor.type.dtype == DType::boolean ? "|" : "<") +
                       code + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size());
  return out;
}

void write_npy(const std::string& path, const HostTensor& tensor) {
  const std::string data = npy_bytes(tensor);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw UserError(path, "", "cannot write");
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) throw UserError(path, "", "write failed");
  }
  std::filesystem::rename(tmp, path);
}

std::string npy_file_name(const std::string& value_name) {
  std::string out = value_name;
  for (char& c : out) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
    if (!keep) c = '_';
  }
  return out + ".npy";
}

void write_npy_dir(const std::string& dir, const std::vector<std::string>& names, std::span<const HostTensor> tensors) {
  std::map<std::string, std::string> by_file;
  for (const std::string& name : names) {
    auto [it, fresh] = by_file.emplace(npy_file_name(name), name);
    if (!fresh)
      throw UserError(dir, "", "outputs '" + it->second + "' and '" + name + "' would both be written to " + it->first);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) throw UserError(dir, "", "cannot create the output directory");
  for (size_t i = 0; i < names.size() && i < tensors.size(); ++i)
    write_npy((std::filesystem::path(dir) / npy_file_name(names[i])).string(), tensors[i]);
}

}  // namespace tessera
