// tests/test_segy.cpp — SEG-Y shot records and fields (src/io/segy.hpp, docs/design.md §4's header
// mapping): written then read back the same (2-D and 3-D coordinates, scalars, depths,
// per-shot spreads), IBM floats read, fields one trace per column, and every file the
// mapping cannot use refused by name.
#include <gtest/gtest.h>
#include <segyio/segy.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/io/segy.hpp"

namespace starwave::test {
namespace {

namespace fs = std::filesystem;

class Segy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("starwave-segy-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

/// The bytes of file `f`.
std::vector<char> bytes_of(const std::string& f) {
  std::vector<char> b(fs::file_size(f));
  std::ifstream(f, std::ios::binary).read(b.data(), long(b.size()));
  return b;
}

/// A survey with data: `nshots` shots of `nrec` receivers, positions off the integers
/// where `fractional` (scalars then needed), y varying in 3-D, each shot its own spread.
Survey make_survey(int dim, int nshots, int nrec, bool fractional) {
  Survey s;
  s.dim = dim;
  s.dt = 0.002;
  s.nt = 37;
  const double f = fractional ? 0.25 : 0;
  for (int k = 0; k < nshots; ++k) {
    s.sources.push_back(dim == 3 ? Position(5 + f, 100 + 20 * k + f, 40 + 10 * k) : Position(5 + f, 40 + 10 * k + f));
    std::vector<Position> r;
    for (int i = 0; i < nrec; ++i)
      r.push_back(dim == 3 ? Position(10 + 0.5 * fractional * i, 100 + 12.5 * (i % 3), 20.0 * i + 3 * k)
                           : Position(10, 20.0 * i + 3 * k + f));
    s.receivers.push_back(r);
  }
  s.wavelets.push_back(std::vector<float>(std::size_t(s.nt), 0.0f));
  for (int k = 0; k < nshots; ++k)
    for (int i = 0; i < nrec; ++i)
      for (int n = 0; n < s.nt; ++n)
        s.data.push_back(float(std::sin(0.1 * n + i + 7 * k)) * (n % 5 == 0 ? 1e-20f : 1.0f) + float(k));
  return s;
}

void expect_same(const Survey& a, const Survey& b) {
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.dt, b.dt);
  EXPECT_EQ(a.nt, b.nt);
  ASSERT_EQ(a.nshots(), b.nshots());
  for (int k = 0; k < a.nshots(); ++k) {
    EXPECT_EQ(a.sources[std::size_t(k)], b.sources[std::size_t(k)]) << "source " << k;
    EXPECT_EQ(a.receivers_of(k), b.receivers_of(k)) << "receivers of shot " << k;
  }
  ASSERT_EQ(a.data.size(), b.data.size());
  EXPECT_EQ(std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)), 0) << "samples";
}

/// `f` refused with a message holding `mention`.
void expect_refused(const std::string& f, int dim, const std::string& mention) {
  try {
    segy::read_shots(f, dim);
    ADD_FAILURE() << "accepted; expected a refusal mentioning '" << mention << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << "names the file: " << e.what();
  }
}

TEST_F(Segy, ShotRecordsWrittenThenReadAreTheSame) {
  for (int dim : {2, 3})
    for (bool fractional : {false, true}) {
      const Survey s = make_survey(dim, 3, 5, fractional);
      const std::string f = path("shots.sgy");
      segy::write_shots(f, s);
      EXPECT_EQ(fs::file_size(f), 3600u + 15u * (240u + 37u * 4u));
      expect_same(s, segy::read_shots(f, dim));
    }
  // One spread for every shot reads back as one shared spread.
  Survey shared = make_survey(2, 2, 4, false);
  shared.receivers = {shared.receivers[0]};
  segy::write_shots(path("shared.sgy"), shared);
  const Survey back = segy::read_shots(path("shared.sgy"), 2);
  EXPECT_EQ(back.receivers.size(), 1u);
  expect_same(shared, back);
}

