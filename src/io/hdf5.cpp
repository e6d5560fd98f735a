// src/io/hdf5.cpp — see hdf5.hpp.
#include "src/io/hdf5.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "src/base/error.hpp"
#include "src/io/hdf5_detail.hpp"
#include "src/memory/room.hpp"
#include "src/safety/outputs.hpp"

namespace starwave::io {
using namespace detail;  // the HDF5 helpers (hdf5_detail.hpp)

namespace {

/// Where attribute `name` of dataset `d` (`dataset`) is read: on the dataset, else — for a
/// model's /vp — on the file's root `f` when only the root has it (as h5py's `f.attrs` writes
/// it), and that place's name. Other datasets' roots carry their model's grid, not theirs.
std::pair<hid_t, std::string> holder(hid_t d, hid_t f, const char* name, const std::string& dataset) {
  if (dataset == "/vp" && H5Aexists(d, name) <= 0 && H5Aexists(f, name) > 0) return {f, "the root"};
  return {d, dataset};
}

/// A model file's grid and /vp values, unchecked; `has_origin`: whether /vp carries an origin
/// (else the grid starts at 0).
Model read_grid(const std::string& path, bool* has_origin = nullptr) {
  Hid f = open_file(path);
  std::vector<hsize_t> dims;
  const std::vector<double> v = read_dataset(f, path, "/vp", dims);
  if ((dims.size() != 2 && dims.size() != 3) || std::find(dims.begin(), dims.end(), 0) != dims.end())
    throw InputError(path + ": /vp must be a 2-D array (nz, nx) or a 3-D one (nz, ny, nx), got shape " +
                     shape_text(dims));
  for (hsize_t n : dims)
    if (n > hsize_t(INT32_MAX))
      throw InputError(path + ": /vp of shape " + shape_text(dims) + " has more than 2^31 cells along an axis");
  Model m;
  m.dim = int(dims.size());
  m.nz = int(dims[0]);
  m.ny = m.three_d() ? int(dims[1]) : 1;
  m.nx = int(dims.back());
  m.vp = v;
  Hid d = open_dataset(f, path, "/vp");
  const std::size_t D = dims.size();
  const auto [sp, sp_where] = holder(d, f, "spacing", "/vp");
  const std::vector<double> spacing = read_attribute(sp, path, sp_where, "spacing", D);
  m.dz = spacing[0];
  m.dy = m.three_d() ? spacing[1] : 0;
  m.dx = spacing.back();
  const auto [og, og_where] = holder(d, f, "origin", "/vp");
  const bool origin_given = H5Aexists(og, "origin") > 0;
  if (has_origin) *has_origin = origin_given;
  if (origin_given) {
    const std::vector<double> origin = read_attribute(og, path, og_where, "origin", D);
    m.z0 = origin[0];
    m.y0 = m.three_d() ? origin[1] : 0;
    m.x0 = origin.back();
  }
  return m;
}

}  // namespace

Model read_model(const std::string& path) {
  Model m = read_grid(path);
  m.validate(path);
  return m;
}

std::vector<double> read_perturbation(const std::string& path, const Model& m) {
  bool has_origin = false;
  const Model p = read_grid(path, &has_origin);  // NaN and infinities refused as they are read
  auto cells = [](const Model& g) {
    return std::to_string(g.nz) + (g.three_d() ? " × " + std::to_string(g.ny) : "") + " × " + std::to_string(g.nx);
  };
  auto triple = [](const Model& g, double z, double y, double x) {
    return "(" + number_text(z) + (g.three_d() ? ", " + number_text(y) : "") + ", " + number_text(x) + ") m";
  };
  if (p.dim != m.dim || p.nz != m.nz || p.ny != m.ny || p.nx != m.nx)
    throw InputError(path + ": /vp's grid (" + cells(p) + " cells) is not the model's (" + cells(m) + " cells)");
  // Spacing and origin compared as float32 rounds them: one writer's float32 is another's float64.
  auto same = [](double a, double b) { return float(a) == float(b); };
  if (!(same(p.dz, m.dz) && same(p.dy, m.dy) && same(p.dx, m.dx)))
    throw InputError(path + ": /vp's spacing " + triple(p, p.dz, p.dy, p.dx) + " is not the model's " +
                     triple(m, m.dz, m.dy, m.dx));
  // Without an origin the perturbation is on the model's grid; with one, it must be the model's.
  if (has_origin && !(same(p.z0, m.z0) && same(p.y0, m.y0) && same(p.x0, m.x0)))
    throw InputError(path + ": /vp's origin " + triple(p, p.z0, p.y0, p.x0) + " is not the model's " +
                     triple(m, m.z0, m.y0, m.x0));
  return p.vp;
}

namespace {
void write_model_attributes(hid_t obj, const Model& m) {
  if (m.three_d()) {
    write_attribute(obj, "spacing", {m.dz, m.dy, m.dx});
    write_attribute(obj, "origin", {m.z0, m.y0, m.x0});
  } else {
    write_attribute(obj, "spacing", {m.dz, m.dx});
    write_attribute(obj, "origin", {m.z0, m.x0});
  }
}

/// A model-sized dataset's shape: (nz, nx) or (nz, ny, nx).
std::vector<hsize_t> model_dims(const Model& m) {
  if (m.three_d()) return {hsize_t(m.nz), hsize_t(m.ny), hsize_t(m.nx)};
  return {hsize_t(m.nz), hsize_t(m.nx)};
}

/// Positions as rows of D values ([z, x] or [z, y, x]).
void append_position(std::vector<double>& out, const Position& p, int dim) {
  out.push_back(p.z);
  if (dim == 3) out.push_back(p.y);
  out.push_back(p.x);
}
Position position_at(const std::vector<double>& v, std::size_t row, int dim) {
  const std::size_t k = row * std::size_t(dim);
  return dim == 3 ? Position{v[k], v[k + 1], v[k + 2]} : Position{v[k], v[k + 1]};
}
}  // namespace

void write_model(const std::string& path, const Model& m) {
  require_finite_output(m.vp.data(), m.vp.size(), path, "/vp");
  m.validate(path);  // and what its float32 /vp can hold
  write_atomically(path, [&](hid_t f) {
    write_dataset(f, "/vp", model_dims(m), H5T_IEEE_F32LE, H5T_NATIVE_DOUBLE, m.vp.data());
    Hid d(H5Dopen2(f, "/vp", H5P_DEFAULT), H5Dclose);
    write_model_attributes(d, m);
    write_model_attributes(f, m);
  });
}

void write_fields(const std::string& path, const Model& m, const std::map<std::string, std::vector<double>>& fields,
                  const std::map<std::string, double>& scalars,
                  const std::map<std::string, std::vector<double>>& series,
                  const std::vector<std::vector<float>>& wavelets, const Tables& tables) {
  for (const auto& [name, v] : fields) require_finite_output(v.data(), v.size(), path, name);
  for (const auto& [name, t] : tables) require_finite_output(t.second.data(), t.second.size(), path, name);
  const std::vector<double> w = wavelet_values(wavelets, path);
  for (const auto& [name, v] : series) require_finite_output(v.data(), v.size(), path, name);
  for (const auto& [name, v] : scalars) require_finite_output(&v, 1, path, "attribute " + name);
  write_atomically(path, [&](hid_t f) {
    write_model_attributes(f, m);
    for (const auto& [name, v] : scalars) write_attribute(f, name, {v});
    for (const auto& [name, v] : fields) {
      if (v.size() != m.cells()) throw RuntimeError(path + ": field " + name + " is not of the model's shape");
      write_dataset(f, name, model_dims(m), H5T_IEEE_F32LE, H5T_NATIVE_DOUBLE, v.data());
      Hid d(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose);
      write_model_attributes(d, m);
    }
    for (const auto& [name, v] : series)
      write_dataset(f, name, {hsize_t(v.size())}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v.data());
    write_wavelets(f, wavelets, w);
    for (const auto& [name, t] : tables)
      write_dataset(f, name, {hsize_t(t.first), hsize_t(t.second.size() / std::max<std::size_t>(t.first, 1))},
                    H5T_IEEE_F32LE, H5T_NATIVE_DOUBLE, t.second.data());
  });
}

void write_fwi_result(const std::string& path, const Model& m, const std::vector<double>& misfit_history,
                      const std::vector<double>& band_history, const std::vector<double>& bands,
                      const std::map<std::string, double>& settings, const std::vector<std::vector<float>>& wavelets) {
  require_finite_output(m.vp.data(), m.vp.size(), path, "/vp");
  const std::vector<double> w = wavelet_values(wavelets, path);
  write_atomically(path, [&](hid_t f) {
    write_dataset(f, "/vp", model_dims(m), H5T_IEEE_F32LE, H5T_NATIVE_DOUBLE, m.vp.data());
    Hid d(H5Dopen2(f, "/vp", H5P_DEFAULT), H5Dclose);
    write_model_attributes(d, m);
    write_model_attributes(f, m);
    for (const auto& [name, v] : settings) write_attribute(f, name, {v});
    write_dataset(f, "/history/misfit", {hsize_t(misfit_history.size())}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                  misfit_history.data());
    write_dataset(f, "/history/band", {hsize_t(band_history.size())}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                  band_history.data());
    if (!bands.empty())
      write_dataset(f, "/bands", {hsize_t(bands.size())}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, bands.data());
    write_wavelets(f, wavelets, w);
  });
}

namespace {

/// The receivers' positions (shared or per shot), counts and weights of survey file `f` into `s`
/// (its ns shots and dimension read).
void read_receivers(const Hid& f, const std::string& path, std::size_t ns, Survey& s) {
  std::vector<hsize_t> dims;
  const hsize_t D = hsize_t(s.dim);
  const std::vector<double> rec = read_dataset(f, path, "/receiver/position", dims);
  if (dims.size() == 2 && dims[1] == D && dims[0] > 0) {
    s.receivers.emplace_back();
    for (std::size_t i = 0; i < dims[0]; ++i) s.receivers[0].push_back(position_at(rec, i, s.dim));
  } else if (dims.size() == 3 && dims[0] == ns && dims[2] == D && dims[1] > 0) {
    for (std::size_t shot = 0; shot < ns; ++shot) {
      s.receivers.emplace_back();
      for (std::size_t i = 0; i < dims[1]; ++i)
        s.receivers.back().push_back(position_at(rec, shot * dims[1] + i, s.dim));
    }
  } else {
    const std::string d = std::to_string(s.dim);
    throw InputError(path + ": /receiver/position must have shape (nrec, " + d + ") or (nshots, nrec, " + d +
                     ") like /source/position, got " + shape_text(dims));
  }

  if (has_link(f, "/receiver/count")) {
    const std::vector<double> c = read_dataset(f, path, "/receiver/count", dims);
    if (dims.size() != 1 || dims[0] != ns)
      throw InputError(path + ": /receiver/count must have shape (nshots,) = (" + std::to_string(ns) + ",), got " +
                       shape_text(dims));
    for (std::size_t k = 0; k < c.size(); ++k) {
      if (c[k] != std::floor(c[k])) throw InputError(path + ": /receiver/count must hold whole numbers");
      // Past 2^62 no count can be right (Survey::check says against what); no cast overflows.
      if (!(std::fabs(c[k]) < 0x1p62))
        throw InputError(path + ": /receiver/count of shot " + std::to_string(k) + " is " + number_text(c[k]) +
                         ", not between 1 and nrec = " + std::to_string(s.nrec()));
      s.counts.push_back(int64_t(c[k]));
    }
  }
  if (has_link(f, "/receiver/weight")) {
    const std::vector<double> wt = read_dataset(f, path, "/receiver/weight", dims);
    const hsize_t nr = hsize_t(s.nrec());
    if (!((dims.size() == 1 && dims[0] == nr) || (dims.size() == 2 && dims[0] == ns && dims[1] == nr)))
      throw InputError(path + ": /receiver/weight must have shape (nrec,) or (nshots, nrec), got " + shape_text(dims));
    s.weights.assign(wt.begin(), wt.end());
  }
}

/// The observed data /data of survey file `f` into `s` (the shots load_shot asks for, all
/// without it), one shot (one chunk) at a time, every sample finite.
void read_data(const Hid& f, const std::string& path, std::size_t ns, const std::function<bool(int)>& load_shot,
               Survey& s) {
  std::vector<hsize_t> dims;
  if (!has_link(f, "/data")) throw InputError(path + ": missing dataset /data");
  Hid d = open_dataset(f, path, "/data");
  if (!d.ok()) throw InputError(path + ": cannot open dataset /data");
  Hid space(H5Dget_space(d), H5Sclose);
  dims.assign(std::size_t(std::max(0, H5Sget_simple_extent_ndims(space))), 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  const std::vector<hsize_t> want = {ns, hsize_t(s.nrec()), hsize_t(s.nt)};
  if (dims != want)
    throw InputError(path + ": /data must have shape " + shape_text(want) + " (nshots, nrec, nt), got " +
                     shape_text(dims));
  Hid type(H5Dget_type(d), H5Tclose);
  if (H5Tget_class(type) != H5T_FLOAT && H5Tget_class(type) != H5T_INTEGER)
    throw InputError(path + ": dataset /data is not numeric");
  const hsize_t per_shot = want[1] * want[2];
  std::vector<int> shots;
  for (int k = 0; k < int(ns); ++k)
    if (!load_shot || load_shot(k)) shots.push_back(k);
  const memory::MemoryUse use(path + ": /data");
  memory::require_memory(
      count_of({hsize_t(shots.size()), want[1], want[2]}), sizeof(float),
      path + ": /data of shape " + shape_text(want) + " (" + std::to_string(shots.size()) + " shots read)");
  s.data.resize(shots.size() * per_shot);
  const hsize_t count[3] = {1, want[1], want[2]};
  Hid mem(H5Screate_simple(3, count, nullptr), H5Sclose);  // the selection's shape (see read_slice)
  for (std::size_t i = 0; i < shots.size(); ++i) {         // one shot (one chunk) at a time
    const hsize_t start[3] = {hsize_t(shots[i]), 0, 0};
    check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr),
          path + ": selecting a shot of /data");
    if (H5Dread(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, s.data.data() + i * per_shot) < 0)
      throw InputError(path + ": cannot read shot " + std::to_string(shots[i]) + " of /data" + read_failure(d));
    require_finite_input(s.data.data() + i * per_shot, per_shot, path, "/data (shot " + std::to_string(shots[i]) + ")");
  }
  if (load_shot) s.data_shots = shots;
}

}  // namespace

