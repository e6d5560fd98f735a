// src/io/hdf5_record.cpp — records (hdf5.hpp: write_record, read_record, read_texts): named
// arrays, scalars and texts in one file, as restart states keep them.
#include <hdf5.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/io/hdf5_detail.hpp"

namespace starwave::io {
using namespace detail;  // the HDF5 helpers (hdf5_detail.hpp)

void write_record(const std::string& path, const Record& r) {
  for (const auto& [name, v] : r.arrays) require_finite_output(v.data(), v.size(), path, "/" + name);
  for (const auto& [name, v] : r.scalars) require_finite_output(&v, 1, path, "attribute " + name);
  write_atomically(path, [&](hid_t f) {
    for (const auto& [name, v] : r.scalars) write_attribute(f, name, {v});
    for (const auto& [name, text] : r.texts) write_text_attribute(f, name, text);
    for (const auto& [name, v] : r.arrays)
      write_dataset(f, "/" + name, {hsize_t(v.size())}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v.data());
  });
}

Record read_record(const std::string& path, const std::vector<std::string>& arrays,
                   const std::vector<std::string>& scalars) {
  Hid f = open_file(path);
  Record r;
  std::vector<hsize_t> dims;
  for (const auto& name : arrays) r.arrays[name] = read_dataset(f, path, "/" + name, dims);
  for (const auto& name : scalars) r.scalars[name] = read_attribute(f, path, "the root", name, 1)[0];
  return r;
}

std::map<std::string, std::string> read_texts(const std::string& path) {
  Hid f = open_file(path);
  std::map<std::string, std::string> texts;
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  hsize_t index = 0;
  if (H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, &index, collect, &names) < 0)
    throw InputError(path + ": cannot read the root's attributes");
  for (const std::string& name : names) {
    Hid a(H5Aopen(f, name.c_str(), H5P_DEFAULT), H5Aclose);
    if (!a.ok()) throw InputError(path + ": cannot read attribute '" + name + "'");
    Hid type(H5Aget_type(a), H5Tclose);
    Hid space(H5Aget_space(a), H5Sclose);
    // One text each: arrays of strings (and what is not a string) are no text of ours.
    if (H5Tget_class(type) != H5T_STRING || !space.ok() || H5Sget_simple_extent_npoints(space) != 1) continue;
    const auto unreadable = [&] { return InputError(path + ": cannot read attribute '" + name + "'"); };
    if (H5Tis_variable_str(type) > 0) {  // as h5py and most tools write them
      Hid memory(H5Tcopy(H5T_C_S1), H5Tclose);
      if (!memory.ok() || H5Tset_size(memory, H5T_VARIABLE) < 0 || H5Tset_cset(memory, H5Tget_cset(type)) < 0)
        throw unreadable();
      char* value = nullptr;
      if (H5Aread(a, memory, &value) < 0) throw unreadable();
      texts[name] = value ? std::string(value) : std::string();
      H5free_memory(value);
      continue;
    }
    std::string text(H5Tget_size(type), '\0');
    if (H5Aread(a, type, text.data()) < 0) throw unreadable();
    text.resize(std::strlen(text.c_str()));
    texts[name] = text;
  }
  return texts;
}

}  // namespace starwave::io
