#include "drivers/config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/memory/room.hpp"
#include "src/memory/store_plan.hpp"
#include "src/runtime/scratch.hpp"

namespace starwave::cli {
namespace {

/// Boost's words about a config file quote its bad line: a binary file's bytes are shown
/// as '?' (no control characters on the terminal), and at most 200 of them.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 200)) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u >= 0x7f ? '?' : c;
  }
  return text.size() > 200 ? out + "…" : out;
}

/// Where each option the config file gave comes from, " (in run.ini, line 3)", for the
/// messages that name the option after parse() (config_origin()).
std::map<std::string, std::string>& origins() {
  static std::map<std::string, std::string> o;
  return o;
}

/// The line (1-based) of `text` that sets `key` (INI `key = value`, blanks around the key
/// allowed), or 0.
long line_of(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  long n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string k = line.substr(0, eq);
    k.erase(0, k.find_first_not_of(" \t"));
    k.erase(k.find_last_not_of(" \t") + 1);
    if (k == key) return n;
  }
  return 0;
}

}  // namespace

std::string config_origin(const std::string& message) {
  if (message.rfind("--", 0) != 0) return "";
  const std::size_t end = message.find_first_of(": ", 2);
  const auto it = origins().find(message.substr(2, end == std::string::npos ? std::string::npos : end - 2));
  if (it == origins().end() || message.find(" (in ") != std::string::npos) return "";
  return it->second;
}

namespace {

std::string origin_of(const std::string& name) {
  const auto it = origins().find(name);
  return it == origins().end() ? std::string() : it->second;
}

/// The text of --config's file, refused when it is not an INI text file of options.
std::string read_config_text(const std::string& file) {
  if (!std::filesystem::exists(file)) throw InputError("--config: " + file + ": no such file");
  if (!std::filesystem::is_regular_file(file)) throw InputError("--config: " + file + ": not a file");
  // Read whole, so that what Boost cannot quote is refused first: a NUL byte would end
  // its message in mid-line, and a file of megabytes is not a list of options.
  constexpr std::uintmax_t kMostBytes = 1 << 20;
  if (std::filesystem::file_size(file) > kMostBytes)
    throw InputError("--config: " + file + ": larger than 1 MiB: not an INI file of options");
  std::ifstream raw(file, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(raw), std::istreambuf_iterator<char>()};
  if (!raw && !raw.eof()) throw InputError("--config: " + file + ": cannot read");
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    throw InputError("--config: " + file + ": line " +
                     std::to_string(1 + std::count(text.begin(), text.begin() + long(nul), '\n')) +
                     " holds a NUL byte: not an INI text file");
  return text;
}

/// The options of --config's file stored under the command line's (which win), each one's
/// file and line kept for the messages about its value.
void store_config_file(const std::string& file, const po::options_description& desc, po::variables_map& vm) {
  const std::string text = read_config_text(file);
  std::istringstream in(text);
  po::parsed_options parsed(&desc);
  try {
    parsed = po::parse_config_file(in, desc, false);
  } catch (const po::error& e) {
    throw InputError("--config: " + file + ": " + printable(e.what()));
  }
  for (const auto& o : parsed.options) {  // po would take them and then do nothing with them
    if (o.string_key == "config" || o.string_key == "help")
      throw InputError("--config: " + file + ": '" + o.string_key + "' can only be given on the command line");
    if (!vm.count(o.string_key) || vm[o.string_key].defaulted()) {  // the command line's value wins
      const long line = line_of(text, o.string_key);
      origins()[o.string_key] = " (in " + file + (line > 0 ? ", line " + std::to_string(line) : "") + ")";
    }
  }
  try {
    po::store(parsed, vm);  // converts the values: `nz = abc` is refused here
  } catch (const po::error_with_option_name& e) {
    std::string key = e.get_option_name();
    key.erase(0, key.find_first_not_of('-'));
    const long line = line_of(text, key);
    throw InputError("--config: " + file + (line > 0 ? ": line " + std::to_string(line) : std::string()) + ": " +
                     printable(e.what()));
  } catch (const po::error& e) {
    throw InputError("--config: " + file + ": " + printable(e.what()));
  }
}

/// What every option's value must be, whatever the option: a finite number, a non-empty word.
void check_values(const po::variables_map& vm) {
  for (const auto& [name, value] : vm) {
    if (value.value().type() != typeid(double)) continue;
    const double x = value.as<double>();
    if (!std::isfinite(x)) throw InputError("--" + name + ": must be a finite number" + origin_of(name));
  }
  // An empty value is a mistake (`--bands ''`, a variable that expanded to nothing), never
  // taken as "not given".
  for (const auto& [name, value] : vm) {
    if (value.defaulted() || value.value().type() != typeid(std::string)) continue;
    if (value.as<std::string>().empty())
      throw InputError("--" + name + ": empty value; give one, or leave the option out" + origin_of(name));
  }
  if (vm.count("quiet") && vm.count("verbose") && vm["quiet"].as<bool>() && vm["verbose"].as<bool>())
    throw InputError("--quiet and --verbose: choose one");
}

}  // namespace

