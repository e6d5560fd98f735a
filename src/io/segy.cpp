// src/io/segy.cpp — SEG-Y shot records and fields through segyio (src/io/segy.hpp).
#include "src/io/segy.hpp"

#include <segyio/segy.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/io/segy_reader.hpp"
#include "src/safety/inputs.hpp"
#include "src/safety/outputs.hpp"

namespace starwave::segy {
namespace {

using namespace detail;  // the reader (segy_reader.hpp)

/// The largest magnitude a scaled coordinate may have in a 32-bit header field.
constexpr double kHeaderMax = 2.1e9;

/// The scalar (1, −10, …, −10000) that writes every value of `v` exactly as an int32;
/// where none does, the finest one under which every value fits (rounded to it: UTM
/// coordinates with a fraction of a millimetre); InputError naming `path` where even 1 m
/// units overflow.
int32_t scalar_for(const std::vector<double>& v, const std::string& path) {
  constexpr int32_t kScalars[] = {1, -10, -100, -1000, -10000};
  auto factor = [](int32_t s) { return s == 1 ? 1.0 : double(-s); };
  for (int32_t s : kScalars) {
    const double k = factor(s);
    const bool exact = std::all_of(v.begin(), v.end(), [&](double x) {
      const double y = x * k;
      return std::abs(y) < kHeaderMax && std::nearbyint(y) == y && double(std::nearbyint(y)) / k == x;
    });
    if (exact) return s;
  }
  double most = 0;
  for (double x : v) most = std::max(most, std::abs(x));
  for (auto it = std::rbegin(kScalars); it != std::rend(kScalars); ++it)
    if (std::abs(std::nearbyint(most * factor(*it))) < kHeaderMax) return *it;
  std::ostringstream os;
  os << path << ": a coordinate of " << most << " m does not fit a SEG-Y header (at most " << kHeaderMax << " m)";
  throw InputError(os.str());
}

/// The largest sample count or interval a trace holds (rev 2's unsigned 16-bit fields; a
/// file that uses more than 32767 says it is rev 2). segyio keeps a value's low 16 bits.
constexpr int kMaxU16 = 65535;

int32_t scaled(double x, int32_t s) { return int32_t(std::nearbyint(x * (s == 1 ? 1.0 : double(-s)))); }

/// A fresh SEG-Y rev 1 file (rev 2 past 32767 samples or µs), lengths in metres, with `traces` IEEE-float traces of
/// `nt` samples at `interval` (the binary header's sample interval field), its first traces written by `write(fp,
/// trace0, bsize)`; committed over `path` only when everything is written.
template <typename F>
void write_file(const std::string& path, int nt, long traces, int interval, const std::string& text, F&& write) {
  if (nt < 1 || nt > kMaxU16)
    throw InputError(path + ": SEG-Y holds at most 65535 samples a trace, not " + std::to_string(nt));
  // Measured before writing, like import's /data: not a failed write deep into the file.
  safety::require_disk(path,
                       std::uint64_t(SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE) +
                           std::uint64_t(traces) * std::uint64_t(SEGY_TRACE_HEADER_SIZE + 4 * nt),
                       "the SEG-Y file");
  safety::Temporary tmp(path);
  const bool rev2 = nt > 32767 || interval > 32767;  // rev 2 holds them unsigned
  {
    File fp(segy_open(tmp.path().c_str(), "w+b"));
    if (!fp) throw InputError(path + ": cannot create the SEG-Y file (" + os_cause(errno) + ")");
    std::array<char, SEGY_TEXT_HEADER_SIZE + 1> th{};
    std::fill(th.begin(), th.end() - 1, ' ');
    for (std::size_t line = 0; line < 40; ++line) {  // 40 card images of 80 columns
      const std::string card = "C" + std::string(line + 1 < 10 ? " " : "") + std::to_string(line + 1) + " " +
                               (line == 0   ? text
                                : line == 1 ? std::string("written by starwave (SEG-Y rev ") + (rev2 ? "2)" : "1)")
                                            : "");
      std::memcpy(th.data() + line * 80, card.data(), std::min<std::size_t>(card.size(), 80));
    }
    check(segy_write_textheader(fp.get(), 0, th.data()), path, "writing the text header");
    std::array<char, SEGY_BINARY_HEADER_SIZE> bh{};
    segy_set_bfield(bh.data(), SEGY_BIN_INTERVAL, interval);
    segy_set_bfield(bh.data(), SEGY_BIN_SAMPLES, nt);
    segy_set_bfield(bh.data(), SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
    segy_set_bfield(bh.data(), SEGY_BIN_MEASUREMENT_SYSTEM, 1);  // metres
    segy_set_bfield(bh.data(), SEGY_BIN_SEGY_REVISION, rev2 ? 0x0200 : 0x0100);
    if (rev2) {  // rev 2's byte-order word (bytes 3297–3300): 16909060 as this file's bytes hold it
      const char order[4] = {1, 2, 3, 4};
      std::memcpy(bh.data() + (3297 - 3201), order, sizeof order);
    }
    segy_set_bfield(bh.data(), SEGY_BIN_TRACE_FLAG, 1);  // fixed-length traces
    check(segy_write_binheader(fp.get(), bh.data()), path, "writing the binary header");
    check(segy_set_format(fp.get(), SEGY_IEEE_FLOAT_4_BYTE), path, "setting the sample format");
    write(fp.get(), long(SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE), segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, nt));
    check(segy_flush(fp.get(), false), path, "writing");
  }
  tmp.commit();
}

/// Writes trace `i`: its header and `samples` (native floats, converted in place).
void put_trace(segy_file* fp, const std::string& path, int i, std::array<char, SEGY_TRACE_HEADER_SIZE>& h,
               std::vector<float>& samples, long trace0, int bsize) {
  check(segy_write_traceheader(fp, i, h.data(), trace0, bsize), path, "writing trace header " + std::to_string(i + 1));
  check(segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, static_cast<long long>(samples.size()), samples.data()), path,
        "converting");
  check(segy_writetrace(fp, i, samples.data(), trace0, bsize), path, "writing trace " + std::to_string(i + 1));
}

/// A trace whose coordinates are geographic (trace header bytes 89–90: 2 arc-seconds, 3
/// degrees, 4 DMS; 0 unset and 1 lengths are read as lengths) refused, `where` naming it.
void refuse_geographic(const char* header, const std::string& where) {
  const int units = field(header, SEGY_TR_COORD_UNITS);
  if (units > 1)
    throw InputError(where + ": coordinate units " + std::to_string(units) +
                     " (trace header bytes 89–90): geographic coordinates; starwave places points by lengths (1)");
}

/// Shots of different trace counts: each padded to the longest with copies of its last
/// receiver (zero traces), its count recorded (docs/design.md §4 /receiver/count); dead
/// traces (and the padding) weighted 0. `s.data` holds the shots' traces one after another.
void pad_shots(std::vector<std::vector<Position>>& receivers, const std::vector<bool>& dead, Survey& s) {
  const std::size_t nt = std::size_t(s.nt);
  std::size_t nrec = 0;
  for (const auto& r : receivers) nrec = std::max(nrec, r.size());
  std::vector<float> data, weights;
  bool ragged = false, any_dead = false;
  std::size_t first = 0;
  for (std::size_t k = 0; k < receivers.size(); ++k) {
    const std::size_t n = receivers[k].size();
    ragged = ragged || n != nrec;
    s.counts.push_back(int64_t(n));
    data.insert(data.end(), s.data.begin() + long(first * nt), s.data.begin() + long((first + n) * nt));
    data.resize(data.size() + (nrec - n) * nt, 0.0f);
    for (std::size_t r = 0; r < nrec; ++r) {
      const bool off = r < n && dead[first + r];
      any_dead = any_dead || off;
      weights.push_back(r < n && !off ? 1.0f : 0.0f);
    }
    std::size_t live = n;  // the padding: copies of the last live receiver (a dead one may be junk)
    while (live > 1 && dead[first + live - 1]) --live;
    receivers[k].resize(nrec, receivers[k][live - 1]);
    first += n;
  }
  s.data = std::move(data);
  if (!ragged) s.counts.clear();
  if (any_dead) s.weights = std::move(weights);
}

/// The survey's dimension: `dim` (0: 3 when a source or receiver is off the first source's
/// line, else 2); in 2-D every y dropped, and an areal survey refused.
void settle_dimension(const std::string& path, int dim, std::vector<std::vector<Position>>& receivers, Survey& s) {
  const double y = s.sources[0].y;
  auto off_line = [&](const Position& p) { return p.y != y; };
  bool areal = std::any_of(s.sources.begin(), s.sources.end(), off_line);
  const std::size_t nrec = receivers.empty() ? 0 : receivers[0].size();
  for (std::size_t k = 0; k < receivers.size(); ++k)  // dead traces (weight 0) may carry junk coordinates
    for (std::size_t r = 0; r < receivers[k].size(); ++r)
      areal = areal || ((s.weights.empty() || s.weights[k * nrec + r] != 0) && off_line(receivers[k][r]));
  if (dim == 0) s.dim = dim = areal ? 3 : 2;
  if (dim == 2) {  // one line: y the same everywhere, then dropped
    if (areal)
      throw InputError(path +
                       ": sources and receivers are not on one line (their y differ): a 2-D model needs "
                       "one line; give a 3-D model for an areal survey");
    for (auto& p : s.sources) p.y = 0;
    for (auto& r : receivers)
      for (auto& p : r) p.y = 0;
  }
}

}  // namespace

