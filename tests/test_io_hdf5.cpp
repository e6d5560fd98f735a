// tests/test_io_hdf5.cpp — HDF5 inputs as other tools write them (h5py, HDF5's own tools): what a
// file does not hold itself refused unopened, files HDF5 cannot open named for what they are,
// attributes where h5py puts them.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/synthetic/synth.hpp"
#include "tests/io_scratch.hpp"

namespace starwave {
namespace {

namespace fs = std::filesystem;

using test::scratch;

/// Attribute `name` of `obj`: two values of `mem_type` at `values`, stored as `file_type`.
void put_pair(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, const void* values) {
  const hsize_t two = 2;
  hid_t s = H5Screate_simple(1, &two, nullptr);
  hid_t a = H5Acreate2(obj, name, file_type, s, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, mem_type, values);
  H5Aclose(a);
  H5Sclose(s);
}

const double kTen[2] = {10, 10};

/// A model file whose /vp `make_vp` makes (in file `f`, a 4 × 5 float dataset), with the
/// spacing [10, 10] on the root only when `root_spacing`.
std::string foreign_model(const std::string& name, const std::function<void(hid_t f)>& make_vp,
                          bool root_spacing = false) {
  const std::string p = scratch(name).string();
  hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  make_vp(f);
  if (root_spacing) put_pair(f, "spacing", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, kTen);
  H5Fclose(f);
  return p;
}

void expect_refused_model(const std::string& p, const std::string& words) {
  try {
    io::read_model(p);
    ADD_FAILURE() << p << ": read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Io, WhatAFileDoesNotHoldItselfIsRefusedUnopened) {
  // Values in another file (an external link, external raw storage, a virtual dataset) are
  // refused before HDF5 opens that file: a FIFO there would block the run, a missing or short
  // one would read as fill values, and starwave cannot pin it against change (guarantees.md).
  Model m;
  m.nz = 4;
  m.nx = 5;
  m.dz = m.dx = 10;
  m.vp.assign(20, 1500);
  const std::string real = scratch("real.h5").string(), fifo = scratch("fifo").string();
  io::write_model(real, m);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const hsize_t dims[2] = {4, 5};
  expect_refused_model(
      foreign_model("link.h5",
                    [&](hid_t f) { H5Lcreate_external(real.c_str(), "/vp", f, "vp", H5P_DEFAULT, H5P_DEFAULT); }),
      "/vp is an external link to another file");
  // Through a link to a FIFO, and through a group that is one: refused, not blocked (a child
  // process reads, so that a regression fails here instead of hanging the suite).
  const std::string to_fifo = foreign_model("fifo-link.h5", [&](hid_t f) {
    H5Lcreate_external(fifo.c_str(), "/vp", f, "vp", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_external(fifo.c_str(), "/", f, "g", H5P_DEFAULT, H5P_DEFAULT);
  });
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int refused = 0;
    try {
      io::read_model(to_fifo);
    } catch (const InputError& e) {
      refused += std::string(e.what()).find("/vp is an external link") != std::string::npos;
    }
    try {
      io::has_dataset(to_fifo, "/g/vp");
    } catch (const InputError& e) {
      refused += std::string(e.what()).find("/g/vp is reached through an external link") != std::string::npos;
    }
    ::_exit(refused == 2 ? 0 : 1);
  }
  int status = -1;
  for (int tries = 0; tries < 200 && ::waitpid(child, &status, WNOHANG) == 0; ++tries) ::usleep(50000);
  if (status == -1) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    FAIL() << "reading through a link to a FIFO blocked";
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a link to a FIFO not refused as one";
  auto with_layout = [&](const std::function<void(hid_t dcpl, hid_t space)>& set) {
    return [&, set](hid_t f) {
      hid_t space = H5Screate_simple(2, dims, nullptr);
      hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
      set(dcpl, space);
      hid_t d = H5Dcreate2(f, "vp", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      put_pair(d, "spacing", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, kTen);
      H5Dclose(d);
      H5Pclose(dcpl);
      H5Sclose(space);
    };
  };
  expect_refused_model(
      foreign_model("raw.h5", with_layout([&](hid_t dcpl, hid_t) { H5Pset_external(dcpl, fifo.c_str(), 0, 80); })),
      "/vp keeps its values in external raw files");
  // A virtual dataset reads fill values where a source is missing, in another file or this one.
  for (const std::string& source : {real, std::string(".")})
    expect_refused_model(foreign_model("virtual.h5", with_layout([&](hid_t dcpl, hid_t space) {
                                         H5Pset_virtual(dcpl, space, source.c_str(), "/missing", space);
                                       })),
                         "/vp is a virtual dataset");
}

TEST(Io, AFileHdf5CannotOpenIsNamedForWhatItIs) {
  // Not HDF5 at all, HDF5 cut short, a /receiver/count beyond any integer: each said as it is.
  const std::string text = scratch("text.h5").string(), cut = scratch("cut.h5").string();
  std::ofstream(text) << "vp = 1500\n";
  expect_refused_model(text, text + ": not an HDF5 file");
  Model m;
  m.nz = m.nx = 10;
  m.dz = m.dx = 10;
  m.vp.assign(100, 1500);
  io::write_model(cut, m);
  fs::resize_file(cut, 1000);
  expect_refused_model(cut, cut + ": an HDF5 file that HDF5 cannot open (damaged or truncated)");
  SurveyOptions so;
  so.nshots = 1;
  so.dt = 1e-3;
  so.t_max = 0.01;
  so.frequency = 200;
  const std::string p = scratch("counted.h5").string();
  io::write_survey(p, regular_survey(m, so), &m);
  hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hsize_t one = 1;
  const double count = 1e300;
  hid_t s = H5Screate_simple(1, &one, nullptr);
  hid_t d = H5Dcreate2(f, "/receiver/count", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &count);
  H5Dclose(d);
  H5Sclose(s);
  H5Fclose(f);
  try {
    io::read_survey(p, false);
    ADD_FAILURE() << "a count of 1e300 read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/receiver/count of shot 0 is 1e+300"), std::string::npos) << e.what();
  }
  // The survey's root carries its model's grid, which is no spacing of its positions.
  EXPECT_FALSE(io::read_geometry(p, "/receiver/position").has_spacing);
}

TEST(Io, AttributesAsOtherToolsWriteThem) {
  // Spacing on the root only (h5py's f.attrs): read there, as a picture's scale and a model's
  // grid. A bool (h5py's enum) is no spacing. A file its writer left open for writing says so.
  const hsize_t dims[2] = {4, 5};
  const std::vector<float> v(20, 1500.0f);
  auto plain_vp = [&](hid_t f) {
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t d = H5Dcreate2(f, "vp", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    H5Dclose(d);
    H5Sclose(space);
  };
  const Model m = io::read_model(foreign_model("root.h5", plain_vp, true));
  EXPECT_EQ(m.dz, 10);
  EXPECT_EQ(m.dx, 10);
  EXPECT_EQ(io::read_geometry(scratch("root.h5").string(), "/vp").spacing[0], 10);
  expect_refused_model(foreign_model("bool.h5",
                                     [&](hid_t f) {
                                       plain_vp(f);
                                       hid_t e = H5Tenum_create(H5T_NATIVE_INT8);
                                       const signed char no = 0, yes = 1, sp[2] = {1, 1};
                                       H5Tenum_insert(e, "FALSE", &no);
                                       H5Tenum_insert(e, "TRUE", &yes);
                                       hid_t d = H5Dopen2(f, "vp", H5P_DEFAULT);
                                       put_pair(d, "spacing", e, e, sp);
                                       H5Dclose(d);
                                       H5Tclose(e);
                                     }),
                       "cannot read attribute 'spacing' on /vp as numbers");
  // A perturbation whose writer kept its spacing in float32 lies on the model's grid all the same.
  Model grid = m;
  grid.dz = grid.dx = 7.3;
  grid.vp.assign(20, 1500);
  io::write_model(scratch("grid.h5").string(), grid);
  const std::string f32 = foreign_model("f32.h5", [&](hid_t f) {
    plain_vp(f);
    const float sp[2] = {7.3f, 7.3f};
    hid_t d = H5Dopen2(f, "vp", H5P_DEFAULT);
    put_pair(d, "spacing", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, sp);
    H5Dclose(d);
  });
  EXPECT_EQ(io::read_perturbation(f32, grid).size(), 20u);
  grid.dx = 7.4;
  EXPECT_THROW(io::read_perturbation(f32, grid), InputError);
  // An origin beyond ±1e15 m (no survey lies there; no axis can place its cells) is refused.
  Model far = m;
  far.x0 = 1e16;
  EXPECT_THROW(far.validate("far"), InputError);
  far.x0 = -1e15;
  EXPECT_NO_THROW(far.validate("far"));
  const std::string open = scratch("left-open.h5").string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a writer that stops without closing its file (SWMR's format marks it open)
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t f = H5Fcreate(open.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    plain_vp(f);
    H5Fflush(f, H5F_SCOPE_GLOBAL);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  expect_refused_model(open, "marked as open for writing by another program");
  expect_refused_model(open, "h5clear -s " + open);
}

}  // namespace
}  // namespace starwave