Survey read_survey(const std::string& path, bool need_data, const std::function<bool(int)>& load_shot) {
  Hid f = open_file(path);
  Survey s;
  s.dt = read_attribute(f, path, "the root", "dt", 1)[0];
  const double nt = read_attribute(f, path, "the root", "nt", 1)[0];
  s.nt = int64_t(nt);
  if (double(s.nt) != nt || s.nt < 2) throw InputError(path + ": attribute nt must be an integer ≥ 2");

  std::vector<hsize_t> dims;
  const std::vector<double> src = read_dataset(f, path, "/source/position", dims);
  if (dims.size() != 2 || (dims[1] != 2 && dims[1] != 3) || dims[0] == 0)
    throw InputError(path + ": /source/position must have shape (nshots, 2) [z, x] or (nshots, 3) [z, y, x], got " +
                     shape_text(dims));
  const std::size_t ns = dims[0];
  s.dim = int(dims[1]);
  for (std::size_t i = 0; i < ns; ++i) s.sources.push_back(position_at(src, i, s.dim));

  const std::vector<double> w = read_dataset(f, path, "/source/wavelet", dims);
  if (dims.size() == 1 && int64_t(dims[0]) == s.nt) {
    s.wavelets.emplace_back(w.begin(), w.end());
  } else if (dims.size() == 2 && dims[0] == ns && int64_t(dims[1]) == s.nt) {
    for (std::size_t i = 0; i < ns; ++i)
      s.wavelets.emplace_back(w.begin() + long(i * s.nt), w.begin() + long((i + 1) * s.nt));
  } else {
    throw InputError(path + ": /source/wavelet must have shape (nt,) or (nshots, nt) = (" + std::to_string(ns) + ", " +
                     std::to_string(s.nt) + "), got " + shape_text(dims));
  }

  read_receivers(f, path, ns, s);
  if (need_data || has_link(f, "/data")) read_data(f, path, ns, load_shot, s);
  s.validate(path);
  return s;
}