TEST_F(Segy, ALittleEndianFileReadsAsItsBigEndianTwin) {
  // SEG-Y rev 2 lets a file be little-endian (Seismic Unix writes them): told by its byte-order
  // word, or by its sample format code read byte-swapped, and read as the same records.
  const Survey s = make_survey(2, 2, 3, true);
  const std::string big = path("big.sgy");
  segy::write_shots(big, s);
  std::vector<char> b = bytes_of(big);
  auto swap = [&](std::size_t at, int size) {
    std::reverse(b.begin() + long(at - 1), b.begin() + long(at - 1 + size));
  };
  for (int at : {3217, 3221, 3225, 3501, 3503, 3505}) swap(std::size_t(at), 2);
  const std::size_t trace = 240 + std::size_t(s.nt) * 4, traces = (b.size() - 3600) / trace;
  for (std::size_t t = 0; t < traces; ++t) {
    const std::size_t h = 3600 + t * trace;
    for (int at : {1, 5, 9, 13, 37, 41, 45, 49, 73, 77, 81, 85}) swap(h + std::size_t(at), 4);
    for (int at : {29, 69, 71, 89, 115, 117}) swap(h + std::size_t(at), 2);
    for (int k = 0; k < s.nt; ++k) swap(h + 241 + std::size_t(k) * 4, 4);
  }
  const char order[4] = {4, 3, 2, 1};  // 0x01020304 as a little-endian file holds it
  for (bool word : {false, true}) {
    std::copy(order, order + 4, b.begin() + 3296);
    if (!word) std::fill(b.begin() + 3296, b.begin() + 3300, 0);
    const std::string little = path("little.sgy");
    std::ofstream(little, std::ios::binary).write(b.data(), long(b.size()));
    expect_same(segy::read_shots(big, 2), segy::read_shots(little, 2));
  }
  // Its bytes swapped in pairs (rev 2's word 0x02010403): refused, not read as little-endian.
  std::vector<char> pairs = b;
  const char pairwise[4] = {2, 1, 4, 3};
  std::copy(pairwise, pairwise + 4, pairs.begin() + 3296);
  std::ofstream(path("pairs.sgy"), std::ios::binary).write(pairs.data(), long(pairs.size()));
  expect_refused(path("pairs.sgy"), 2, "byte-order word 0x02010403 (bytes 3297–3300)");
  // Given where HDF5 is read, the little-endian file is named as SEG-Y.
  try {
    io::read_model(path("little.sgy"));
    ADD_FAILURE() << "a SEG-Y file read as a model";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a SEG-Y file, not HDF5"), std::string::npos) << e.what();
  }
  // A big-endian rev 1 file whose vendor filled bytes 3297–3300 with the little-endian word's
  // bytes: its format code says big-endian, and big-endian it is read.
  std::vector<char> stray = bytes_of(big);
  std::copy(order, order + 4, stray.begin() + 3296);
  std::ofstream(path("stray.sgy"), std::ios::binary).write(stray.data(), long(stray.size()));
  expect_same(segy::read_shots(big, 2), segy::read_shots(path("stray.sgy"), 2));
}

TEST_F(Segy, LengthsInFeetAreMetresAndGeographicCoordinatesRefused) {
  // Feet (binary header 3255–3256 = 2): every coordinate and depth × 0.3048. Geographic
  // coordinates (trace bytes 89–90 = 2 … 4) cannot be placed: refused by name.
  const Survey s = make_survey(2, 1, 2, false);
  const std::string f = path("units.sgy");
  segy::write_shots(f, s);
  const std::vector<char> b = bytes_of(f);
  auto with = [&](std::size_t at) {
    std::vector<char> c = b;
    c[at - 1] = 0;
    c[at] = 2;
    std::ofstream(path("units2.sgy"), std::ios::binary).write(c.data(), long(c.size()));
    return path("units2.sgy");
  };
  const Survey metres = segy::read_shots(f, 2), feet = segy::read_shots(with(3255), 2);
  ASSERT_EQ(feet.nrec(), metres.nrec());
  EXPECT_EQ(feet.sources[0].x, 0.3048 * metres.sources[0].x);
  EXPECT_EQ(feet.sources[0].z, 0.3048 * metres.sources[0].z);
  for (int r = 0; r < metres.nrec(); ++r)
    EXPECT_EQ(feet.receivers[0][std::size_t(r)].x, 0.3048 * metres.receivers[0][std::size_t(r)].x);
  try {
    segy::read_shots(with(3600 + 89), 2);
    ADD_FAILURE() << "geographic coordinates read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("trace 1: coordinate units 2 (trace header bytes 89–90)"), std::string::npos)
        << e.what();
  }
}

