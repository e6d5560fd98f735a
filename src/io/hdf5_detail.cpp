// src/io/hdf5_detail.cpp — see hdf5_detail.hpp.
#include "src/io/hdf5_detail.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "src/memory/room.hpp"
#include "src/safety/inputs.hpp"
#include "src/safety/outputs.hpp"

namespace starwave::io::detail {
namespace fs = std::filesystem;

/// Silences HDF5's own error stack printing (we report errors ourselves), and keeps HDF5
/// from closing files at exit: every file is closed by its owner, and after a failed write
/// (a full disk) HDF5's own clean-up at exit would crash on the file it could not close.
struct QuietHdf5 {
  QuietHdf5() {
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
};

const QuietHdf5 quiet_hdf5;

std::string hdf5_os_cause() {
  int found = 0;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        const char* at = e->desc ? std::strstr(e->desc, "errno = ") : nullptr;
        if (at) *static_cast<int*>(data) = std::atoi(at + 8);
        return 0;
      },
      &found);
  return found > 0 ? os_cause(found) : std::string();
}

void check(herr_t e, const std::string& what) {
  if (e >= 0) return;
  const std::string cause = hdf5_os_cause();
  throw RuntimeError(cause.empty() ? what + " failed in HDF5" : what + ": " + cause);
}

bool looks_like_segy(const std::string& path) {
  if (safety::named_as(path, safety::Format::kSegy)) return true;
  std::ifstream in(path, std::ios::binary);
  char code[2];
  if (!in.seekg(3224) || !in.read(code, 2)) return false;
  const int a = static_cast<unsigned char>(code[0]), b = static_cast<unsigned char>(code[1]);
  auto known = [](int format) { return format == 1 || format == 2 || format == 3 || format == 5 || format == 8; };
  return known(a * 256 + b) || known(b * 256 + a);  // big- or little-endian
}

namespace {

/// HDF5's own words on the last failure (its error stack), one record each.
std::vector<std::string> hdf5_error_records() {
  std::vector<std::string> records;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        if (e->desc) static_cast<std::vector<std::string>*>(data)->push_back(e->desc);
        return 0;
      },
      &records);
  return records;
}

/// Why HDF5 would not open `path` (read-only), after H5Fopen failed.
std::string open_failure(const std::string& path) {
  const std::vector<std::string> records = hdf5_error_records();
  auto record_with = [&](const char* words, bool with_errno) {  // the first such record, else ""
    for (const std::string& r : records)
      if (r.find(words) != std::string::npos && (!with_errno || r.find("errno = ") != std::string::npos)) return r;
    return std::string();
  };
  auto errno_of = [](const std::string& record) {  // HDF5 writes "…, errno = N, error message = …"
    const std::size_t at = record.rfind("errno = ");
    return at == std::string::npos ? 0 : std::atoi(record.c_str() + at + 8);
  };
  if (!record_with("already open for write", false).empty())
    return "marked as open for writing by another program (one still writing it, or one that stopped without "
           "closing it: then `h5clear -s " +
           path + "` clears the mark)";
  if (const std::string lock = record_with("unable to lock file", true); !lock.empty()) {
    const int err = errno_of(lock);
    if (err == EAGAIN || err == EWOULDBLOCK)
      return "locked by another program that has it open for writing; run again once it has closed the file";
    return "HDF5 cannot lock it" + (err > 0 ? " (" + os_cause(err) + ")" : std::string()) +
           ": on a file system without locks, set HDF5_USE_FILE_LOCKING=FALSE";
  }
  if (const int err = errno_of(record_with("unable to open file", true)); err > 0)
    return "cannot open it: " + os_cause(err);
  // HDF5's signature where a superblock may start: an HDF5 file, cut short or damaged.
  if (H5Fis_hdf5(path.c_str()) > 0) return "an HDF5 file that HDF5 cannot open (damaged or truncated)";
  return "not an HDF5 file";
}

}  // namespace

Hid open_file(const std::string& path) {
  safety::require_input_file(path);  // a pipe or a device would block or mislead HDF5
  Hid f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.ok()) {
    if (looks_like_segy(path))
      throw InputError(path +
                       ": a SEG-Y file, not HDF5: bring it in with `starwave import` (shot records) or "
                       "`starwave import --velocity` (a model)");
    throw InputError(path + ": " + open_failure(path));
  }
  // The file HDF5 opened is the one this run read before (safety::InputPins).
  int* fd = nullptr;
  if (H5Fget_vfd_handle(f, H5P_DEFAULT, reinterpret_cast<void**>(&fd)) >= 0 && fd) safety::require_unchanged(path, *fd);
  return f;
}

