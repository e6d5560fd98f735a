// src/io/segy_reader.hpp — the SEG-Y reading shared by shot records and fields (internal to
// src/io: segy.cpp): an open file of fixed-length traces, its headers checked, its samples as
// finite native floats, big- or little-endian.
#pragma once

#include <segyio/segy.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace starwave::segy::detail {

struct Closer {
  void operator()(segy_file* f) const { segy_close(f); }
};
using File = std::unique_ptr<segy_file, Closer>;

/// What a header scalar means: × s when positive, ÷ −s when negative, 1 when 0.
inline double scale_of(int32_t s) { return s > 0 ? double(s) : s < 0 ? 1.0 / double(-s) : 1.0; }

/// A trace header field; the sample count and interval unsigned (rev 2: up to 65535 samples,
/// or µs; segyio reads every 2-byte field as signed).
int32_t field(const char* header, int which);

/// A binary header field; the sample count and interval unsigned, as in field().
int32_t binary_field(const char* header, int which);

/// InputError naming `path` and `what` unless `code` is SEGY_OK.
void check(int code, const std::string& path, const std::string& what);

/// An open SEG-Y file of fixed-length traces, its headers checked: `count` traces of `nt`
/// samples in `format` (IBM or IEEE floats), the first at byte `trace0`, each a 240-byte
/// header and `bsize` bytes of samples; `feet` when its binary header says its lengths are
/// in feet (bytes 3255–3256 = 2).
struct Reader {
  File fp;
  int format = 0, nt = 0, bsize = 0, count = 0;
  int32_t bin_interval = 0;
  long trace0 = 0;
  bool feet = false;
};

/// Metres in one of the file's length units.
inline double metres_per_unit(const Reader& r) { return r.feet ? 0.3048 : 1.0; }

/// `path` opened and its headers checked (InputError naming it and what is wrong).
Reader open_reader(const std::string& path);

/// Trace i's header into `h`, its sample count checked against the first trace's.
void read_header(Reader& r, const std::string& path, int i, std::array<char, SEGY_TRACE_HEADER_SIZE>& h);

/// Trace i's nt samples as native floats, every one finite.
void read_samples(Reader& r, const std::string& path, int i, float* samples);

}  // namespace starwave::segy::detail