TEST_F(Segy, AnExtendedHeaderCountThatIsNoCountIsNamed) {
  const Survey s = make_survey(2, 1, 2, false);
  segy::write_shots(path("ext.sgy"), s);
  std::vector<char> b = bytes_of(path("ext.sgy"));
  for (int count : {-1, -2}) {
    b[3504] = char(0xff);
    b[3505] = char(count & 0xff);
    std::ofstream(path("ext2.sgy"), std::ios::binary).write(b.data(), long(b.size()));
    expect_refused(
        path("ext2.sgy"), 2,
        "extended textual header count (binary header bytes 3505–3506) is " + std::to_string(count) +
            (count == -1 ? "; a count to be found by reading the headers (−1) is not read" : ": not a count"));
  }
}

TEST_F(Segy, DeadTracesJunkCoordinatesAreNotItsGeometry) {
  // A dead channel (TraceIdentificationCode 2) off the line, and a short shot's last trace dead
  // far away: read as a 2-D survey, the short shot padded with its last live receiver.
  Survey s = make_survey(3, 2, 4, false);
  for (auto& p : s.sources) p.y = 100;
  for (auto& spread : s.receivers)
    for (auto& p : spread) p.y = 100;
  s.counts = {4, 3};
  s.receivers[0][2] = Position(10, 7777, 60);  // dead, off the line
  s.receivers[1][2] = Position(10, 100, 1e6);  // dead, far away: the short shot's last trace
  s.receivers[1][3] = s.receivers[1][2];
  s.weights = {1, 1, 0, 1, 1, 1, 0, 0};
  std::fill(s.data.begin() + 7 * s.nt, s.data.end(), 0.0f);
  segy::write_shots(path("dead.sgy"), s);
  const Survey back = segy::read_shots(path("dead.sgy"), 0);
  EXPECT_EQ(back.dim, 2) << "a dead trace off the line makes no areal survey";
  EXPECT_EQ(back.receivers_of(1)[3], back.receivers_of(1)[1]) << "padded with the last live receiver";
  EXPECT_EQ(back.trace_weights(0)[2], 0.0f);
}

TEST_F(Segy, RaggedShotsAndDeadTracesRoundTrip) {
  // Shots of 5, 3 and 4 traces: read as nrec = 5 with /receiver/count {5, 3, 4}, the short
  // shots padded with copies of their last receiver and zero traces; a dead trace
  // (TraceIdentificationCode 2) has weight 0. Written back: the same file.
  Survey s = make_survey(3, 3, 5, true);
  s.counts = {5, 3, 4};
  for (int k = 0; k < 3; ++k) {
    const std::size_t n = std::size_t(s.counts[std::size_t(k)]);
    auto& r = s.receivers[std::size_t(k)];
    std::fill(r.begin() + long(n), r.end(), r[n - 1]);
    std::fill(s.data.begin() + long((std::size_t(k) * 5 + n) * 37), s.data.begin() + long(std::size_t(k + 1) * 5 * 37),
              0.0f);
  }
  s.weights.assign(15, 1.0f);
  s.weights[6] = 0;  // shot 1, receiver 1: dead
  for (int k = 0; k < 3; ++k)
    for (std::size_t r = std::size_t(s.counts[std::size_t(k)]); r < 5; ++r) s.weights[std::size_t(k) * 5 + r] = 0;
  const std::string f = path("ragged.sgy");
  segy::write_shots(f, s);
  EXPECT_EQ(fs::file_size(f), 3600u + 12u * (240u + 37u * 4u)) << "only each shot's own traces are written";
  const Survey back = segy::read_shots(f, 3);
  expect_same(s, back);
  EXPECT_EQ(back.counts, s.counts);
  EXPECT_EQ(back.weights, s.weights);
  EXPECT_EQ(back.trace_weights(1), (std::vector<float>{1, 0, 1, 0, 0}));
  Survey valid = back;
  valid.wavelets = s.wavelets;
  valid.validate("back");
  // Weights other than 0 and 1 have no SEG-Y field: refused, nothing written.
  s.weights[0] = 0.5f;
  EXPECT_THROW(segy::write_shots(path("half.sgy"), s), InputError);
  EXPECT_FALSE(fs::exists(path("half.sgy")));
}

