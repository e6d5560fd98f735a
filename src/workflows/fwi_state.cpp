// src/workflows/fwi_state.cpp — see fwi_state.hpp.
#include "src/workflows/fwi_state.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "graph/data.hpp"
#include "src/base/checksum.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/runtime/mpi.hpp"
#include "src/workflows/data_fit.hpp"

namespace starwave::fwi_state {
namespace {

/// The state files this starwave's fwi writes and reads (the root's text attribute `format`).
constexpr const char* kStateFormat = "starwave fwi state 3";

/// A double as the shortest text that reads back as the same double.
std::string exact(double x) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, x).ptr;
  return std::string(text, end);
}

std::string shape_text(const std::vector<double>& v) {
  std::string t;
  for (double x : v) t += (t.empty() ? "" : " x ") + exact(x);
  return t;
}

/// The checksum of every shot's observed traces, in shot order. Collective under MPI: each
/// rank holds its own shots' traces, rank 0 gets the result (others: meaningless).
std::string traces_checksum(const Survey& s, const ObservedSource& f) {
  const std::size_t per_shot = std::size_t(s.nrec()) * std::size_t(s.nt);
  std::vector<double> halves(2 * std::size_t(s.nshots()), 0.0);  // 32-bit halves: exact in a double sum
  if (!f.checksums.empty() && f.checksums.size() != std::size_t(s.nshots()))
    throw RuntimeError("state: " + std::to_string(f.checksums.size()) + " observed-data checksums for " +
                       std::to_string(s.nshots()) + " shots (StreamedData::checksums of another file?)");
  for (int k = 0; k < s.nshots(); ++k) {
    std::vector<float> streamed;
    const float* d = s.observed(k);
    if (!d && graph::mine(k, s.nshots()) && std::size_t(k) < f.checksums.size()) {  // as checked when first read
      halves[2 * std::size_t(k)] = double(f.checksums[std::size_t(k)] >> 32);
      halves[2 * std::size_t(k) + 1] = double(f.checksums[std::size_t(k)] & 0xFFFFFFFFull);
      continue;
    }
    if (!d && f.observed && graph::mine(k, s.nshots())) {  // streamed: read one shot at a time
      streamed = f.observed(k);
      d = streamed.data();
    }
    if (d) {
      Checksum c;
      c.add_bytes(d, per_shot * sizeof(float));
      halves[2 * std::size_t(k)] = double(c.value() >> 32);
      halves[2 * std::size_t(k) + 1] = double(c.value() & 0xFFFFFFFFull);
    }
  }
  mpi::sum_to_root(halves);
  Checksum all;
  for (int k = 0; k < s.nshots(); ++k)
    all.add_word((std::uint64_t(halves[2 * std::size_t(k)]) << 32) | std::uint64_t(halves[2 * std::size_t(k) + 1]));
  return "checksum " + all.hex();
}

}  // namespace

std::string exact_text(double x) { return exact(x); }

/// Everything that determines the result of an inversion: numerical options, optimiser
/// settings, and the identity of the initial model and the data. Collective under MPI.
std::vector<Setting> made_with(const Model& m, const Survey& s, const NumericalOptions& o, const FwiOptions& f) {
  std::vector<Setting> method;
  auto add = [&](const char* key, const char* label, const std::string& value) {
    method.push_back({key, label, value});
  };
  add("optimizer", "--optimizer", optim::optimizer_name(f.optimizer));
  if (f.optimizer == optim::Optimizer::kLbfgs) {
    add("memory", "--memory", std::to_string(f.memory));
    add("first_step", "the first step (m/s)", exact(f.first_step));
  } else {
    add("learning_rate", "--learning-rate", exact(f.learning_rate));
    add("batch_shots", "--batch-shots", std::to_string(f.batch_shots));
    if (f.batch_shots > 0) add("seed", "--seed", std::to_string(f.seed));
  }
  add("smooth", "--smooth", exact(f.smooth));
  add("fix_top", "--fix-top", exact(f.fix_top));
  add("vmin", "--vmin", exact(f.vmin));
  add("vmax", "--vmax", exact(f.vmax));
  std::string bands;
  for (double b : f.bands) bands += (bands.empty() ? "" : ",") + exact(b);
  add("bands", "--bands", bands.empty() ? "none" : bands);
  if (f.misfit != imaging::Misfit::kL2)  // recorded when used, so that states made without it still resume
    add("misfit", "--misfit", misfit_name(f.misfit));
  if (!f.offsets.empty()) add("offsets", "--offsets", offsets_text(f.offsets));
  if (f.estimate != SourceEstimation::kNone)
    add("estimate_source", "--estimate-source", source_estimation_name(f.estimate));
  if (f.window.on()) add("window", "--window", window_text(f.window));
  return made_with(m, s, o, method, ObservedSource{f.observed, f.observed_checksums});
}