namespace {

/// Set when HDF5 was about to follow an external link (which deny_external_links refused).
thread_local bool g_external_link = false;

herr_t deny_external_link(const char*, const char*, const char*, const char*, unsigned*, hid_t, void*) {
  g_external_link = true;
  return -1;
}

/// Link (dataset) access properties under which HDF5 never opens another file.
Hid no_external_links(hid_t kind) {
  Hid p(H5Pcreate(kind), H5Pclose);
  if (!p.ok() || H5Pset_elink_cb(p, deny_external_link, nullptr) < 0)
    throw RuntimeError("HDF5: cannot set up the link access properties");
  return p;
}

std::string name_of(hid_t file) {
  char name[4096] = {};
  return H5Fget_name(file, name, sizeof name) > 0 ? std::string(name) : std::string("the file");
}

[[noreturn]] void refuse_outside(const std::string& path, const std::string& name, const std::string& how) {
  throw InputError(path + ": " + name + " " + how +
                   ", which starwave does not read (it reads what the file holds itself, kept from changing "
                   "during the run); write the values into the file");
}

}  // namespace

bool has_link(hid_t file, const std::string& name) {
  // Check each component so that "/a/b" with no "/a" is simply absent.
  const Hid lapl = no_external_links(H5P_LINK_ACCESS);
  std::string partial;
  std::size_t pos = 1;
  while (true) {
    const std::size_t next = name.find('/', pos);
    partial = name.substr(0, next);
    g_external_link = false;
    const htri_t exists = H5Lexists(file, partial.c_str(), lapl);
    if (g_external_link) refuse_outside(name_of(file), name, "is reached through an external link to another file");
    if (exists <= 0) return false;
    if (next == std::string::npos) return true;
    pos = next + 1;
  }
}

Hid open_dataset(hid_t file, const std::string& path, const std::string& name) {
  const Hid dapl = no_external_links(H5P_DATASET_ACCESS);
  g_external_link = false;
  Hid d(H5Dopen2(file, name.c_str(), dapl), H5Dclose);
  if (g_external_link) refuse_outside(path, name, "is an external link to another file");
  if (!d.ok()) return d;
  Hid dcpl(H5Dget_create_plist(d), H5Pclose);
  if (!dcpl.ok()) throw InputError(path + ": cannot read how " + name + " is stored");
  const int external = H5Pget_external_count(dcpl);
  if (external != 0) refuse_outside(path, name, "keeps its values in external raw files");
  // A virtual dataset reads fill values wherever a source is missing, in this file or another.
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  if (layout == H5D_VIRTUAL) refuse_outside(path, name, "is a virtual dataset (a view of other datasets)");
  if (layout < 0) throw InputError(path + ": cannot read how " + name + " is stored");
  return d;
}

std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

hsize_t count_of(const std::vector<hsize_t>& dims) {
  hsize_t n = 1;
  for (hsize_t k : dims) {
    if (k != 0 && n > ~hsize_t(0) / k) return ~hsize_t(0);
    n *= k;
  }
  return n;
}

std::string read_failure(hid_t d) {
  Hid dcpl(H5Dget_create_plist(d), H5Pclose);
  const int n = dcpl.ok() ? H5Pget_nfilters(dcpl) : 0;
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nvalues = 0;
    char name[64] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, unsigned(i), &flags, &nvalues, nullptr, sizeof name, name, &config);
    if (id >= 0 && H5Zfilter_avail(id) <= 0)
      return " (it is compressed with HDF5 filter " + std::to_string(id) +
             (name[0] ? std::string(" '") + name + "'" : "") +
             ", which this HDF5 library cannot decode: install the filter's plugin, or rewrite the file with "
             "h5repack -f NONE)";
  }
  return " (the file is damaged or truncated)";
}