namespace {

/// Everything of a survey file but /data.
void write_survey_contents(hid_t f, const Survey& s, const Model* model) {
  write_attribute(f, "dt", {s.dt});
  write_attribute_int(f, "nt", s.nt);
  if (model) write_model_attributes(f, *model);
  const hsize_t ns = hsize_t(s.nshots());
  const hsize_t D = hsize_t(s.dim);
  std::vector<double> src;
  for (const auto& p : s.sources) append_position(src, p, s.dim);
  write_dataset(f, "/source/position", {ns, D}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, src.data());
  std::vector<float> w;
  for (const auto& x : s.wavelets) w.insert(w.end(), x.begin(), x.end());
  if (s.wavelets.size() == 1)
    write_dataset(f, "/source/wavelet", {hsize_t(s.nt)}, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, w.data());
  else
    write_dataset(f, "/source/wavelet", {ns, hsize_t(s.nt)}, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, w.data());
  std::vector<double> rec;
  for (const auto& r : s.receivers)
    for (const auto& p : r) append_position(rec, p, s.dim);
  const hsize_t nr = hsize_t(s.nrec());
  if (s.receivers.size() == 1)
    write_dataset(f, "/receiver/position", {nr, D}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rec.data());
  else
    write_dataset(f, "/receiver/position", {ns, nr, D}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rec.data());
  if (!s.counts.empty()) write_dataset(f, "/receiver/count", {ns}, H5T_STD_I64LE, H5T_NATIVE_INT64, s.counts.data());
  if (!s.weights.empty()) {
    if (s.weights.size() == std::size_t(nr))
      write_dataset(f, "/receiver/weight", {nr}, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, s.weights.data());
    else
      write_dataset(f, "/receiver/weight", {ns, nr}, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, s.weights.data());
  }
}

/// /data's dims.
std::vector<hsize_t> data_dims(const Survey& s) { return {hsize_t(s.nshots()), hsize_t(s.nrec()), hsize_t(s.nt)}; }

/// /data's chunk: one shot, or the part of one that stays under HDF5's 4 GiB chunk limit
/// (halving the receivers first, then the samples).
std::vector<hsize_t> data_chunk(const std::vector<hsize_t>& dims) {
  std::vector<hsize_t> c = {1, dims[1], dims[2]};
  while (c[1] * c[2] * sizeof(float) >= (hsize_t(1) << 32)) {
    if (c[1] > 1)
      c[1] = (c[1] + 1) / 2;
    else
      c[2] = (c[2] + 1) / 2;
  }
  return c;
}

}  // namespace