std::vector<Setting> made_with(const Model& m, const Survey& s, const NumericalOptions& o,
                               const std::vector<Setting>& method, const ObservedSource& f) {
  std::vector<Setting> out;
  auto add = [&](const char* key, const char* label, const std::string& value) { out.push_back({key, label, value}); };
  add("order", "--order", std::to_string(o.order));
  add("pml_width", "--pml-width", std::to_string(o.pml_width));
  if (o.pml_inset >= 0)  // recorded when set, so that states made without it still resume
    add("pml_inset", "--pml-inset", std::to_string(o.pml_inset));
  add("free_surface", "--free-surface", o.free_surface ? "on" : "off");
  add("precision", "--precision", o.precision == Precision::kDouble ? "double" : "single");
  add("storage", "--storage", storage_name(o.storage));
  if (o.store_compression != pack16::kNone)  // recorded when used, so that states made without it still resume
    add("store_compression", "--store-compression", compression_name(o.store_compression));
  add("internal_dt", "--internal-dt", exact(o.internal_dt));
  add("pml_reflection", "the PML reflection target", exact(o.pml_reflection));
  if (o.pml_frequency > 0)  // recorded when set, so that states made without it still resume
    add("pml_frequency", "--pml-frequency", exact(o.pml_frequency));
  add("cfl_safety", "the time-step safety factor", exact(o.cfl_safety));
  out.insert(out.end(), method.begin(), method.end());

  const bool three = m.three_d();
  add("model_shape", "the initial model's shape (--model)",
      three ? shape_text({double(m.nz), double(m.ny), double(m.nx)}) : shape_text({double(m.nz), double(m.nx)}));
  add("model_spacing", "the initial model's spacing (--model)",
      three ? shape_text({m.dz, m.dy, m.dx}) : shape_text({m.dz, m.dx}));
  add("model_origin", "the initial model's origin (--model)",
      three ? shape_text({m.z0, m.y0, m.x0}) : shape_text({m.z0, m.x0}));
  Checksum model;
  model.add(m.vp);
  add("model_values", "the initial model's values (--model)", "checksum " + model.hex());
  // After the model, which sets it by default (fwi_numerics()).
  add("pml_velocity", "--pml-velocity", exact(o.pml_velocity > 0 ? o.pml_velocity : m.vmax()));

  add("data_dt", "the data's dt (--data)", exact(s.dt));
  add("data_nt", "the data's nt (--data)", std::to_string(s.nt));
  add("data_shots", "the data's number of shots (--data)", std::to_string(s.nshots()));
  add("data_receivers", "the data's receivers per shot (--data)", std::to_string(s.nrec()));
  Checksum geometry, wavelets;
  auto add_positions = [&](const std::vector<Position>& v) {  // [z, x] or [z, y, x] each, as the file holds them
    for (const Position& p : v) {
      geometry.add(p.z);
      if (s.dim == 3) geometry.add(p.y);
      geometry.add(p.x);
    }
  };
  add_positions(s.sources);
  for (const auto& shot : s.receivers) {
    geometry.add_word(shot.size());
    add_positions(shot);
  }
  for (const auto& w : s.wavelets) wavelets.add(w);
  add("data_geometry", "the data's source and receiver positions (--data)", "checksum " + geometry.hex());
  add("data_wavelets", "the data's wavelets (--data)", "checksum " + wavelets.hex());
  add("data_traces", "the observed traces (--data)", traces_checksum(s, f));
  if (!s.counts.empty() || !s.weights.empty()) {  // only then, so states made before these existed still resume
    Checksum traces;
    for (std::int64_t c : s.counts) traces.add_word(std::uint64_t(c));
    traces.add_word(s.counts.size());
    traces.add(s.weights);
    add("data_trace_weights", "the data's receiver counts and trace weights (--data)", "checksum " + traces.hex());
  }
  return out;
}