/// Rewrites trace header field `field` of every trace of `f` (nt samples) with `value`,
/// or of trace `only` alone.
void set_trace_field(const std::string& f, int nt, int field, int value, int only = -1) {
  segy_file* fp = segy_open(f.c_str(), "r+b");
  ASSERT_NE(fp, nullptr);
  const int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, nt);
  int count = 0;
  ASSERT_EQ(segy_traces(fp, &count, 3600, bsize), SEGY_OK);
  std::array<char, SEGY_TRACE_HEADER_SIZE> h{};
  for (int i = 0; i < count; ++i) {
    if (only >= 0 && i != only) continue;
    ASSERT_EQ(segy_traceheader(fp, i, h.data(), 3600, bsize), SEGY_OK);
    ASSERT_EQ(segy_set_field(h.data(), field, value), SEGY_OK);
    ASSERT_EQ(segy_write_traceheader(fp, i, h.data(), 3600, bsize), SEGY_OK);
  }
  segy_close(fp);
}

void set_binary_field(const std::string& f, int field, int value) {
  segy_file* fp = segy_open(f.c_str(), "r+b");
  ASSERT_NE(fp, nullptr);
  std::array<char, SEGY_BINARY_HEADER_SIZE> b{};
  ASSERT_EQ(segy_binheader(fp, b.data()), SEGY_OK);
  ASSERT_EQ(segy_set_bfield(b.data(), field, value), SEGY_OK);
  ASSERT_EQ(segy_write_binheader(fp, b.data()), SEGY_OK);
  segy_close(fp);
}

TEST_F(Segy, IbmFloatSamplesAreRead) {
  // Samples that IBM's hexadecimal floats hold exactly (a 24-bit fraction): the file's
  // samples rewritten as IBM and the format code set to 1 read back bit for bit.
  Survey s = make_survey(2, 2, 3, false);
  for (std::size_t i = 0; i < s.data.size(); ++i) s.data[i] = float(int(i % 41) - 20) / 16.0f;
  const std::string f = path("ibm.sgy");
  segy::write_shots(f, s);
  segy_file* fp = segy_open(f.c_str(), "r+b");
  ASSERT_NE(fp, nullptr);
  const int nt = int(s.nt), bsize = segy_trsize(SEGY_IBM_FLOAT_4_BYTE, nt);
  for (int i = 0; i < 6; ++i) {
    std::vector<float> t(s.data.begin() + i * nt, s.data.begin() + (i + 1) * nt);
    ASSERT_EQ(segy_from_native(SEGY_IBM_FLOAT_4_BYTE, nt, t.data()), SEGY_OK);
    ASSERT_EQ(segy_writetrace(fp, i, t.data(), 3600, bsize), SEGY_OK);
  }
  segy_close(fp);
  set_binary_field(f, SEGY_BIN_FORMAT, SEGY_IBM_FLOAT_4_BYTE);
  expect_same(s, segy::read_shots(f, 2));
  // Another sample format is refused by name.
  set_binary_field(f, SEGY_BIN_FORMAT, 3);  // 2-byte integers
  try {
    segy::read_shots(f, 2);
    ADD_FAILURE() << "format 3 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sample format code 3"), std::string::npos) << e.what();
  }
}

TEST_F(Segy, SampleCountsAndIntervalsAreUnsigned) {
  // SEG-Y rev 2: the 2-byte sample count and interval are unsigned. A trace of 40000
  // samples at 1 ms was read as -25536 samples ("give -25536"); it is read as it is.
  const std::string f = path("long.sgy");
  const int nt = 40000, unsigned_nt = nt - 65536;  // the field's bits as segyio's signed 16-bit value
  {
    std::string bytes(3600 + 240 + 4 * std::size_t(nt), '\0');
    std::fill(bytes.begin(), bytes.begin() + 3200, ' ');
    ASSERT_EQ(segy_set_bfield(&bytes[3200], SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE), SEGY_OK);
    ASSERT_EQ(segy_set_bfield(&bytes[3200], SEGY_BIN_SAMPLES, unsigned_nt), SEGY_OK);
    ASSERT_EQ(segy_set_bfield(&bytes[3200], SEGY_BIN_INTERVAL, 1000), SEGY_OK);
    char* h = &bytes[3600];
    ASSERT_EQ(segy_set_field(h, SEGY_TR_FIELD_RECORD, 1), SEGY_OK);
    ASSERT_EQ(segy_set_field(h, SEGY_TR_SAMPLE_COUNT, unsigned_nt), SEGY_OK);
    ASSERT_EQ(segy_set_field(h, SEGY_TR_SAMPLE_INTER, 1000), SEGY_OK);
    ASSERT_EQ(segy_set_field(h, SEGY_TR_GROUP_X, 10), SEGY_OK);
    std::ofstream(f, std::ios::binary) << bytes;
  }
  const Survey back = segy::read_shots(f, 2);
  EXPECT_EQ(back.nt, nt);
  EXPECT_EQ(back.dt, 0.001);
  EXPECT_EQ(back.nrec(), 1);
  // What import reads, export writes (as rev 2, with its byte-order word) and import reads back.
  Survey again = back;
  again.sources[0] = Position(5, 0);
  segy::write_shots(path("again.sgy"), again);
  expect_same(again, segy::read_shots(path("again.sgy"), 2));
  const std::vector<char> b = bytes_of(path("again.sgy"));
  EXPECT_EQ(b[3500], 2) << "rev 2 (bytes 3501–3502)";
  EXPECT_EQ(std::vector<char>(b.begin() + 3296, b.begin() + 3300), (std::vector<char>{1, 2, 3, 4}));
}