void write_survey(const std::string& path, const Survey& s, const Model* model) {
  if (!s.data_shots.empty()) throw RuntimeError(path + ": a survey holding only some shots' data cannot be written");
  for (const auto& w : s.wavelets) require_finite_output(w.data(), w.size(), path, "/source/wavelet");
  require_finite_output(s.data.data(), s.data.size(), path, "/data");
  write_atomically(path, [&](hid_t f) {
    write_survey_contents(f, s, model);
    if (!s.data.empty()) {
      const std::vector<hsize_t> dims = data_dims(s);
      write_dataset(f, "/data", dims, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, s.data.data(), data_chunk(dims));
    }
  });
}

static_assert(sizeof(hid_t) == sizeof(std::int64_t), "DataWriter keeps hid_t values as int64");

DataWriter::DataWriter(const std::string& path, const Survey& s, const Model* model)
    : path_(path), tmp_(std::make_unique<safety::Temporary>(path)), written_(std::size_t(s.nshots()), false) {
  const std::vector<hsize_t> dims = data_dims(s);
  shot_values_ = dims[1] * dims[2];
  const double bytes = double(dims[0]) * double(shot_values_) * sizeof(float);
  safety::require_disk(path, bytes < 1.8e19 ? std::uint64_t(bytes) : UINT64_MAX, "/data");
  try {
    file_ = H5Fcreate(tmp_->path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file_ < 0) throw InputError(path + ": cannot create the output file: " + os_cause(errno));
    try {
      write_survey_contents(file_, s, model);
    } catch (const RuntimeError& e) {
      throw RuntimeError(path + ": " + e.what());
    }
    Hid space(H5Screate_simple(3, dims.data(), nullptr), H5Sclose);
    Hid dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    check(H5Pset_chunk(dcpl, 3, data_chunk(dims).data()), path + ": chunking /data");
    data_ = H5Dcreate2(file_, "/data", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    check(data_ < 0 ? -1 : 0, path + ": creating dataset /data");
  } catch (...) {
    close_and_remove();
    throw;
  }
}

DataWriter::~DataWriter() { close_and_remove(); }

void DataWriter::close_and_remove() noexcept {
  if (data_ >= 0) H5Dclose(data_);
  if (file_ >= 0) H5Fclose(file_);
  data_ = file_ = -1;
  tmp_->discard();
}

void DataWriter::write_shot(int shot, const float* traces) {
  if (shot < 0 || std::size_t(shot) >= written_.size()) throw RuntimeError(path_ + ": no shot " + std::to_string(shot));
  require_finite_output(traces, shot_values_, path_, "/data (shot " + std::to_string(shot) + ")");
  Hid file_space(H5Dget_space(data_), H5Sclose);
  const hsize_t start[3] = {hsize_t(shot), 0, 0};
  hsize_t count[3];
  check(H5Sget_simple_extent_dims(file_space, count, nullptr) == 3 ? 0 : -1, path_ + ": reading the shape of /data");
  count[0] = 1;
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
        path_ + ": selecting a shot of /data");
  Hid mem_space(H5Screate_simple(3, count, nullptr), H5Sclose);  // the selection's shape (see read_slice)
  check(H5Dwrite(data_, H5T_NATIVE_FLOAT, mem_space, file_space, H5P_DEFAULT, traces),
        path_ + ": writing shot " + std::to_string(shot) + " of /data");
  written_[std::size_t(shot)] = true;
}

