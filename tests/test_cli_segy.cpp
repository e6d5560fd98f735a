// tests/test_cli_segy.cpp — `starwave import` and `export` (SEG-Y) as a user runs them: a data
// file out and back the same, a model and its velocity import, dead channels, and what cannot
// be done refused in one line with nothing written.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "src/io/hdf5.hpp"
#include "src/synthetic/synth.hpp"
#include "tests/cli_fixture.hpp"

namespace starwave::test {
namespace {

TEST_F(Cli, SegyExportThenImportGivesTheSameFile) {
  // A data file to SEG-Y and back (its wavelet from --wavelet, its model's attributes from
  // --model): the same survey, data and attributes; a model and an image exported as one
  // trace per column; what cannot be done refused in one line with nothing written.
  const std::string data = path("data.h5"), sgy = path("data.sgy"), back = path("back.h5");
  ASSERT_EQ(run(model_cmd(model_, survey_, data)).status, 0);
  ASSERT_EQ(run("export --in " + data + " --out " + sgy).status, 0);
  const Result r = run("import --in " + sgy + " --wavelet " + data + " --model " + model_ + " --out " + back);
  ASSERT_EQ(r.status, 0) << r.err;
  const Survey a = io::read_survey(data, true), b = io::read_survey(back, true);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.dt, b.dt);
  EXPECT_EQ(a.nt, b.nt);
  EXPECT_EQ(a.sources, b.sources);
  EXPECT_EQ(a.receivers, b.receivers);
  EXPECT_EQ(a.wavelets, b.wavelets);
  ASSERT_EQ(a.data.size(), b.data.size());
  EXPECT_EQ(std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)), 0);
  auto model_attribute = [](const std::string& file, const char* name) {  // up to 3 values
    std::array<double, 3> v{-1, -1, -1};
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t at = H5Aopen(f, name, H5P_DEFAULT);
    if (at >= 0) H5Aread(at, H5T_NATIVE_DOUBLE, v.data());
    if (at >= 0) H5Aclose(at);
    if (f >= 0) H5Fclose(f);
    return v;
  };
  for (const char* attribute : {"spacing", "origin"}) {
    EXPECT_EQ(model_attribute(back, attribute), model_attribute(data, attribute)) << attribute;
    EXPECT_NE(model_attribute(back, attribute)[0], -1) << attribute;
  }
  ASSERT_EQ(run("export --in " + model_ + " --out " + path("vp.sgy")).status, 0);
  EXPECT_GT(fs::file_size(path("vp.sgy")), 3600u);
  {  // and the model back: import --velocity gives the same model file
    const Result v = run("import --velocity --in " + path("vp.sgy") + " --out " + path("vp_back.h5"));
    ASSERT_EQ(v.status, 0) << v.err;
    const Model m0 = io::read_model(model_), m1 = io::read_model(path("vp_back.h5"));
    EXPECT_EQ(m0.shape_text(), m1.shape_text());
    EXPECT_EQ(m0.vp, m1.vp);
    EXPECT_EQ(m0.dz, m1.dz);
    EXPECT_EQ(m0.dx, m1.dx);
    EXPECT_EQ(m0.x0, m1.x0);
    const Result km = run("import --velocity --in " + path("vp.sgy") + " --scale 0.001 --spacing 5 --out " +
                          path("km.h5"));  // what a model in km/s looks like
    EXPECT_EQ(km.status, 2);
    EXPECT_NE(km.err.find("--scale 1000"), std::string::npos) << km.err;
    EXPECT_FALSE(fs::exists(path("km.h5")));
    const Result given = run("import --velocity --in " + path("vp.sgy") + " --spacing 4,6 --out " + path("s.h5"));
    ASSERT_EQ(given.status, 0) << given.err;
    EXPECT_EQ(io::read_model(path("s.h5")).dz, 4);
    EXPECT_EQ(io::read_model(path("s.h5")).dx, 6);
  }
  {  // A dead channel with junk coordinates (trace 2: x = 2e9 units) is placed at its shot's
     // source, weighted 0; the same trace live is refused by record and trace.
    std::vector<char> bytes(fs::file_size(sgy));
    std::ifstream(sgy, std::ios::binary).read(bytes.data(), long(bytes.size()));
    const std::size_t h = 3600 + 240 + std::size_t(a.nt) * 4;
    const unsigned char far[4] = {0x77, 0x35, 0x94, 0x00};  // 2000000000, big-endian
    std::copy(far, far + 4, bytes.begin() + long(h + 80));
    auto write = [&](const std::string& name, int id) {
      bytes[h + 28] = 0;
      bytes[h + 29] = char(id);
      std::ofstream(path(name), std::ios::binary).write(bytes.data(), long(bytes.size()));
    };
    write("dead.sgy", 2);
    const Result d = run("import --in " + path("dead.sgy") + " --wavelet " + data + " --model " + model_ + " --out " +
                         path("dead.h5"));
    ASSERT_EQ(d.status, 0) << d.err;
    EXPECT_NE(d.out.find("1 dead traces outside the model placed at their shots' sources"), std::string::npos) << d.out;
    const Survey dead = io::read_survey(path("dead.h5"), true);
    EXPECT_EQ(dead.receivers_of(0)[1], dead.sources[0]);
    EXPECT_EQ(dead.trace_weights(0)[1], 0.0f);
    EXPECT_EQ(dead.receivers_of(1), a.receivers_of(1)) << "the other shots' receivers as they were";
    write("live.sgy", 1);
    expect_refused(
        "import --in " + path("live.sgy") + " --wavelet " + data + " --model " + model_ + " --out " + path("live.h5"),
        path("live.h5"), "shot record 0 (in file order, from 0), trace 2's receiver");
  }
  // A Ricker instead of a wavelet file.
  ASSERT_EQ(run("import --in " + sgy + " --ricker 12 --out " + path("r.h5")).status, 0);
  EXPECT_EQ(io::read_survey(path("r.h5"), false).wavelets[0], ricker(12, 1.5 / 12, a.dt, a.nt));

  const std::string o = path("o.h5");
  expect_refused("import --in " + sgy + " --out " + o, o, "one of --wavelet FILE or --ricker F0");
  expect_refused("import --in " + sgy + " --ricker 10 --wavelet " + data + " --out " + o, o, "one of --wavelet");
  expect_refused("import --in " + sgy + " --delay 0.1 --wavelet " + data + " --out " + o, o, "--delay");
  expect_refused("import --in " + sgy + " --ricker 0 --out " + o, o, "--ricker");
  expect_refused("import --in " + data + " --ricker 10 --out " + o, o, "an HDF5 file, not a SEG-Y file");
  expect_refused("import --in " + path("vp.sgy") + " --ricker 10 --out " + o, o, "no FieldRecord");
  expect_refused("import --in " + sgy + " --wavelet " + model_ + " --out " + o, o, "--wavelet: ");
  expect_refused("import --in " + sgy + " --ricker 10 --dim 4 --out " + o, o, "--dim");
  expect_refused("import --in " + sgy + " --ricker 10 --spacing 5 --out " + o, o, "--spacing");
  expect_refused("import --velocity --in " + path("vp.sgy") + " --ricker 10 --out " + o, o, "--ricker");
  for (const char* spacing : {"5,x", "5,", ",5", "0", "5,-1", "1,2,3,4", "nan"})
    expect_refused("import --velocity --in " + path("vp.sgy") + " --spacing " + spacing + " --out " + o, o,
                   "--spacing: '" + std::string(spacing) + "'");
  expect_refused("import --velocity --in " + path("vp.sgy") + " --spacing 1,2,3 --out " + o, o, "dz,dx");
  expect_refused("import --velocity --in " + path("vp.sgy") + " --scale -2 --out " + o, o, "--scale");
  expect_refused("import --velocity --in " + model_ + " --out " + o, o, "not a SEG-Y file");
  {
    const auto before = fs::file_size(sgy);
    const Result same = run("import --in " + sgy + " --ricker 10 --out " + sgy + " --overwrite");
    EXPECT_EQ(same.status, 2);
    EXPECT_NE(same.err.find("an input is never overwritten"), std::string::npos) << same.err;
    EXPECT_EQ(fs::file_size(sgy), before);
    const Result exists = run("import --in " + sgy + " --ricker 10 --out " + back);
    EXPECT_EQ(exists.status, 2);
    EXPECT_NE(exists.err.find("--overwrite"), std::string::npos) << exists.err;
  }
  expect_refused("export --in " + survey_ + " --out " + path("s.sgy"), path("s.sgy"), "--dataset");
  expect_refused("export --in " + data + " --dataset /nope --out " + path("s.sgy"), path("s.sgy"), "/nope");
}

}  // namespace
}  // namespace starwave::test