Survey read_shots(const std::string& path, int dim) {
  Reader rd = open_reader(path);
  const int nt = rd.nt, count = rd.count;
  const int32_t bin_interval = rd.bin_interval;
  std::array<char, SEGY_TRACE_HEADER_SIZE> h{};
  Survey s;
  s.dim = dim;
  s.nt = nt;
  std::vector<std::vector<Position>> receivers;
  std::vector<int32_t> records;
  std::vector<bool> dead;  // TraceIdentificationCode 2, trace by trace
  std::vector<float> trace(static_cast<std::size_t>(nt));
  double dt = 0;
  for (int i = 0; i < count; ++i) {
    const std::string where = path + ": trace " + std::to_string(i + 1);
    read_header(rd, path, i, h);
    const int us = field(h.data(), SEGY_TR_SAMPLE_INTER) > 0 ? field(h.data(), SEGY_TR_SAMPLE_INTER) : bin_interval;
    if (us <= 0)
      throw InputError(where + ": no usable sample interval (trace header bytes 117–118 and binary header bytes " +
                       "3217–3218 give " + std::to_string(us) + " µs)");
    if (dt == 0) dt = us / 1e6;  // the double nearest the interval (us·1e-6 misses it for 30 % of them)
    if (us / 1e6 != dt)
      throw InputError(where + ": sample interval " + std::to_string(us) + " µs differs from the first trace's");
    refuse_geographic(h.data(), where);
    const double xy = metres_per_unit(rd) * scale_of(field(h.data(), SEGY_TR_SOURCE_GROUP_SCALAR));
    const double el = metres_per_unit(rd) * scale_of(field(h.data(), SEGY_TR_ELEV_SCALAR));
    const Position src(
        el * (double(field(h.data(), SEGY_TR_SOURCE_DEPTH)) - double(field(h.data(), SEGY_TR_SOURCE_SURF_ELEV))),
        xy * field(h.data(), SEGY_TR_SOURCE_Y), xy * field(h.data(), SEGY_TR_SOURCE_X));
    const Position rec(-el * field(h.data(), SEGY_TR_RECV_GROUP_ELEV), xy * field(h.data(), SEGY_TR_GROUP_Y),
                       xy * field(h.data(), SEGY_TR_GROUP_X));
    const int32_t record = field(h.data(), SEGY_TR_FIELD_RECORD);
    if (record == 0)
      throw InputError(where +
                       ": no FieldRecord (trace header bytes 9–12 are 0): not a shot record (the shots "
                       "are told apart by it)");
    if (records.empty() || record != records.back()) {
      if (std::find(records.begin(), records.end(), record) != records.end())
        throw InputError(where + ": FieldRecord " + std::to_string(record) +
                         " again after other records (a shot's traces must be together)");
      records.push_back(record);
      s.sources.push_back(src);
      receivers.emplace_back();
    } else if (!(src == s.sources.back())) {
      throw InputError(where + ": its source position differs from the rest of FieldRecord " + std::to_string(record) +
                       "'s");
    }
    receivers.back().push_back(rec);
    dead.push_back(field(h.data(), SEGY_TR_TRACE_ID) == 2);
    read_samples(rd, path, i, trace.data());
    s.data.insert(s.data.end(), trace.begin(), trace.end());
  }
  pad_shots(receivers, dead, s);
  settle_dimension(path, dim, receivers, s);
  s.dt = dt;
  const bool shared = std::all_of(receivers.begin(), receivers.end(), [&](const auto& r) { return r == receivers[0]; });
  if (shared) receivers.resize(1);
  s.receivers = std::move(receivers);
  return s;
}

