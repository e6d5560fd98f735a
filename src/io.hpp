// src/io.hpp — HDF5 files of DESIGN §4. Readers check every shape and attribute and throw
// InputError naming the file and the dataset; writers are atomic (temporary + rename).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "src/model.hpp"
#include "src/survey.hpp"

namespace starwave::io {

Model read_model(const std::string& path);
void write_model(const std::string& path, const Model& m);

/// Reads a survey; with `need_data` the file must also hold /data.
Survey read_survey(const std::string& path, bool need_data);

/// Writes a survey (and its data when present); `model` supplies spacing/origin attributes.
void write_survey(const std::string& path, const Survey& s, const Model* model);

/// A 2-D float array read from any file (for plotting): dataset name → values.
struct Array2D {
  int rows = 0, cols = 0;
  std::vector<float> values;
};
Array2D read_slice(const std::string& path, const std::string& dataset, int index);

/// Refuses (InputError) when `path` exists and `overwrite` is false, or when its folder
/// does not exist. Call before any work so a run never ends in a refused write.
void check_output(const std::string& path, bool overwrite);

}  // namespace starwave::io