void parse(const std::string& command, int argc, char** argv, po::options_description& desc, po::variables_map& vm) {
  std::string config;
  origins().clear();
  desc.add_options()("help,h", "show this help")("config", po::value<std::string>(&config),
                                                 "read options from this INI file (key = value)");
  // Every word that is not an option or its value lands here, and is refused: a word the
  // user typed is never silently dropped (`--bands 3 5 8` is not `--bands 3`).
  std::vector<std::string> stray;
  po::options_description with_stray;
  with_stray.add(desc).add_options()("stray-words", po::value<std::vector<std::string>>(&stray), "");
  po::positional_options_description positional;
  positional.add("stray-words", -1);
  try {
    po::store(po::command_line_parser(argc, argv).options(with_stray).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: starwave " << command << " [options]\n" << desc << "\n";
      throw HelpShown{};
    }
    if (vm.count("stray-words")) {
      const std::string word = vm["stray-words"].as<std::vector<std::string>>().front();
      throw InputError("unexpected word '" + word +
                       "': every value follows its option, and lists are one word (e.g. --bands 3,5,8)");
    }
    if (vm.count("config")) store_config_file(vm["config"].as<std::string>(), desc, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(printable(e.what()));  // a config file's value is quoted here
  }
  check_values(vm);
}

bool given(const po::variables_map& vm, const std::string& name) { return vm.count(name) && !vm[name].defaulted(); }

void refuse_unless(bool ok, const std::string& message) {
  if (!ok) throw InputError(message);
}

std::vector<double> parse_numbers(const std::string& text, const std::string& message) {
  std::vector<double> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));  // "3, 5, 8" too
    item.erase(item.find_last_not_of(" \t") + 1);
    // Decimal numbers only: std::stod would also read "0x10" as 16 and "1p3" nowhere near 1.3.
    const bool decimal = !item.empty() && item.find_first_not_of("0123456789+-.eE") == std::string::npos;
    std::size_t used = 0;
    double v = NAN;
    try {
      if (decimal) v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !std::isfinite(v)) throw InputError(message);
    out.push_back(v);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

void refuse_if_given(const po::variables_map& vm, const std::string& name, bool applies, const std::string& why) {
  if (given(vm, name) && !applies) throw InputError("--" + name + ": has no effect " + why);
}

void require_nonnegative(const po::variables_map& vm, const std::string& name, const std::string& meaning) {
  if (vm.count(name) && vm[name].value().type() == typeid(double) && vm[name].as<double>() < 0)
    throw InputError("--" + name + ": must be " + meaning + " (got a negative value)");
}

