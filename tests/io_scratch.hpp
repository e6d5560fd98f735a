// tests/io_scratch.hpp — the test_io program's scratch folder (test_io.cpp, test_io_hdf5.cpp).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace starwave::test {

/// This process's scratch folder, `name` in it: emptied as it is first used (an earlier process
/// with the same id may have left files) and removed when the process ends.
inline std::filesystem::path scratch(const std::string& name) {
  namespace fs = std::filesystem;
  static const fs::path d = [] {
    const fs::path dir = fs::temp_directory_path() / ("starwave-test-io-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(fs::temp_directory_path() / ("starwave-test-io-" + std::to_string(::getpid())), ignored);
    });
    return dir;
  }();
  return d / name;
}

}  // namespace starwave::test