void DataWriter::commit() {
  for (std::size_t i = 0; i < written_.size(); ++i)
    if (!written_[i]) throw RuntimeError(path_ + ": shot " + std::to_string(i) + " was never written");
  const herr_t closed_data = H5Dclose(data_);
  data_ = -1;
  check(closed_data, path_ + ": writing /data");
  const herr_t closed = H5Fclose(file_);
  file_ = -1;
  check(closed, path_ + ": writing the file");
  tmp_->commit();
}

bool has_dataset(const std::string& path, const std::string& dataset) {
  Hid f = open_file(path);
  return has_link(f, dataset);
}

namespace {

/// Dataset `dataset` of open file `f`, open (InputError naming it when missing or
/// unreadable), and its number of dimensions in `rank`.
Hid open_dataset(hid_t f, const std::string& path, const std::string& dataset, int& rank) {
  if (!has_link(f, dataset)) throw InputError(path + ": missing dataset " + dataset);
  Hid d = detail::open_dataset(f, path, dataset);
  if (!d.ok()) throw InputError(path + ": cannot open dataset " + dataset);
  Hid space(H5Dget_space(d), H5Sclose);
  rank = H5Sget_simple_extent_ndims(space);
  return d;
}

}  // namespace

int dataset_rank(const std::string& path, const std::string& dataset) {
  Hid f = open_file(path);
  int rank = 0;
  open_dataset(f, path, dataset, rank);
  return rank;
}

