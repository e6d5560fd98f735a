// drivers/config.hpp — command-line and INI options (Boost.Program_options) shared by the
// subcommands: every option may also come from `--config run.ini` (command line wins).
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "src/numerics/propagator.hpp"

namespace starwave::cli {

namespace po = boost::program_options;

/// Thrown after --help was printed: main exits 0.
struct HelpShown {};

/// Parses argv (after the subcommand) and the optional --config file into `vm`.
/// Unknown options, bad values, words that are neither an option nor its value, a
/// number that is NaN or infinite, --quiet with --verbose and an unreadable config file
/// become InputError naming the option, word or file.
void parse(const std::string& command, int argc, char** argv, po::options_description& desc, po::variables_map& vm);

/// " (in run.ini, line 3)" when `message` ("--order: …") names an option whose value the
/// last parse() took from its config file (and does not say so already), else "": the
/// checks made after parsing say where the value came from.
std::string config_origin(const std::string& message);

/// Whether option `name` was given (on the command line or in the INI file), not defaulted.
bool given(const po::variables_map& vm, const std::string& name);
/// InputError(message) unless `ok`.
void refuse_unless(bool ok, const std::string& message);
/// Refuses an option that was given but has no effect here ("--seed: has no effect <why>").
void refuse_if_given(const po::variables_map& vm, const std::string& name, bool applies, const std::string& why);
/// "3,5,8" or "3, 5, 8" → {3, 5, 8}: every comma-separated item a whole finite number
/// (spaces around it allowed; no empty item, no trailing comma, nothing else after a
/// number); InputError(message) otherwise or for "".
std::vector<double> parse_numbers(const std::string& text, const std::string& message);
/// Refuses a negative value of the double option `name` ("--dt: must be <meaning>").
void require_nonnegative(const po::variables_map& vm, const std::string& name, const std::string& meaning);

/// The numerical options given as words, turned into NumericalOptions by
/// finish_numerical_options().
struct NumericalText {
  std::string precision, storage, checkpoint_every, store_compression, memory_limit, scratch;
};

/// --order, --pml-width, --free-surface, --precision, --internal-dt, --pml-velocity, --storage,
/// --checkpoint-every, --store-compression, --memory-limit (memory::set_memory_limit), --scratch
/// (scratch::set_folder).
void add_numerical_options(po::options_description& desc, NumericalOptions& o, NumericalText& text);
void finish_numerical_options(NumericalOptions& o, const NumericalText& text);

/// --verbose / --quiet / --overwrite.
struct CommonFlags {
  bool quiet = false, verbose = false, overwrite = false;
};
void add_common_flags(po::options_description& desc, CommonFlags& f);

}  // namespace starwave::cli