void write_shots(const std::string& path, const Survey& s) {
  // A dt within rounding of whole microseconds is written as them (k·1e-4 s is not the
  // double nearest k·100 µs, and files made before that was fixed carry it).
  const double us = std::nearbyint(s.dt * 1e6);
  if (!(std::abs(s.dt * 1e6 - us) <= 1e-9 * us && us >= 1 && us <= kMaxU16))
    throw InputError(path + ": cannot hold the data's dt = " + number_text(s.dt) +
                     " s: SEG-Y stores the sample interval as a whole number of microseconds up to 65535");
  for (float w : s.weights)
    if (w != 0 && w != 1)
      throw InputError(path +
                       ": /receiver/weight holds weights other than 0 and 1, which SEG-Y cannot carry (only "
                       "dead traces, TraceIdentificationCode 2)");
  std::vector<double> xy, z;
  for (int shot = 0; shot < s.nshots(); ++shot) {
    xy.push_back(s.sources[std::size_t(shot)].x);
    xy.push_back(s.sources[std::size_t(shot)].y);
    z.push_back(s.sources[std::size_t(shot)].z);
    for (const auto& r : s.receivers_of(shot)) {
      xy.push_back(r.x);
      xy.push_back(r.y);
      z.push_back(r.z);
    }
  }
  const int32_t sxy = scalar_for(xy, path), sz = scalar_for(z, path);
  const int nt = int(s.nt);
  long traces = 0;
  for (int shot = 0; shot < s.nshots(); ++shot) traces += s.count(shot);
  write_file(
      path, nt, traces, int(us),
      "shot records: " + std::to_string(s.nshots()) + " shots x " + std::to_string(s.nrec()) + " receivers x " +
          std::to_string(nt) + " samples",
      [&](segy_file* fp, long trace0, int bsize) {
        std::array<char, SEGY_TRACE_HEADER_SIZE> h{};
        std::vector<float> samples(std::size_t(s.nt));
        int i = 0;
        for (int shot = 0; shot < s.nshots(); ++shot) {
          const Position& src = s.sources[std::size_t(shot)];
          const float* d = s.observed(shot);
          if (!d) throw InputError(path + ": shot " + std::to_string(shot) + " has no data to export");
          const auto& rec = s.receivers_of(shot);
          const std::vector<float> w = s.trace_weights(shot);
          for (std::size_t r = 0; r < std::size_t(s.count(shot)); ++r, ++i) {
            h.fill(0);
            segy_set_field(h.data(), SEGY_TR_SEQ_LINE, i + 1);
            segy_set_field(h.data(), SEGY_TR_SEQ_FILE, i + 1);
            segy_set_field(h.data(), SEGY_TR_FIELD_RECORD, shot + 1);
            segy_set_field(h.data(), SEGY_TR_NUMBER_ORIG_FIELD, int(r) + 1);
            segy_set_field(h.data(), SEGY_TR_TRACE_ID, w[r] == 0 ? 2 : 1);  // dead or live seismic data
            const double offset = std::nearbyint(std::hypot(rec[r].x - src.x, rec[r].y - src.y));
            if (!(offset < kHeaderMax))
              throw InputError(path + ": an offset of " + number_text(offset) + " m does not fit a SEG-Y header");
            segy_set_field(h.data(), SEGY_TR_OFFSET, int32_t(offset));
            segy_set_field(h.data(), SEGY_TR_ELEV_SCALAR, sz);
            segy_set_field(h.data(), SEGY_TR_SOURCE_GROUP_SCALAR, sxy);
            segy_set_field(h.data(), SEGY_TR_RECV_GROUP_ELEV, scaled(-rec[r].z, sz));
            segy_set_field(h.data(), SEGY_TR_SOURCE_SURF_ELEV, 0);
            segy_set_field(h.data(), SEGY_TR_SOURCE_DEPTH, scaled(src.z, sz));
            segy_set_field(h.data(), SEGY_TR_SOURCE_X, scaled(src.x, sxy));
            segy_set_field(h.data(), SEGY_TR_SOURCE_Y, scaled(src.y, sxy));
            segy_set_field(h.data(), SEGY_TR_GROUP_X, scaled(rec[r].x, sxy));
            segy_set_field(h.data(), SEGY_TR_GROUP_Y, scaled(rec[r].y, sxy));
            segy_set_field(h.data(), SEGY_TR_COORD_UNITS, 1);  // length (m)
            segy_set_field(h.data(), SEGY_TR_SAMPLE_COUNT, nt);
            segy_set_field(h.data(), SEGY_TR_SAMPLE_INTER, int(us));
            std::copy(d + r * std::size_t(nt), d + (r + 1) * std::size_t(nt), samples.begin());
            put_trace(fp, path, i, h, samples, trace0, bsize);
          }
        }
      });
}