namespace {

/// The spacing and origin attributes of open dataset `d` of `rank` 2 or 3 (the 2-D ones
/// hold [z, x]); where absent, 1 m and 0 (`has_spacing` false).
Geometry geometry_of(hid_t f, hid_t d, const std::string& path, const std::string& dataset, int rank) {
  Geometry g;
  for (const char* name : {"spacing", "origin"}) {
    const auto [at, where] = holder(d, f, name, dataset);
    if (H5Aexists(at, name) <= 0) continue;
    const std::vector<double> a = read_attribute(at, path, where, name, rank);
    const bool spacing = std::string(name) == "spacing";
    auto& to = spacing ? g.spacing : g.origin;
    for (double x : a)  // read_attribute refused NaN and Inf
      if (spacing && !(x > 0)) {
        std::ostringstream os;
        os << path << ": " << dataset << "'s spacing attribute holds " << x << "; a spacing must be positive (m)";
        throw InputError(os.str());
      }
    to = rank == 3 ? std::array<double, 3>{a[0], a[1], a[2]} : std::array<double, 3>{a[0], to[1], a[1]};
    g.has_spacing = g.has_spacing || spacing;
  }
  return g;
}

/// A whole 3-D dataset (or 2-D, when `two_d`) with its shape and geometry (also in `g`).
Volume read_values(const std::string& path, const std::string& dataset, bool two_d, Geometry& g) {
  Hid f = open_file(path);
  if (!has_link(f, dataset)) throw InputError(path + ": missing dataset " + dataset);
  std::vector<hsize_t> dims;
  const std::vector<double> v = read_dataset(f, path, dataset, dims);
  if ((dims.size() != 3 && !(two_d && dims.size() == 2)) || std::find(dims.begin(), dims.end(), 0) != dims.end())
    throw InputError(path + ": " + dataset + " is not a non-empty " + (two_d ? "2-D or " : "") + "3-D array (shape " +
                     shape_text(dims) + ")");
  for (hsize_t n : dims)
    if (n > hsize_t(INT32_MAX))
      throw InputError(path + ": " + dataset + " of shape " + shape_text(dims) + " is too large");
  const bool three = dims.size() == 3;
  Volume out;
  out.nz = int(dims[0]);
  out.ny = three ? int(dims[1]) : 1;
  out.nx = int(dims[three ? 2 : 1]);
  out.values.assign(v.begin(), v.end());
  Hid d = open_dataset(f, path, dataset);
  g = geometry_of(f, d, path, dataset, int(dims.size()));
  out.spacing = g.spacing;
  out.origin = g.origin;
  return out;
}

}  // namespace