TEST_F(Segy, FilesTheMappingCannotUseAreRefused) {
  const Survey s = make_survey(3, 3, 4, true);
  const std::string f = path("bad.sgy");
  auto fresh = [&] { segy::write_shots(f, s); };
  fresh();  // no sample interval anywhere
  set_trace_field(f, 37, SEGY_TR_SAMPLE_INTER, 0);
  set_binary_field(f, SEGY_BIN_INTERVAL, 0);
  expect_refused(f, 3, "no usable sample interval");
  fresh();  // the binary header's interval stands in for the traces'
  set_trace_field(f, 37, SEGY_TR_SAMPLE_INTER, 0);
  EXPECT_EQ(segy::read_shots(f, 3).dt, s.dt);
  fresh();  // no FieldRecord
  set_trace_field(f, 37, SEGY_TR_FIELD_RECORD, 0, 5);
  expect_refused(f, 3, "trace 6: no FieldRecord");
  fresh();  // shot 1's record number again after shot 2's
  set_trace_field(f, 37, SEGY_TR_FIELD_RECORD, 1, 11);
  expect_refused(f, 3, "trace 12: FieldRecord 1 again");
  fresh();  // a trace of shot 2 with another source position
  set_trace_field(f, 37, SEGY_TR_SOURCE_X, 123456, 6);
  expect_refused(f, 3, "trace 7: its source position differs");
  fresh();  // an areal spread for a 2-D model
  expect_refused(f, 2, "not on one line");
  fresh();  // a NaN sample
  {
    segy_file* fp = segy_open(f.c_str(), "r+b");
    ASSERT_NE(fp, nullptr);
    std::vector<float> t(37, std::nanf(""));
    ASSERT_EQ(segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, 37, t.data()), SEGY_OK);
    ASSERT_EQ(segy_writetrace(fp, 2, t.data(), 3600, 37 * 4), SEGY_OK);
    segy_close(fp);
  }
  expect_refused(f, 3, "trace 3: a sample is NaN");
  fresh();  // a truncated file
  fs::resize_file(f, fs::file_size(f) - 7);
  expect_refused(f, 3, "not a whole number of traces");
  fs::resize_file(f, 1000);
  expect_refused(f, 3, "not a SEG-Y file");
}

TEST_F(Segy, AnIntervalWithinRoundingOfWholeMicrosecondsIsThem) {
  // k · 1e-4 is not always the double nearest k tenths of a ms (13 · 1e-4 =
  // 0.0013000000000000002): written as 1300 µs, read back as the nearest double, 0.0013;
  // and every interval read is the double nearest its µs (800 · 1e-6 is not 0.0008).
  Survey s = make_survey(2, 1, 2, false);
  for (int us : {800, 1100, 1300, 1700, 2000, 4000}) {
    s.dt = us * 1e-6 == us / 1e6 ? (us / 100) * 1e-4 : us * 1e-6;  // a product, one ulp off where it can be
    segy::write_shots(path("us.sgy"), s);
    EXPECT_EQ(segy::read_shots(path("us.sgy"), 2).dt, us / 1e6) << us << " µs";
    fs::remove(path("us.sgy"));
  }
}

