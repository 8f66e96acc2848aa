// NumPy .npy files for `tessera run --input name=file.npy`: a small reader (and a writer, for
// tests and for saving outputs).
//
// Format (NumPy's format.rst, versions 1.0-3.0): magic "\x93NUMPY", major, minor, a header length
// (u16 for 1.0, u32 for 2.0/3.0), then an ASCII Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }
// padded with spaces to 64 bytes, then the raw data. Accepted: little-endian (or '|') f4, f8, f2, i8,
// i4, u1, b1 ('<f4' -> f32, '<f2' -> f16, '<i8' -> i64, ...), C order. Fortran order, big-endian data and
// object arrays are UserErrors naming the file and the field; so is a data section shorter than
// the header's shape says. A 0-d array reads as a scalar (shape {}).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "tessera/host_tensor.h"

namespace tessera {

HostTensor read_npy(const std::string& path);
// Parses the bytes of a .npy file; `file` names it in errors.
HostTensor parse_npy(const std::string& bytes, const std::string& file);
// Writes version 1.0 (f32, f64, i64, i32, u8, bool); atomically (temporary file + rename).
void write_npy(const std::string& path, const HostTensor& tensor);
std::string npy_bytes(const HostTensor& tensor);

// The file name `tessera run --output-dir` gives a graph output: the value's name with every
// character outside [A-Za-z0-9._-] replaced by '_', plus ".npy" ("logits:0" -> "logits_0.npy").
std::string npy_file_name(const std::string& value_name);
// Writes tensors[i] as DIR/npy_file_name(names[i]), creating DIR. Two names that map to one file
// are a UserError raised before anything is written.
void write_npy_dir(const std::string& dir, const std::vector<std::string>& names, std::span<const HostTensor> tensors);

}  // namespace tessera