void check_made_with(const std::string& path, const std::vector<Setting>& now) {
  check_made_with(path, now, kStateFormat);
}

void check_made_with(const std::string& path, const std::vector<Setting>& now, const std::string& state_format) {
  if (!std::filesystem::exists(path)) throw InputError("--resume: no saved state " + path);
  const std::map<std::string, std::string> saved = io::read_texts(path);
  const auto format = saved.find("format");
  if (format == saved.end())
    throw InputError("--resume: " + path +
                     " does not record what made it (a state from an older starwave), so it cannot be checked "
                     "against this run; start again with --overwrite");
  if (format->second != state_format)
    throw InputError("--resume: " + path + " is a '" + format->second + "', this starwave reads '" + state_format +
                     "'; start again with --overwrite");
  const std::string hint = " (resume with the same settings and inputs, or start again with --overwrite)";
  // The settings recorded only when they differ from their default: absent, they were that.
  struct Optional {
    const char *label, *absent;
  };
  const std::map<std::string, Optional> optional = {
      {"store_compression", {"--store-compression", "none"}},
      {"misfit", {"--misfit", "l2"}},
      {"estimate_source", {"--estimate-source", "none"}},
      {"offsets", {"--offsets", "none (every trace)"}},
      {"window", {"--window", "none (every sample)"}},
      {"pml_frequency", {"--pml-frequency", "0 (the wavelet's dominant frequency)"}},
      {"data_trace_weights", {"the data's receiver counts and trace weights (--data)", "none"}}};
  std::map<std::string, std::string> unused(saved.begin(), saved.end());
  for (const Setting& x : now) {
    const auto it = saved.find("made_with_" + x.key);
    const auto opt = optional.find(x.key);
    if (it == saved.end() && opt == optional.end())
      throw InputError("--resume: " + path + " does not record its " + x.label + "; this run has " + x.value + hint);
    const std::string then = it == saved.end() ? opt->second.absent : it->second;
    if (then != x.value)
      throw InputError("--resume: " + path + " was made with " + x.label + " " + then + ", this run has " + x.value +
                       hint);
    unused.erase("made_with_" + x.key);
  }
  for (const auto& [key, value] : unused) {
    if (key.rfind("made_with_", 0) != 0) continue;
    const auto opt = optional.find(key.substr(10));
    if (opt != optional.end())
      throw InputError("--resume: " + path + " was made with " + opt->second.label + " " + value + ", this run has " +
                       opt->second.absent + hint);
    throw InputError("--resume: " + path + " was made with " + key.substr(10) + " " + value +
                     ", which this run does not use" + hint);
  }
}

void save(const std::string& path, const State& st, const std::vector<Setting>& made) {
  io::Record r;
  r.texts["format"] = kStateFormat;
  for (const Setting& x : made) r.texts["made_with_" + x.key] = x.value;
  r.arrays["vp"] = st.v;
  r.arrays["gradient"] = st.g;
  r.arrays["precond"] = st.precond;
  r.arrays["history"] = st.history;
  r.arrays["history_band"] = st.history_band;
  for (std::size_t k = 0; k < st.lbfgs.s.size(); ++k) {
    r.arrays["s" + std::to_string(k)] = st.lbfgs.s[k];
    r.arrays["y" + std::to_string(k)] = st.lbfgs.y[k];
  }
  r.scalars["iteration"] = st.iteration;
  r.scalars["band"] = st.band;
  r.scalars["band_iteration"] = st.band_iteration;
  r.scalars["started"] = st.started;
  r.scalars["band_over"] = st.band_over;
  r.scalars["misfit"] = st.misfit;
  r.scalars["pairs"] = double(st.lbfgs.s.size());
  r.scalars["memory"] = st.lbfgs.memory;
  r.scalars["optimizer"] = st.optimizer;
  r.scalars["adam"] = st.adam_m.empty() ? 0 : 1;
  if (!st.wavelets.empty()) {  // a text, so that states without it read as they are
    r.texts["wavelets"] = std::to_string(st.wavelets.size());
    std::vector<double>& w = r.arrays["wavelets"];
    for (const std::vector<float>& x : st.wavelets) w.insert(w.end(), x.begin(), x.end());
  }
  if (!st.windows.empty()) {
    r.texts["windows"] = std::to_string(st.windows.size());
    r.arrays["windows"].assign(st.windows.begin(), st.windows.end());
  }
  if (!st.adam_m.empty()) {
    r.arrays["adam_m"] = st.adam_m;
    r.arrays["adam_v"] = st.adam_v;
  }
  io::write_record(path, r);
}

