// src/io/hdf5.hpp — HDF5 files of docs/design.md §4. Readers check every shape and attribute and throw
// InputError naming the file and the dataset; writers are atomic (temporary + rename).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/safety/outputs.hpp"

namespace starwave::io {

Model read_model(const std::string& path);
/// A model perturbation δv (`born --perturbation`): a model file whose /vp holds δv in m/s
/// (any sign), on `m`'s grid (InputError naming the file otherwise). One value a model cell.
std::vector<double> read_perturbation(const std::string& path, const Model& m);
void write_model(const std::string& path, const Model& m);

/// Writes model-sized fields (each nz × nx, row-major) as float32 datasets, with the
/// model's `spacing` and `origin` on each and on the root, plus root attributes `scalars`
/// (docs/design.md §4 outputs: /gradient, /image, /illumination …), `series`: 1-D float64
/// datasets (lsrtm's /history/misfit), and `wavelets` as /wavelet (count × nt float32, as
/// write_fwi_result writes it; none when empty).
/// `tables`: 2-D float32 datasets, name → (rows, row-major values) (the gradient's
/// /source_gradient: shots × samples).
using Tables = std::map<std::string, std::pair<std::size_t, std::vector<double>>>;
void write_fields(const std::string& path, const Model& m, const std::map<std::string, std::vector<double>>& fields,
                  const std::map<std::string, double>& scalars,
                  const std::map<std::string, std::vector<double>>& series = {},
                  const std::vector<std::vector<float>>& wavelets = {}, const Tables& tables = {});

/// Named float64 arrays and scalars, stored exactly (restart states), and texts: arrays as
/// 1-D float64 datasets, scalars and texts as root attributes. Written atomically.
struct Record {
  std::map<std::string, std::vector<double>> arrays;
  std::map<std::string, double> scalars;
  std::map<std::string, std::string> texts;
};
void write_record(const std::string& path, const Record& r);
/// Reads the named arrays and scalars back (InputError naming the file and the missing one).
Record read_record(const std::string& path, const std::vector<std::string>& arrays,
                   const std::vector<std::string>& scalars);

/// Every text attribute on the root of `path` (written by write_record), by name.
std::map<std::string, std::string> read_texts(const std::string& path);

/// The result of `starwave fwi`: /vp (float32, model attributes), /history/misfit and
/// /history/band (float64: each band's starting misfit, then one per iteration, and the
/// band index of each), /bands (Hz, when frequency continuation was used), /wavelet (the
/// estimated wavelets, count × nt float32, when there are some), and the settings as root
/// attributes.
void write_fwi_result(const std::string& path, const Model& m, const std::vector<double>& misfit_history,
                      const std::vector<double>& band_history, const std::vector<double>& bands,
                      const std::map<std::string, double>& settings,
                      const std::vector<std::vector<float>>& wavelets = {});

/// Reads a survey; with `need_data` the file must also hold /data. `load_shot`, when
/// given, picks the shots whose traces are read (one hyperslab each: under MPI a rank
/// reads only its own shots); Survey::data_shots then lists them.
Survey read_survey(const std::string& path, bool need_data, const std::function<bool(int shot)>& load_shot = {});

/// Writes a survey (and its data when present); `model` supplies spacing/origin attributes.
void write_survey(const std::string& path, const Survey& s, const Model* model);

/// A data file written shot by shot: the survey at once, then /data (nshots, nrec, nt)
/// one shot at a time as shots finish, into a temporary file beside `path`; commit()
/// renames it into place once every shot is in. Destroyed uncommitted (an error, an
/// interrupted run), it removes the temporary: `path` is never half-written.
class DataWriter {
 public:
  DataWriter(const std::string& path, const Survey& s, const Model* model);
  ~DataWriter();
  DataWriter(const DataWriter&) = delete;
  DataWriter& operator=(const DataWriter&) = delete;
  void write_shot(int shot, const float* traces);  // nrec × nt values
  void commit();

 private:
  void close_and_remove() noexcept;
  std::string path_;
  std::unique_ptr<safety::Temporary> tmp_;
  std::int64_t file_ = -1, data_ = -1;  // HDF5 ids
  unsigned long long shot_values_ = 0;
  std::vector<bool> written_;
};

/// A 2-D float array read from any file (for plotting): dataset name → values.
struct Array2D {
  int rows = 0, cols = 0;
  int layers = 1;  // slices along the first axis of a 3-D dataset (1 for a 2-D one)
  std::vector<float> values;
};
/// Whether `path` (an HDF5 file: InputError otherwise) holds `dataset`.
bool has_dataset(const std::string& path, const std::string& dataset);

/// The number of dimensions of `dataset` (InputError when it is missing).
int dataset_rank(const std::string& path, const std::string& dataset);

/// A whole 3-D dataset (nz, ny, nx) with its `spacing` and `origin` attributes when it
/// has them (else 1 m and 0): 3-D models, gradients and images, for plotting.
struct Volume {
  int nz = 0, ny = 0, nx = 0;
  std::vector<float> values;
  std::array<double, 3> spacing{1, 1, 1}, origin{0, 0, 0};  // [z, y, x], m
};
Volume read_volume(const std::string& path, const std::string& dataset);
/// A 2-D (ny = 1) or 3-D dataset with its spacing (required) and origin attributes.
Volume read_field(const std::string& path, const std::string& dataset);

/// The `spacing` and `origin` attributes ([z, y, x], m) of a 2-D or 3-D dataset, without
/// reading its values: 1 m and 0 where absent (`has_spacing` false).
struct Geometry {
  std::array<double, 3> spacing{1, 1, 1}, origin{0, 0, 0};
  bool has_spacing = false;
};
Geometry read_geometry(const std::string& path, const std::string& dataset);

/// A 2-D dataset, or slice `index` of a 3-D one (only that slice is read). Non-finite
/// values are refused (InputError naming the file and dataset).
Array2D read_slice(const std::string& path, const std::string& dataset, int index);

}  // namespace starwave::io