void add_numerical_options(po::options_description& desc, NumericalOptions& o, NumericalText& text) {
  const NumericalOptions d;  // the defaults, written once (src/numerics/propagator.hpp)
  desc.add_options()("order", po::value<int>(&o.order)->default_value(d.order),
                     "finite-difference order: 2, 4, 6 or 8")(
      "pml-width", po::value<int>(&o.pml_width)->default_value(d.pml_width), "absorbing-layer width (cells)")(
      "pml-inset", po::value<int>(&o.pml_inset)->default_value(d.pml_inset),
      "model cells next to each layer that read its memory variables (-1 = the stencil's radius; 0 stores "
      "less and reflects more at the model's edges)")("free-surface", po::bool_switch(&o.free_surface),
                                                      "free surface on the first model row (no top layer)")(
      "precision", po::value<std::string>(&text.precision)->default_value("single"), "single or double")(
      "storage", po::value<std::string>(&text.storage),
      "forward wavefield kept for the adjoint: boundary (the field outside the model each step; gradient, fwi "
      "default), full, or shell (the model's halo-wide rim only: less memory, the layers' velocity held fixed; rtm "
      "default)")("internal-dt", po::value<double>(&o.internal_dt)->default_value(d.internal_dt),
                  "propagator time step in s (0 = automatic); must divide dt and be stable")(
      "pml-velocity", po::value<double>(&o.pml_velocity)->default_value(d.pml_velocity),
      "speed in m/s that sizes the absorbing layers' damping (0 = the model's fastest; fwi: the initial model's)")(
      "pml-frequency", po::value<double>(&o.pml_frequency)->default_value(d.pml_frequency),
      "frequency in Hz the absorbing layers are tuned to (0 = the first wavelet's dominant frequency)")(
      "checkpoint-every", po::value<std::string>(&text.checkpoint_every),
      "keep the forward's whole state every N steps instead of the store of every step, and re-run the forward "
      "between them for the adjoint (the same results; 0 = never; default: only when a shot's store does not fit)")(
      "store-compression", po::value<std::string>(&text.store_compression),
      "the stored forward wavefield's values: none (as computed), fp16 (IEEE half, scaled per step) or bf16 "
      "(bfloat16): half the store in single precision, a quarter in double; zfp16, zfp12 or zfp8 (ZFP at 16, "
      "12 or 8 bits a value, CPU workers only): an approximate gradient")(
      "scratch", po::value<std::string>(&text.scratch),
      "a folder where StarPU may keep the stored forward wavefield when memory runs short (out of core): the "
      "store is kept in intervals of steps, each its own buffer, moved to files there and back for the adjoint; "
      "the same results; the files are removed when the run ends")(
      "memory-limit", po::value<std::string>(&text.memory_limit),
      "the memory this run may hold in all, e.g. 8G (K, M, G, T: binary units): the plan keeps within it "
      "(checkpoints, fewer shots in flight) or refuses the run; default: what the machine has");
}

void finish_numerical_options(NumericalOptions& o, const NumericalText& text) {
  if (text.precision == "single" || text.precision == "float")
    o.precision = Precision::kSingle;
  else if (text.precision == "double")
    o.precision = Precision::kDouble;
  else
    throw InputError("--precision: must be 'single' or 'double' (got '" + text.precision + "')");
  bool known = text.storage.empty();  // the command's default (NumericalOptions::kStorageDefault)
  for (int k : {ShotProblem<float>::kStoreBoundary, ShotProblem<float>::kStoreFull, ShotProblem<float>::kStoreShell})
    if (text.storage == storage_name(k)) {
      o.storage = k;
      known = true;
    }
  if (!known) throw InputError("--storage: must be 'boundary', 'full' or 'shell' (got '" + text.storage + "')");
  if (!text.store_compression.empty())
    o.store_compression = parse_store_compression(text.store_compression, "--store-compression");
  memory::set_memory_limit(text.memory_limit.empty() ? 0 : memory::parse_size(text.memory_limit, "--memory-limit"));
  scratch::set_folder(text.scratch);
  if (!text.checkpoint_every.empty()) {
    const std::string& c = text.checkpoint_every;
    const bool digits = !c.empty() && c.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) throw InputError("--checkpoint-every: must be a whole number of steps, 0 or more (got '" + c + "')");
    if (c.size() > 10 || std::stoll(c) > 2147483647LL)  // records hold at most 2³¹ steps
      throw InputError("--checkpoint-every: " + c + " steps is more than a record can have (2147483647 at most)");
    o.checkpoint_every = std::stoi(c);
  }
  o.validate();
}

void add_common_flags(po::options_description& desc, CommonFlags& f) {
  desc.add_options()("quiet,q", po::bool_switch(&f.quiet), "print nothing but errors")(
      "verbose,v", po::bool_switch(&f.verbose), "print more detail")("overwrite", po::bool_switch(&f.overwrite),
                                                                     "replace an existing output file");
}

}  // namespace starwave::cli