TEST_F(Segy, WriteRefusesWhatSegyCannotHold) {
  Survey s = make_survey(2, 1, 2, false);
  // Not a whole number of µs, none at all, beyond 32767 µs; a µs off by more than rounding.
  for (double dt : {1.0 / 3000, 1e-9, 1e300, 0.0013 * (1 + 1e-7)}) {
    s.dt = dt;
    try {
      segy::write_shots(path("dt.sgy"), s);
      ADD_FAILURE() << "dt = " << dt << " written";
    } catch (const InputError& e) {  // the dt as a person writes it, not 0.000000 or 300 digits
      EXPECT_NE(std::string(e.what()).find("cannot hold the data's dt = " + number_text(dt) + " s"), std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(fs::exists(path("dt.sgy")));
  }
  s = make_survey(2, 1, 2, false);
  s.sources[0].x = 3e9;  // beyond a header even in whole metres: refused by file
  try {
    segy::write_shots(path("far.sgy"), s);
    ADD_FAILURE() << "a coordinate of 3e9 m was written";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path("far.sgy") + ": a coordinate of 3e+09 m"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("far.sgy")));
}

TEST_F(Segy, UtmCoordinatesWithoutAnExactScalarAreRoundedToTheFinestThatFits) {
  // Eastings and northings of a real survey carry fractions no scalar writes exactly; at
  // 654 km only −1000 (mm) fits a header: written rounded to the millimetre, not refused.
  for (int dim : {2, 3}) {
    Survey s = make_survey(dim, 2, 3, false);
    s.sources[0].x = 654321.123456789;
    s.sources[1].x = 654331.987654321;
    if (dim == 3) s.sources[0].y = 4371234.5678901;  // at 4371 km: −100 (cm)
    const std::string f = path("utm.sgy");
    segy::write_shots(f, s);
    const Survey back = segy::read_shots(f, dim);
    const double unit = dim == 3 ? 0.01 : 0.001;
    EXPECT_NEAR(back.sources[0].x, s.sources[0].x, unit / 2 + 1e-9);
    EXPECT_NEAR(back.sources[1].x, s.sources[1].x, unit / 2 + 1e-9);
    EXPECT_NE(back.sources[0].x, std::round(s.sources[0].x)) << "finer than whole metres";
    if (dim == 3) {
      EXPECT_NEAR(back.sources[0].y, s.sources[0].y, unit / 2 + 1e-9);
    }
    EXPECT_EQ(back.receivers_of(1), s.receivers_of(1)) << "whole positions stay exact";
    fs::remove(f);
  }
}

TEST_F(Segy, FieldsAreOneTracePerColumn) {
  Model m;
  m.dim = 3;
  m.nz = 6;
  m.ny = 2;
  m.nx = 3;
  m.dz = 12.5;
  m.dy = 20;
  m.dx = 7.5;
  m.x0 = 100;
  m.y0 = -40;
  std::vector<double> v(m.cells());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1500 + double(i);
  const std::string f = path("field.sgy");
  segy::write_field(f, m, v);
  segy_file* fp = segy_open(f.c_str(), "rb");
  ASSERT_NE(fp, nullptr);
  const int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, m.nz);
  int count = 0;
  ASSERT_EQ(segy_traces(fp, &count, 3600, bsize), SEGY_OK);
  EXPECT_EQ(count, m.ny * m.nx);
  std::array<char, SEGY_TRACE_HEADER_SIZE> h{};
  std::vector<float> t(std::size_t(m.nz));
  for (int y = 0; y < m.ny; ++y)
    for (int x = 0; x < m.nx; ++x) {
      const int i = y * m.nx + x;
      ASSERT_EQ(segy_traceheader(fp, i, h.data(), 3600, bsize), SEGY_OK);
      int32_t cx = 0, cy = 0, sc = 0, il = 0, xl = 0, dz = 0;
      segy_get_field(h.data(), SEGY_TR_CDP_X, &cx);
      segy_get_field(h.data(), SEGY_TR_CDP_Y, &cy);
      segy_get_field(h.data(), SEGY_TR_SOURCE_GROUP_SCALAR, &sc);
      segy_get_field(h.data(), SEGY_TR_INLINE, &il);
      segy_get_field(h.data(), SEGY_TR_CROSSLINE, &xl);
      segy_get_field(h.data(), SEGY_TR_SAMPLE_INTER, &dz);
      EXPECT_EQ(sc, -10);
      EXPECT_EQ(cx / 10.0, m.x0 + x * m.dx);
      EXPECT_EQ(cy / 10.0, m.y0 + y * m.dy);
      EXPECT_EQ(il, y + 1);
      EXPECT_EQ(xl, x + 1);
      EXPECT_EQ(dz, 12500);
      ASSERT_EQ(segy_readtrace(fp, i, t.data(), 3600, bsize), SEGY_OK);
      ASSERT_EQ(segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, m.nz, t.data()), SEGY_OK);
      for (int z = 0; z < m.nz; ++z) EXPECT_EQ(t[std::size_t(z)], float(v[m.index(z, y, x)]));
    }
  segy_close(fp);
  v[3] = std::nan("");
  EXPECT_THROW(segy::write_field(path("nan.sgy"), m, v), InputError);
  EXPECT_FALSE(fs::exists(path("nan.sgy")));
  m.dz = 1e-5;  // 0.01 mm: the sample interval field counts whole mm
  try {
    segy::write_field(path("fine.sgy"), m, m.vp);
    ADD_FAILURE() << "dz = 1e-5 m written";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dz = 1e-05 m is not"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("fine.sgy")));
}