void write_field(const std::string& path, const Model& m, const std::vector<double>& values) {
  const double mm = m.dz * 1000;
  if (!(std::nearbyint(mm) == mm && mm >= 1 && mm <= kMaxU16))
    throw InputError(path + ": dz = " + number_text(m.dz) +
                     " m is not a whole number of millimetres up to 65535: the sample interval field cannot hold it");
  std::vector<double> xy;
  for (int y = 0; y < m.ny; ++y) xy.push_back(m.y0 + y * m.dy);
  for (int x = 0; x < m.nx; ++x) xy.push_back(m.x0 + x * m.dx);
  for (double v : values)
    if (!std::isfinite(v)) throw InputError(path + ": the field holds NaN or Inf: not written");
  const int32_t sxy = scalar_for(xy, path);
  write_file(path, m.nz, long(m.ny) * m.nx, int(mm),
             "a field of (nz, ny, nx) = (" + std::to_string(m.nz) + ", " + std::to_string(m.ny) + ", " +
                 std::to_string(m.nx) + "), one trace per column",
             [&](segy_file* fp, long trace0, int bsize) {
               std::array<char, SEGY_TRACE_HEADER_SIZE> h{};
               std::vector<float> samples(std::size_t(m.nz));
               int i = 0;
               for (int y = 0; y < m.ny; ++y)
                 for (int x = 0; x < m.nx; ++x, ++i) {
                   h.fill(0);
                   segy_set_field(h.data(), SEGY_TR_SEQ_LINE, i + 1);
                   segy_set_field(h.data(), SEGY_TR_SEQ_FILE, i + 1);
                   segy_set_field(h.data(), SEGY_TR_TRACE_ID, 1);
                   segy_set_field(h.data(), SEGY_TR_SOURCE_GROUP_SCALAR, sxy);
                   segy_set_field(h.data(), SEGY_TR_CDP_X, scaled(m.x0 + x * m.dx, sxy));
                   segy_set_field(h.data(), SEGY_TR_CDP_Y, scaled(m.y0 + y * m.dy, sxy));
                   segy_set_field(h.data(), SEGY_TR_INLINE, y + 1);
                   segy_set_field(h.data(), SEGY_TR_CROSSLINE, x + 1);
                   segy_set_field(h.data(), SEGY_TR_SAMPLE_COUNT, m.nz);
                   segy_set_field(h.data(), SEGY_TR_SAMPLE_INTER, int(mm));
                   for (int z = 0; z < m.nz; ++z) samples[std::size_t(z)] = float(values[m.index(z, y, x)]);
                   put_trace(fp, path, i, h, samples, trace0, bsize);
                 }
             });
}