Geometry read_geometry(const std::string& path, const std::string& dataset) {
  Hid f = open_file(path);
  int rank = 0;
  Hid d = open_dataset(f, path, dataset, rank);
  if (rank != 2 && rank != 3) throw InputError(path + ": " + dataset + " is not a 2-D or 3-D array");
  return geometry_of(f, d, path, dataset, rank);
}

Volume read_volume(const std::string& path, const std::string& dataset) {
  Geometry g;
  return read_values(path, dataset, false, g);
}

Volume read_field(const std::string& path, const std::string& dataset) {
  Geometry g;
  Volume out = read_values(path, dataset, true, g);
  if (!g.has_spacing) throw InputError(path + ": " + dataset + " has no spacing attribute (the grid's cell size)");
  return out;
}

Array2D read_slice(const std::string& path, const std::string& dataset, int index) {
  Hid f = open_file(path);
  if (!has_link(f, dataset)) throw InputError(path + ": missing dataset " + dataset);
  Hid d = open_dataset(f, path, dataset);
  if (!d.ok()) throw InputError(path + ": cannot open dataset " + dataset);
  Hid type(H5Dget_type(d), H5Tclose);
  if (H5Tget_class(type) != H5T_FLOAT && H5Tget_class(type) != H5T_INTEGER)
    throw InputError(path + ": dataset " + dataset + " is not numeric");
  Hid space(H5Dget_space(d), H5Sclose);
  std::vector<hsize_t> dims(std::size_t(std::max(0, H5Sget_simple_extent_ndims(space))));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  if (dims.size() != 2 && dims.size() != 3)
    throw InputError(path + ": " + dataset + " is not a 2-D or 3-D array (shape " + shape_text(dims) + ")");
  const bool layered = dims.size() == 3;
  const hsize_t rows = dims[layered ? 1 : 0], cols = dims[layered ? 2 : 1];
  if (rows == 0 || cols == 0 || (layered && dims[0] == 0))
    throw InputError(path + ": " + dataset + " is empty (shape " + shape_text(dims) + ")");
  if (rows > hsize_t(INT32_MAX) || cols > hsize_t(INT32_MAX))
    throw InputError(path + ": " + dataset + " of shape " + shape_text(dims) + " is too large to draw");
  if (layered && (index < 0 || hsize_t(index) >= dims[0]))
    throw InputError(path + ": index " + std::to_string(index) + " is outside " + dataset + " of shape " +
                     shape_text(dims));
  const memory::MemoryUse use(path + ": " + dataset);
  memory::require_memory(count_of({rows, cols}), sizeof(float) + 3 * 4,  // the values and their picture
                         path + ": " + dataset + " of shape " + shape_text(dims));
  Array2D a;
  a.rows = int(rows);
  a.cols = int(cols);
  a.layers = layered ? int(std::min<hsize_t>(dims[0], INT32_MAX)) : 1;
  a.values.resize(rows * cols);
  // The memory space has the file selection's shape: given a flat one instead, HDF5 1.10
  // maps the two element by element (38 ms for a 400 × 3643 shot, against 0.8 ms).
  const hsize_t count[3] = {1, rows, cols};
  Hid mem(H5Screate_simple(layered ? 3 : 2, layered ? count : count + 1, nullptr), H5Sclose);
  if (layered) {
    const hsize_t start[3] = {hsize_t(index), 0, 0};
    check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr),
          path + ": selecting a slice of " + dataset);
  }
  if (H5Dread(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, a.values.data()) < 0)
    throw InputError(path + ": cannot read dataset " + dataset + read_failure(d));
  require_finite_input(a.values.data(), a.values.size(), path,
                       layered ? dataset + " (index " + std::to_string(index) + ")" : dataset);
  return a;
}

}  // namespace starwave::io