void expect_refused_field(const std::string& f, const std::vector<double>& spacing, const std::string& mention) {
  try {
    segy::read_field(f, spacing);
    ADD_FAILURE() << f << ": read, not refused (" << mention << ")";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
  }
}

TEST_F(Segy, FieldsReadBackAsWritten) {
  // write_field then read_field: the same grid, spacing, origin and values, 2-D and 3-D.
  for (int dim : {2, 3}) {
    Model m;
    m.dim = dim;
    m.nz = 7;
    m.ny = dim == 3 ? 4 : 1;
    m.nx = 5;
    m.dz = 12.5;
    m.dy = dim == 3 ? 20 : 0;
    m.dx = 7.5;
    m.x0 = 100;
    m.y0 = dim == 3 ? -40 : 0;
    m.vp.resize(m.cells());
    for (std::size_t i = 0; i < m.vp.size(); ++i) m.vp[i] = 1500 + 0.25 * double(i);
    const std::string f = path("field" + std::to_string(dim) + ".sgy");
    segy::write_field(f, m, m.vp);
    const Model b = segy::read_field(f, {});
    if (dim == 2) {  // the same file in feet: its CDP coordinates in metres, its spacing asked for
      std::vector<char> bytes = bytes_of(f);
      bytes[3254] = 0;
      bytes[3255] = 2;
      std::ofstream(path("feet.sgy"), std::ios::binary).write(bytes.data(), long(bytes.size()));
      try {
        segy::read_field(path("feet.sgy"), {});
        ADD_FAILURE() << "a field in feet read without --spacing";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("give the grid's spacing in metres with --spacing"), std::string::npos)
            << e.what();
      }
      const Model feet = segy::read_field(path("feet.sgy"), {3.81, 2.286});
      EXPECT_DOUBLE_EQ(feet.x0, 0.3048 * m.x0);
      EXPECT_EQ(feet.dz, 3.81);
    }
    EXPECT_EQ(b.dim, dim);
    EXPECT_EQ(b.shape_text(), m.shape_text());
    EXPECT_EQ(b.dz, m.dz);
    EXPECT_EQ(b.dy, m.dy);
    EXPECT_EQ(b.dx, m.dx);
    EXPECT_EQ(b.x0, m.x0);
    EXPECT_EQ(b.y0, m.y0);
    EXPECT_EQ(b.z0, 0);
    EXPECT_EQ(b.vp, m.vp) << dim << "-D";
    // --spacing: the headers' spacing ignored.
    const Model given = segy::read_field(f, dim == 3 ? std::vector<double>{2, 3, 4} : std::vector<double>{2, 4});
    EXPECT_EQ(given.dz, 2);
    EXPECT_EQ(given.dy, dim == 3 ? 3 : 0);
    EXPECT_EQ(given.dx, 4);
  }
}