namespace {

/// What a velocity field's trace headers say, trace by trace.
struct FieldHeaders {
  std::string path;
  std::vector<int32_t> inline_no, crossline_no, interval;
  std::vector<double> cdp_x, cdp_y, unit;
  std::string trace_text(std::size_t k) const {
    return path + ": trace " + std::to_string(k + 1) + " (inline " + std::to_string(inline_no[k]) + ", crossline " +
           std::to_string(crossline_no[k]) + ")";
  }
};

FieldHeaders read_field_headers(Reader& rd, const std::string& path) {
  const std::size_t n = std::size_t(rd.count);
  FieldHeaders f{path,
                 std::vector<int32_t>(n, 0),
                 std::vector<int32_t>(n, 0),
                 std::vector<int32_t>(n, 0),
                 std::vector<double>(n, 0),
                 std::vector<double>(n, 0),
                 std::vector<double>(n, 1)};
  std::array<char, SEGY_TRACE_HEADER_SIZE> h{};
  for (std::size_t k = 0; k < n; ++k) {
    read_header(rd, path, int(k), h);
    f.inline_no[k] = field(h.data(), SEGY_TR_INLINE);
    f.crossline_no[k] = field(h.data(), SEGY_TR_CROSSLINE);
    refuse_geographic(h.data(), path + ": trace " + std::to_string(k + 1));
    f.unit[k] = metres_per_unit(rd) * scale_of(field(h.data(), SEGY_TR_SOURCE_GROUP_SCALAR));
    f.cdp_x[k] = f.unit[k] * field(h.data(), SEGY_TR_CDP_X);
    f.cdp_y[k] = f.unit[k] * field(h.data(), SEGY_TR_CDP_Y);
    f.interval[k] = field(h.data(), SEGY_TR_SAMPLE_INTER) > 0 ? field(h.data(), SEGY_TR_SAMPLE_INTER) : rd.bin_interval;
  }
  return f;
}

/// The field's lines into `m` (dim, nx, ny): 2-D when every trace has the first's inline
/// number; else whole lines, inline numbers strictly monotonic, each with the first line's
/// crosslines (refused otherwise).
void field_lines(const FieldHeaders& f, Model& m) {
  const int n = int(f.inline_no.size());
  const auto& inline_no = f.inline_no;
  const auto& crossline_no = f.crossline_no;
  const bool three = std::any_of(inline_no.begin(), inline_no.end(), [&](int32_t v) { return v != inline_no[0]; });
  m.dim = three ? 3 : 2;
  m.nx = n;
  if (!three) return;
  m.nx = 1;
  while (m.nx < n && inline_no[std::size_t(m.nx)] == inline_no[0]) ++m.nx;
  if (m.nx == 1)
    throw InputError(f.path + ": every trace has an inline number (bytes 189–192) of its own: a 3-D field's lines " +
                     "hold several crosslines each (a 2-D one: give every trace the same inline number)");
  m.ny = n / m.nx;
  const std::size_t w = std::size_t(m.nx);
  const bool up = inline_no[std::min(w, std::size_t(n - 1))] > inline_no[0], xup = crossline_no[1] > crossline_no[0];
  for (std::size_t k = 0; k < std::size_t(n); ++k) {
    const std::size_t line = k / w, x = k % w, first = line * w;
    const bool monotonic =
        line == 0 || (up ? inline_no[first] > inline_no[first - 1] : inline_no[first] < inline_no[first - 1]);
    const bool distinct =
        line > 0 || x == 0 || (xup ? crossline_no[x] > crossline_no[x - 1] : crossline_no[x] < crossline_no[x - 1]);
    if (!(first + w <= std::size_t(n) && inline_no[k] == inline_no[first] && monotonic && distinct &&
          crossline_no[k] == crossline_no[x]))
      throw InputError(f.trace_text(k) + ": the traces do not form lines of " + std::to_string(m.nx) +
                       " (the first line's length) one after another, inline numbers (bytes 189–192) rising "
                       "or falling line by line, each line with the first line's crossline numbers (193–196), "
                       "rising or falling");
  }
}

/// The grid's spacing from the headers into `m`: dz from the sample interval (mm), dx and dy
/// from the CDP coordinates — one grid: CDP_X = x0 + x·dx on every line, CDP_Y = y0 + y·dy
/// along every line (2-D: the same everywhere), the steps from the first line's (column's)
/// ends; a coordinate within one unit of its scalar of the grid (a writer may have rounded them).
void field_spacing(const FieldHeaders& f, Model& m) {
  const std::size_t n = f.interval.size();
  const bool three = m.dim == 3;
  for (std::size_t k = 0; k < n; ++k) {
    if (f.interval[k] <= 0)
      throw InputError(f.trace_text(k) +
                       ": no sample interval (trace header bytes 117–118 and binary header bytes 3217–3218 are "
                       "0), which holds dz in mm: give the grid's spacing with --spacing");
    if (f.interval[k] != f.interval[0])
      throw InputError(f.trace_text(k) + ": sample interval " + std::to_string(f.interval[k]) +
                       " (dz in mm) differs from the first trace's");
  }
  m.dz = f.interval[0] / 1000.0;
  auto step = [&](const std::vector<double>& c, const char* name, int count, std::size_t stride) {
    if (count < 2)
      throw InputError(f.path + ": " + (stride == 1 ? "one trace a line" : "one line") +
                       ", so no spacing to read from the headers: give it with --spacing");
    const double d = (c[std::size_t(count - 1) * stride] - c[0]) / (count - 1);
    if (d <= 0)
      throw InputError(f.path + ": " + name + " does not increase " + (stride == 1 ? "along a line" : "line by line") +
                       ": give the grid's spacing with --spacing");
    return d;
  };
  m.dx = step(f.cdp_x, "CDP_X (bytes 181–184)", m.nx, 1);
  m.dy = three ? step(f.cdp_y, "CDP_Y (bytes 185–188)", m.ny, std::size_t(m.nx)) : 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double x = f.cdp_x[0] + double(k % std::size_t(m.nx)) * m.dx,
                 y = f.cdp_y[0] + double(k / std::size_t(m.nx)) * m.dy;
    auto off = [&](double got, double want) { return std::abs(got - want) > f.unit[k] + 1e-9 * std::abs(want); };
    if (off(f.cdp_x[k], x) || off(f.cdp_y[k], y)) {
      std::ostringstream os;
      os << f.trace_text(k) << ": CDP (x, y) = (" << f.cdp_x[k] << ", " << f.cdp_y[k] << ") m, not (" << x << ", " << y
         << ") m of the grid the first traces give (x along a line, " << (three ? "y across the lines" : "y fixed")
         << "); give the grid's spacing with --spacing";
      throw InputError(os.str());
    }
  }
}

}  // namespace

