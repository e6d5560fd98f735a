// src/io/segy_reader.cpp — see segy_reader.hpp.
#include "src/io/segy_reader.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "src/base/error.hpp"
#include "src/safety/inputs.hpp"

namespace starwave::segy::detail {
namespace {

/// Whether `code` is one of SEG-Y's sample format codes (rev 2: 1–12, 15, 16).
bool format_code(std::uint32_t code) { return (code >= 1 && code <= 12) || code == 15 || code == 16; }

/// Whether binary header `bh` (as read, big-endian) is a little-endian file's: its sample
/// format code decides (a code read as is: big-endian; one read byte-swapped: little-endian —
/// no code is another's swap). A file whose rev 2 byte-order word (bytes 3297–3300) says its
/// bytes are swapped in pairs is refused; rev 1 leaves those bytes to vendors, so the word
/// weighs nothing against a code read as is.
bool little_endian(const char* bh, const std::string& path) {
  const auto byte = [&](int at) { return std::uint32_t(static_cast<unsigned char>(bh[at - 3201])); };
  if (format_code(byte(3225) << 8 | byte(3226))) return false;
  const std::uint32_t order = byte(3297) << 24 | byte(3298) << 16 | byte(3299) << 8 | byte(3300);
  if (order == 0x02010403u)
    throw InputError(path + ": byte-order word 0x02010403 (bytes 3297–3300): pairwise-swapped bytes are not read");
  return format_code(byte(3226) << 8 | byte(3225));
}

}  // namespace

int32_t field(const char* header, int which) {
  int32_t v = 0;
  segy_get_field(header, which, &v);
  // The sample count and interval are unsigned 16-bit numbers (rev 2: up to 65535 samples,
  // or µs); segyio reads every 2-byte field as signed.
  if ((which == SEGY_TR_SAMPLE_COUNT || which == SEGY_TR_SAMPLE_INTER) && v < 0) v += 65536;
  return v;
}

int32_t binary_field(const char* header, int which) {
  int32_t v = 0;
  segy_get_bfield(header, which, &v);
  if ((which == SEGY_BIN_SAMPLES || which == SEGY_BIN_INTERVAL) && v < 0) v += 65536;
  return v;
}

void check(int code, const std::string& path, const std::string& what) {
  if (code != SEGY_OK) throw InputError(path + ": " + what + " failed (segyio error " + std::to_string(code) + ")");
}

Reader open_reader(const std::string& path) {
  safety::require_input_file(path);
  {  // a common mistake: one of our own files given for the SEG-Y one
    std::ifstream probe(path, std::ios::binary);
    char magic[8] = {};
    if (probe.read(magic, 8) && std::memcmp(magic, "\x89HDF\r\n\x1a\n", 8) == 0)
      throw InputError(path + ": an HDF5 file, not a SEG-Y file");
  }
  Reader r;
  r.fp.reset(segy_open(path.c_str(), "rb"));
  if (!r.fp) throw InputError(path + ": cannot open the SEG-Y file (" + os_cause(errno) + ")");
  std::array<char, SEGY_BINARY_HEADER_SIZE> bh{};
  if (segy_binheader(r.fp.get(), bh.data()) != SEGY_OK)
    throw InputError(path + ": not a SEG-Y file (no 3600-byte header)");
  // A little-endian file (SEG-Y rev 2 allows them; Seismic Unix writes them): its sample format
  // code reads byte-swapped.
  const bool little = little_endian(bh.data(), path);
  if (little) {  // segyio then hands every header and sample over big-endian
    check(segy_set_format(r.fp.get(), SEGY_LSB), path, "setting the byte order");
    if (segy_binheader(r.fp.get(), bh.data()) != SEGY_OK)
      throw InputError(path + ": not a SEG-Y file (no 3600-byte header)");
  }
  r.format = segy_format(bh.data());
  if (r.format == 0)
    throw InputError(path +
                     ": not a SEG-Y file, or one without its sample format (binary header bytes 3225–3226 "
                     "are 0)");
  if (r.format != SEGY_IBM_FLOAT_4_BYTE && r.format != SEGY_IEEE_FLOAT_4_BYTE)
    throw InputError(path + ": sample format code " + std::to_string(r.format) +
                     " in the binary header (bytes 3225–3226): only 1 (IBM float) and 5 (IEEE float) are read");
  r.feet = binary_field(bh.data(), SEGY_BIN_MEASUREMENT_SYSTEM) == 2;
  r.trace0 = segy_trace0(bh.data());
  if (r.trace0 < SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE) {
    const int extended = binary_field(bh.data(), SEGY_BIN_EXT_HEADERS);
    throw InputError(path + ": the extended textual header count (binary header bytes 3505–3506) is " +
                     std::to_string(extended) +
                     (extended == -1 ? "; a count to be found by reading the headers (−1) is not read: give the "
                                       "number of extended headers"
                                     : ": not a count"));
  }
  check(segy_set_format(r.fp.get(), r.format | (little ? SEGY_LSB : 0)), path, "setting the sample format");
  const int32_t bin_nt = binary_field(bh.data(), SEGY_BIN_SAMPLES);
  r.bin_interval = binary_field(bh.data(), SEGY_BIN_INTERVAL);

  // The first trace header fixes nt (every trace must agree: fixed-length traces).
  std::array<char, SEGY_TRACE_HEADER_SIZE> h{};
  r.nt = bin_nt;
  {
    const int probe = segy_trsize(r.format, 1);
    if (segy_traceheader(r.fp.get(), 0, h.data(), r.trace0, probe) != SEGY_OK)
      throw InputError(path + ": no traces after the headers");
    if (field(h.data(), SEGY_TR_SAMPLE_COUNT) > 0) r.nt = field(h.data(), SEGY_TR_SAMPLE_COUNT);
  }
  if (r.nt < 2)
    throw InputError(path + ": no usable sample count (trace header bytes 115–116 and binary header bytes 3221–3222 " +
                     "give " + std::to_string(r.nt) + "; a trace needs at least 2 samples)");
  r.bsize = segy_trsize(r.format, r.nt);
  // The trace count in 64 bits (segyio's own count aborts past 2^31 − 1 traces).
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const long long body = ec ? -1 : (long long)size - r.trace0, step = SEGY_TRACE_HEADER_SIZE + r.bsize;
  if (body < step || body % step != 0)
    throw InputError(
        path + ": the file's size is not a whole number of traces of " + std::to_string(r.nt) + " samples" +
        (binary_field(bh.data(), SEGY_BIN_TRACE_FLAG) == 0 && binary_field(bh.data(), SEGY_BIN_SEGY_REVISION) >= 0x0100
             ? " (truncated, or holding traces of other lengths — its binary header, bytes 3503–3504, allows "
               "them — which are not read)"
             : ""));
  if (body / step > std::numeric_limits<int>::max())
    throw InputError(path + ": " + std::to_string(body / step) + " traces, more than the 2^31 − 1 read");
  r.count = int(body / step);
  return r;
}

void read_header(Reader& r, const std::string& path, int i, std::array<char, SEGY_TRACE_HEADER_SIZE>& h) {
  check(segy_traceheader(r.fp.get(), i, h.data(), r.trace0, r.bsize), path,
        "reading trace header " + std::to_string(i + 1));
  const int tn = field(h.data(), SEGY_TR_SAMPLE_COUNT);
  if (tn != 0 && tn != r.nt)
    throw InputError(path + ": trace " + std::to_string(i + 1) + ": " + std::to_string(tn) +
                     " samples, the first trace " + std::to_string(r.nt));
}

void read_samples(Reader& r, const std::string& path, int i, float* samples) {
  check(segy_readtrace(r.fp.get(), i, samples, r.trace0, r.bsize), path, "reading trace " + std::to_string(i + 1));
  check(segy_to_native(r.format, r.nt, samples), path, "converting trace " + std::to_string(i + 1));
  for (int k = 0; k < r.nt; ++k)
    if (!std::isfinite(samples[k]))
      throw InputError(path + ": trace " + std::to_string(i + 1) +
                       ": a sample is NaN, Inf or beyond a 32-bit float's "
                       "range");
}

}  // namespace starwave::segy::detail
