// src/io/hdf5_detail.hpp — the HDF5 C API made safe for src/io/hdf5.cpp: owned handles,
// calls whose failure names what failed (and the system's cause), finite-value checks and
// atomic whole-file writes. Not for use outside src/io/.
#pragma once

#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/base/error.hpp"

namespace starwave::io::detail {

/// Owns an hid_t and closes it with the matching H5*close.
class Hid {
 public:
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  Hid(Hid&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  Hid& operator=(Hid&&) = delete;
  operator hid_t() const { return id_; }
  bool ok() const { return id_ >= 0; }
  /// Gives up ownership (after the id was closed by hand).
  void forget() { id_ = -1; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// The operating system's words for the failure at the bottom of HDF5's error stack
/// (its file driver records "errno = N"), or "" when the failure was not the system's.
std::string hdf5_os_cause();

/// A failed HDF5 call: "WHAT: <the system's cause>" or "WHAT failed in HDF5".
void check(herr_t e, const std::string& what);

/// The first value of v[0, n) that is NaN or infinite (n when every one is finite), and
/// the word for it.
template <typename T>
std::size_t first_non_finite(const T* v, std::size_t n, const char** word) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) {
      *word = std::isnan(v[i]) ? "NaN" : "Inf";
      return i;
    }
  return n;
}

/// Refuses a non-finite input value, naming the file, the dataset and the first place.
template <typename T>
void require_finite_input(const T* v, std::size_t n, const std::string& path, const std::string& name) {
  const char* word = "";
  const std::size_t i = first_non_finite(v, n, &word);
  if (i < n)
    throw InputError(path + ": " + name + " holds " + word + " (value " + std::to_string(i) + " of " +
                     std::to_string(n) + "); every value must be finite");
}

/// A result that is not finite is an error, never a file: the run went unstable.
template <typename T>
void require_finite_output(const T* v, std::size_t n, const std::string& path, const std::string& name) {
  const char* word = "";
  if (first_non_finite(v, n, &word) < n)
    throw RuntimeError(path + ": the result " + name + " holds " + word +
                       ", so it was not written (the computation went unstable: check dt, the velocities and "
                       "the wavelet)");
}

/// A file of 3600 bytes or more whose binary header holds a SEG-Y sample format code
/// (bytes 3225–3226, big-endian: 1, 2, 3, 5, 8), or named .sgy/.segy.
bool looks_like_segy(const std::string& path);

/// The input file `path`, opened read-only: refused (InputError naming it and the cause) when
/// it is no HDF5 file, or one HDF5 will not open (locked or marked open by a writer).
Hid open_file(const std::string& path);

/// Whether `name` ("/a/b") exists in `file`; a path that crosses an external link is refused
/// (InputError), as open_dataset() refuses one.
bool has_link(hid_t file, const std::string& name);

/// Dataset `name` of input `file` (`path`: its name for messages), or an invalid Hid when HDF5
/// cannot open it. What the file itself does not hold is refused (InputError): a dataset
/// reached through an external link, with its values in external raw files, or a virtual
/// dataset over other files — starwave pins each input against change while it runs
/// (docs/guarantees.md), which it cannot do for files reached that way, and a missing or
/// short one would read as fill values.
Hid open_dataset(hid_t file, const std::string& path, const std::string& name);

std::string shape_text(const std::vector<hsize_t>& dims);

/// The number of elements of an array of shape `dims`, saturating instead of overflowing
/// (a saturated count is then refused as too big for memory).
hsize_t count_of(const std::vector<hsize_t>& dims);

/// Why reading dataset `d` failed, for a message: a compression filter this HDF5 cannot
/// decode (its plugin missing), else a damaged or truncated file.
std::string read_failure(hid_t d);

/// Reads dataset `name` as doubles and returns its dimensions.
std::vector<double> read_dataset(hid_t file, const std::string& path, const std::string& name,
                                 std::vector<hsize_t>& dims);

std::vector<double> read_attribute(hid_t obj, const std::string& path, const std::string& where,
                                   const std::string& name, std::size_t expect);

void write_attribute(hid_t obj, const std::string& name, const std::vector<double>& v);

/// A text attribute (fixed-length UTF-8 string), readable as a string by h5py and h5dump.
void write_text_attribute(hid_t obj, const std::string& name, const std::string& text);

void write_attribute_int(hid_t obj, const std::string& name, int64_t v);

/// Writes `data` (native type `mem`, file type `file_type`) as dataset `name`.
void write_dataset(hid_t file, const std::string& name, const std::vector<hsize_t>& dims, hid_t file_type, hid_t mem,
                   const void* data, const std::vector<hsize_t>& chunk = {});

/// Estimated wavelets (count × nt) as one array, checked finite (an output's /wavelet).
std::vector<double> wavelet_values(const std::vector<std::vector<float>>& wavelets, const std::string& path);
/// /wavelet (count × nt float32) from wavelet_values' `w`; nothing when it is empty.
void write_wavelets(hid_t file, const std::vector<std::vector<float>>& wavelets, const std::vector<double>& w);

/// Writes a file atomically: `fill` writes into a temporary file beside `path`, which is
/// renamed over `path` only when everything succeeded.
void write_atomically(const std::string& path, const std::function<void(hid_t)>& fill);

}  // namespace starwave::io::detail