Model read_field(const std::string& path, const std::vector<double>& spacing) {
  Reader rd = open_reader(path);
  const FieldHeaders f = read_field_headers(rd, path);
  Model m;
  m.nz = rd.nt;
  field_lines(f, m);
  const bool three = m.dim == 3;
  if (!spacing.empty()) {
    if (spacing.size() != 1 && spacing.size() != std::size_t(m.dim))
      throw InputError("--spacing: " + std::string(three ? "a 3-D field needs dz,dy,dx" : "a 2-D field needs dz,dx") +
                       " (or one value for every axis)");
    m.dz = spacing[0];
    m.dy = three ? spacing[spacing.size() == 1 ? 0 : 1] : 0;
    m.dx = spacing.back();
  } else if (rd.feet) {  // dz lies in the sample interval, whose unit no header gives
    throw InputError(path +
                     ": its lengths are in feet (binary header bytes 3255–3256 = 2): give the grid's spacing in "
                     "metres with --spacing (and --scale 0.3048 for velocities in ft/s)");
  } else {
    field_spacing(f, m);
  }
  m.x0 = f.cdp_x[0];  // in metres (feet converted)
  m.y0 = three ? f.cdp_y[0] : 0;
  m.vp.resize(m.cells());
  std::vector<float> trace(std::size_t(m.nz));
  for (int i = 0; i < rd.count; ++i) {
    read_samples(rd, path, i, trace.data());
    const int y = i / m.nx, x = i % m.nx;
    for (int z = 0; z < m.nz; ++z) m.vp[m.index(z, y, x)] = trace[std::size_t(z)];
  }
  return m;
}

}  // namespace starwave::segy