TEST_F(Segy, FieldGeometryTheHeadersCannotGiveIsAskedFor) {
  // A published model's file often has no CDP coordinates and no sample interval: the
  // spacing must then be given; coordinates rounded by their writer still give the step.
  Model m;
  m.nz = 4;
  m.nx = 9;
  m.dz = m.dx = 12.5;
  m.vp.assign(m.cells(), 2000);
  const std::string f = path("model.sgy");
  segy::write_field(f, m, m.vp);
  for (int x = 0; x < m.nx; ++x) {  // whole metres, scalar 0: 0, 12, 25, 38, …, 100
    set_trace_field(f, m.nz, SEGY_TR_SOURCE_GROUP_SCALAR, 0, x);
    set_trace_field(f, m.nz, SEGY_TR_CDP_X, int(std::nearbyint(12.5 * x)), x);
  }
  EXPECT_EQ(segy::read_field(f, {}).dx, 12.5) << "rounded coordinates";
  set_trace_field(f, m.nz, SEGY_TR_CDP_X, 30, 4);  // off the grid by 20 m
  expect_refused_field(f, {}, "trace 5 (inline 1, crossline 5): CDP (x, y) = (30, 0) m");
  set_trace_field(f, m.nz, SEGY_TR_CDP_X, 0);
  expect_refused_field(f, {}, "--spacing");
  const Model a = segy::read_field(f, {10});
  EXPECT_EQ(a.dz, 10);
  EXPECT_EQ(a.dx, 10);
  const Model b = segy::read_field(f, {10, 20});
  EXPECT_EQ(b.dz, 10);
  EXPECT_EQ(b.dx, 20);
  expect_refused_field(f, {1, 2, 3}, "--spacing");
  set_trace_field(f, m.nz, SEGY_TR_SAMPLE_INTER, 0);
  set_binary_field(f, SEGY_BIN_INTERVAL, 0);
  expect_refused_field(f, {}, "sample interval");
}

TEST_F(Segy, A3DFieldMustBeWholeLines) {
  Model m;
  m.dim = 3;
  m.nz = 3;
  m.ny = 3;
  m.nx = 4;
  m.dz = m.dy = m.dx = 10;
  m.vp.assign(m.cells(), 2500);
  const std::string f = path("cube.sgy");
  segy::write_field(f, m, m.vp);
  set_trace_field(f, m.nz, SEGY_TR_CROSSLINE, 7, 6);  // the 7th trace: line 2's 3rd crossline
  expect_refused_field(f, {}, "trace 7");
  segy::write_field(f, m, m.vp);
  set_trace_field(f, m.nz, SEGY_TR_INLINE, 1, 4);  // line 2's first trace joins line 1: crossline 1 after 4
  expect_refused_field(f, {}, "trace 5 (inline 1, crossline 1)");
  segy::write_field(f, m, m.vp);
  for (int i = 8; i < 12; ++i) set_trace_field(f, m.nz, SEGY_TR_INLINE, 1, i);  // inlines 1, 2, 1
  expect_refused_field(f, {10}, "trace 9");
  segy::write_field(f, m, m.vp);
  for (int i = 4; i < 8; ++i) set_trace_field(f, m.nz, SEGY_TR_CDP_X, 5000 + 10 * (i - 4), i);  // line 2 5 km away
  expect_refused_field(f, {}, "trace 5 (inline 2, crossline 1): CDP (x, y) = (5000, 10) m, not (0, 10) m");
  EXPECT_EQ(segy::read_field(f, {10}).dx, 10) << "--spacing: the coordinates are not used";
  segy::write_field(f, m, m.vp);
  for (int i = 0; i < 12; ++i) set_trace_field(f, m.nz, SEGY_TR_INLINE, i + 1, i);  // a line per trace
  expect_refused_field(f, {10}, "inline number (bytes 189–192) of its own");
  // A 2-D line off the x axis (CDP_Y changing along it) has no dx in its headers.
  Model line;
  line.nz = 2;
  line.nx = 5;
  line.dz = line.dx = 10;
  line.vp.assign(line.cells(), 2000);
  segy::write_field(f, line, line.vp);
  for (int i = 0; i < 5; ++i) set_trace_field(f, line.nz, SEGY_TR_CDP_Y, 100 * i, i);
  expect_refused_field(f, {}, "--spacing");
}

TEST_F(Segy, AFieldOfAwkwardSpacingRoundTrips) {
  // dx = 1/3 m: no scalar writes it exactly (−10000, rounded), yet it reads back on its grid.
  Model m;
  m.nz = 3;
  m.nx = 6;
  m.dz = 2;
  m.dx = 1.0 / 3.0;
  m.vp.assign(m.cells(), 1800);
  const std::string f = path("third.sgy");
  segy::write_field(f, m, m.vp);
  const Model b = segy::read_field(f, {});
  EXPECT_NEAR(b.dx, m.dx, 1e-4);
  EXPECT_EQ(b.nx, 6);
}

}  // namespace
}  // namespace starwave::test