std::vector<double> read_dataset(hid_t file, const std::string& path, const std::string& name,
                                 std::vector<hsize_t>& dims) {
  if (!has_link(file, name)) throw InputError(path + ": missing dataset " + name);
  Hid d = open_dataset(file, path, name);
  if (!d.ok()) throw InputError(path + ": cannot open dataset " + name);
  Hid space(H5Dget_space(d), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) throw InputError(path + ": cannot read the shape of " + name);
  dims.assign(std::size_t(rank), 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  Hid type(H5Dget_type(d), H5Tclose);
  if (H5Tget_class(type) != H5T_FLOAT && H5Tget_class(type) != H5T_INTEGER)
    throw InputError(path + ": dataset " + name + " is not numeric");
  const hsize_t n = count_of(dims);
  const memory::MemoryUse use(path + ": " + name);
  memory::require_memory(n, sizeof(double), path + ": " + name + " of shape " + shape_text(dims));
  std::vector<double> v(n);
  if (n > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw InputError(path + ": cannot read dataset " + name + read_failure(d));
  require_finite_input(v.data(), v.size(), path, name);
  return v;
}

std::vector<double> read_attribute(hid_t obj, const std::string& path, const std::string& where,
                                   const std::string& name, std::size_t expect) {
  if (H5Aexists(obj, name.c_str()) <= 0) throw InputError(path + ": missing attribute '" + name + "' on " + where);
  Hid a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  Hid space(H5Aget_space(a), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n != hssize_t(expect))
    throw InputError(path + ": attribute '" + name + "' on " + where + " must have " + std::to_string(expect) +
                     " value(s), has " + std::to_string(n));
  Hid type(H5Aget_type(a), H5Tclose);
  const H5T_class_t kind = H5Tget_class(type);
  std::vector<double> v(expect);
  // Numbers only: HDF5 would read an enum (h5py's bools) as its members' values.
  if ((kind != H5T_FLOAT && kind != H5T_INTEGER) || H5Aread(a, H5T_NATIVE_DOUBLE, v.data()) < 0)
    throw InputError(path + ": cannot read attribute '" + name + "' on " + where + " as numbers");
  require_finite_input(v.data(), v.size(), path, "attribute '" + name + "' on " + where);
  return v;
}

void write_attribute(hid_t obj, const std::string& name, const std::vector<double>& v) {
  const hsize_t n = v.size();
  Hid space(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  Hid a(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  check(a.ok() ? 0 : -1, "creating attribute " + name);
  check(H5Awrite(a, H5T_NATIVE_DOUBLE, v.data()), "writing attribute " + name);
}

void write_text_attribute(hid_t obj, const std::string& name, const std::string& text) {
  Hid type(H5Tcopy(H5T_C_S1), H5Tclose);
  check(H5Tset_size(type, std::max<std::size_t>(1, text.size())), "typing attribute " + name);
  check(H5Tset_cset(type, H5T_CSET_UTF8), "typing attribute " + name);
  Hid space(H5Screate(H5S_SCALAR), H5Sclose);
  Hid a(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  check(a.ok() ? 0 : -1, "creating attribute " + name);
  std::string padded = text;
  padded.resize(std::max<std::size_t>(1, text.size()), '\0');
  check(H5Awrite(a, type, padded.data()), "writing attribute " + name);
}

void write_attribute_int(hid_t obj, const std::string& name, int64_t v) {
  Hid space(H5Screate(H5S_SCALAR), H5Sclose);
  Hid a(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  check(a.ok() ? 0 : -1, "creating attribute " + name);
  check(H5Awrite(a, H5T_NATIVE_INT64, &v), "writing attribute " + name);
}

void write_dataset(hid_t file, const std::string& name, const std::vector<hsize_t>& dims, hid_t file_type, hid_t mem,
                   const void* data, const std::vector<hsize_t>& chunk) {
  Hid space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl, 1);
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!chunk.empty()) check(H5Pset_chunk(dcpl, int(chunk.size()), chunk.data()), "chunking " + name);
  Hid d(H5Dcreate2(file, name.c_str(), file_type, space, lcpl, dcpl, H5P_DEFAULT), H5Dclose);
  check(d.ok() ? 0 : -1, "creating dataset " + name);
  check(H5Dwrite(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "writing dataset " + name);
}

void write_atomically(const std::string& path, const std::function<void(hid_t)>& fill) {
  safety::Temporary tmp(path);
  try {
    Hid f(H5Fcreate(tmp.path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!f.ok()) throw InputError(path + ": cannot create the output file: " + os_cause(errno));
    fill(f);
    check(H5Fflush(f, H5F_SCOPE_GLOBAL), "writing the file");
    // Closing writes what HDF5 still holds: its failure (a full disk) is the file's failure.
    const hid_t id = f;
    if (H5Fclose(id) < 0) check(-1, "writing the file");
    f.forget();
  } catch (const RuntimeError& e) {  // every failure of a write names the file
    throw RuntimeError(path + ": " + e.what());
  }
  tmp.commit();
}

std::vector<double> wavelet_values(const std::vector<std::vector<float>>& wavelets, const std::string& path) {
  std::vector<double> w;
  for (const std::vector<float>& x : wavelets) w.insert(w.end(), x.begin(), x.end());
  require_finite_output(w.data(), w.size(), path, "/wavelet");
  return w;
}

void write_wavelets(hid_t file, const std::vector<std::vector<float>>& wavelets, const std::vector<double>& w) {
  if (!w.empty())
    write_dataset(file, "/wavelet", {hsize_t(wavelets.size()), hsize_t(wavelets[0].size())}, H5T_IEEE_F32LE,
                  H5T_NATIVE_DOUBLE, w.data());
}

}  // namespace starwave::io::detail