State load(const std::string& path, std::size_t n) {
  const io::Record head = io::read_record(path, {"vp", "gradient", "precond", "history", "history_band"},
                                          {"iteration", "band", "band_iteration", "started", "band_over", "misfit",
                                           "pairs", "memory", "adam", "optimizer"});
  State st;
  st.v = head.arrays.at("vp");
  st.g = head.arrays.at("gradient");
  st.precond = head.arrays.at("precond");
  st.history = head.arrays.at("history");
  st.history_band = head.arrays.at("history_band");
  st.optimizer = int(head.scalars.at("optimizer"));
  st.iteration = int(head.scalars.at("iteration"));
  st.band = int(head.scalars.at("band"));
  st.band_iteration = int(head.scalars.at("band_iteration"));
  st.started = head.scalars.at("started") != 0;
  st.band_over = head.scalars.at("band_over") != 0;
  st.misfit = head.scalars.at("misfit");
  st.lbfgs.memory = int(head.scalars.at("memory"));
  if (st.v.size() != n || (st.started && st.g.size() != n))
    throw InputError(path + ": the saved state is for a model of another size (" + std::to_string(st.v.size()) +
                     " cells, this model has " + std::to_string(n) + ")");
  const int pairs = int(head.scalars.at("pairs"));
  std::vector<std::string> names;
  for (int k = 0; k < pairs; ++k) {
    names.push_back("s" + std::to_string(k));
    names.push_back("y" + std::to_string(k));
  }
  if (head.scalars.at("adam") != 0) {
    names.push_back("adam_m");
    names.push_back("adam_v");
  }
  const std::map<std::string, std::string> texts = io::read_texts(path);
  const auto count = texts.find("wavelets");
  if (count != texts.end()) names.push_back("wavelets");
  const auto windows = texts.find("windows");
  if (windows != texts.end()) names.push_back("windows");
  const io::Record mem = io::read_record(path, names, {});
  if (mem.arrays.count("adam_m")) {
    st.adam_m = mem.arrays.at("adam_m");
    st.adam_v = mem.arrays.at("adam_v");
  }
  for (int k = 0; k < pairs; ++k) {
    st.lbfgs.s.push_back(mem.arrays.at("s" + std::to_string(k)));
    st.lbfgs.y.push_back(mem.arrays.at("y" + std::to_string(k)));
  }
  if (count != texts.end()) {
    const std::vector<double>& w = mem.arrays.at("wavelets");
    const long waves = std::atol(count->second.c_str());
    if (waves <= 0 || w.empty() || w.size() % std::size_t(waves) != 0)
      throw InputError(path + ": the saved wavelets do not split into " + count->second + " of one length");
    const std::size_t nt = w.size() / std::size_t(waves);
    for (long k = 0; k < waves; ++k) st.wavelets.emplace_back(w.begin() + long(nt) * k, w.begin() + long(nt) * (k + 1));
  }
  if (windows != texts.end()) {
    const std::vector<double>& w = mem.arrays.at("windows");
    if (std::to_string(w.size()) != windows->second || w.size() % 3 != 0)
      throw InputError(path + ": the saved time windows are not " + windows->second + " values in threes");
    st.windows.assign(w.begin(), w.end());
  }
  return st;
}

}  // namespace starwave::fwi_state
