// src/runtime/starpu_home.cpp — see starpu_home.hpp.
#include "src/runtime/starpu_home.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <starpu.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/base/error.hpp"

namespace starwave::starpu_home {
namespace fs = std::filesystem;
namespace {

/// The variable that names StarPU's home (or its sampling folder), and its value.
struct Home {
  std::string var, value;
  fs::path sampling;
};

Home find_home() {
  if (const char* v = std::getenv("STARPU_PERF_MODEL_DIR")) return {"STARPU_PERF_MODEL_DIR", v, fs::path(v)};
  for (const char* var : {"XDG_CACHE_HOME", "STARPU_HOME", "HOME", "TMPDIR", "TEMP", "TMP"})
    if (const char* v = std::getenv(var)) return {var, v, fs::path(v) / ".starpu" / "sampling"};
  return {"", "/tmp", fs::path("/tmp") / ".starpu" / "sampling"};
}

/// The codelet models' folder: StarPU's model format version 45 (StarPU 1.3).
fs::path models_folder(const fs::path& sampling) { return sampling / "codelets" / "45"; }

std::string read_text(const fs::path& p, std::size_t most) {
  std::ifstream in(p, std::ios::binary);
  std::string text(most + 1, '\0');
  in.read(text.data(), std::streamsize(most + 1));
  text.resize(std::size_t(in.gcount()));
  return text;
}

/// The lines of `text` that are not comments ('#' first), each with whether it ended
/// with a newline.
std::vector<std::pair<std::string, bool>> data_lines(const std::string& text) {
  std::vector<std::pair<std::string, bool>> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.empty() || line[0] != '#') lines.emplace_back(line, end != std::string::npos);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return lines;
}

/// Reads unsigned numbers separated by tabs or spaces; false on anything else.
bool numbers(const std::string& line, std::vector<unsigned long>& out) {
  std::istringstream in(line);
  std::string word;
  out.clear();
  while (in >> word) {
    if (word.find_first_not_of("0123456789") != std::string::npos) return false;
    out.push_back(std::strtoul(word.c_str(), nullptr, 10));
  }
  return true;
}

/// Renames `p` to `p.damaged` (replacing an older one); false if it could not.
bool set_aside(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p.string() + ".damaged", ec);  // one set aside before: the newer one is kept
  fs::rename(p, p.string() + ".damaged", ec);
  return !ec;
}

}  // namespace

std::string sampling_folder() { return find_home().sampling.string(); }

std::string host_name() {
  if (const char* v = std::getenv("STARPU_HOSTNAME"); v && *v) return std::string(v).substr(0, 63);
  char name[65] = {};
  gethostname(name, sizeof name - 1);
  std::string h(name);
  return h.substr(0, h.find('.'));
}

std::vector<std::string> unreadable_models(const std::vector<std::string>& files) {
  std::vector<std::string> bad;
  std::size_t next = 0;
  while (next < files.size()) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return bad;  // no way to check: StarPU reads them as they are
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      return bad;
    }
    if (pid == 0) {  // StarPU's reader asserts on what it cannot read: let it, here
      close(fds[0]);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      const struct rlimit no_core {};
      setrlimit(RLIMIT_CORE, &no_core);
      for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);  // a crash ends it
      alarm(20);
      starpu_perfmodel_initialize();
      for (std::size_t k = next; k < files.size(); ++k) {
        struct starpu_perfmodel model;
        std::memset(&model, 0, sizeof model);
        model.type = STARPU_PERFMODEL_INVALID;
        if (starpu_perfmodel_load_file(files[k].c_str(), &model) == 0) starpu_perfmodel_unload_model(&model);
        const char ok = 1;
        if (write(fds[1], &ok, 1) != 1) _exit(2);
      }
      _exit(0);
    }
    close(fds[1]);
    std::size_t done = 0;
    char c;
    for (;;) {
      const ssize_t n = read(fds[0], &c, 1);
      if (n == 1) {
        ++done;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    next += done;
    // Ended by its alarm (a file StarPU waits on): not a verdict on that file; stop here.
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return bad;
    if (next < files.size()) bad.push_back(files[next++]);  // the one it stopped on
  }
  return bad;
}

bool bus_file_sound(const std::string& path, const std::string& kind, int gpus) {
  const std::string text = read_text(path, 1 << 20);
  if (text.size() > (1u << 20)) return false;
  const auto lines = data_lines(text);
  std::vector<unsigned long> v;
  if (kind == "config") {  // CPUs, NUMA nodes, CUDA and OpenCL devices (then MIC, MPI): "N # what"
    int read = 0;
    for (const auto& [line, ended] : lines) {
      const std::string number = line.substr(0, line.find('#'));
      if (!numbers(number, v) || v.size() != 1) return false;
      ++read;
    }
    return read >= 4;
  }
  if (kind == "affinity") {  // "# GPU\tNUMA0\t…" then a line per GPU: its number, then a NUMA node per column
    // StarPU matches "# GPU\t" first: a file that ends inside it stops StarPU; one that
    // differs is an old format, measured anew.
    const std::string start = "# GPU\t";
    if (text.size() < start.size() && start.compare(0, text.size(), text) == 0) return false;
    if (text.rfind("# GPU\tNUMA", 0) != 0) return true;
    const std::string header = text.substr(0, text.find('\n'));
    std::size_t columns = 0;
    for (std::size_t at = header.find("NUMA"); at != std::string::npos; at = header.find("NUMA", at + 4)) ++columns;
    if (int(lines.size()) < gpus) return false;
    for (int g = 0; g < gpus; ++g) {
      const auto& [line, ended] = lines[std::size_t(g)];
      if (!ended || !numbers(line, v) || v.size() != columns + 1 || v[0] != unsigned(g)) return false;
    }
    return true;
  }
  return true;
}

namespace {

/// An empty variable is StarPU's "/" ("" + "/.starpu"): as good as unset. No home at all: the
/// user's own, rather than StarPU's /tmp (shared, and emptied).
void settle_home_variables() {
  for (const char* var : {"STARPU_PERF_MODEL_DIR", "XDG_CACHE_HOME", "STARPU_HOME", "HOME", "TMPDIR", "TEMP", "TMP"})
    if (const char* v = std::getenv(var); v && !*v) unsetenv(var);
  if (!std::getenv("STARPU_PERF_MODEL_DIR") && !std::getenv("XDG_CACHE_HOME") && !std::getenv("STARPU_HOME") &&
      !std::getenv("HOME"))
    if (const struct passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir && access(pw->pw_dir, W_OK) == 0)
      setenv("STARPU_HOME", pw->pw_dir, 1);
}

/// starwave's performance models in `models`: the regular files (and their bytes), and the
/// entries StarPU would abort on or wait on for ever (a folder, a pipe).
struct ModelFiles {
  std::vector<std::string> files, strange;
  std::uintmax_t bytes = 0;
};
ModelFiles model_files_in(const fs::path& models) {
  ModelFiles m;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(models, ec)) {
    const std::string name = e.path().filename().string();
    const bool damaged = name.size() > 8 && name.compare(name.size() - 8, 8, ".damaged") == 0;
    if (name.rfind("starwave_", 0) != 0 || damaged) continue;
    std::error_code fec;
    if (!e.is_regular_file(fec)) {
      m.strange.push_back(e.path().string());
      continue;
    }
    const std::uintmax_t size = e.file_size(fec);
    m.bytes += fec ? 0 : size;
    m.files.push_back(e.path().string());
  }
  return m;
}

/// The bus files of this host, by kind.
constexpr const char* kBusKinds[] = {"config", "affinity", "latency", "bandwidth", "platform.xml", "platform.v4.xml"};

/// Refuses (InputError, naming `named`) a home whose file system lacks room or inodes for what
/// StarPU writes at the end of a run: its files as they are (`kept` bytes of models and the
/// bus files in `bus`), and more.
void require_room_to_save(const Home& home, const std::string& named, const fs::path& bus, std::uintmax_t kept) {
  std::error_code ec;
  for (const char* kind : kBusKinds) {
    const std::uintmax_t size = fs::file_size(bus / (host_name() + "." + kind), ec);
    kept += ec ? 0 : size;
  }
  const std::uintmax_t need = kept + (std::uintmax_t(1) << 20);
  struct statvfs st {};
  if (statvfs(home.sampling.c_str(), &st) != 0 || st.f_blocks == 0) return;
  const std::uintmax_t free = std::uintmax_t(st.f_bavail) * std::uintmax_t(st.f_frsize);
  const bool no_inodes = st.f_files > 0 && st.f_favail == 0;
  if (free < need || no_inodes)
    throw InputError(named + ": the file system of " + home.sampling.string() + " has " +
                     (no_inodes ? std::string("no free inodes") : bytes_text(double(free)) + " free") +
                     ", and StarPU needs about " + bytes_text(double(need)) +
                     " there to save its performance models (one cut short by a full disk stops every later "
                     "run): free some space, or set STARPU_HOME to a folder with room");
}

/// This host's bus files in `bus` when one StarPU could not read (config and affinity are
/// read; the others need only be files): all set aside (*.damaged), so StarPU measures the
/// bus anew; a note of it in `notes`.
void set_aside_unreadable_bus(const fs::path& bus, int gpus, std::vector<std::string>& notes) {
  std::error_code ec;
  const std::string host = host_name();
  for (const char* kind : kBusKinds) {
    const fs::path f = bus / (host + "." + kind);
    const bool read = std::strcmp(kind, "config") == 0 || std::strcmp(kind, "affinity") == 0;
    if (!read && (!fs::exists(f, ec) || fs::is_regular_file(f, ec))) continue;
    if (!fs::exists(f, ec) || (fs::is_regular_file(f, ec) && bus_file_sound(f.string(), kind, gpus))) continue;
    for (const char* k : kBusKinds)
      if (fs::exists(bus / (host + "." + k), ec)) set_aside(bus / (host + "." + k));
    notes.push_back("StarPU's bus measurements " + f.string() +
                    " could not be read (cut short?); set aside with the rest of this host's bus files (*.damaged): "
                    "StarPU measures the bus anew");
    return;
  }
}

}  // namespace

std::vector<std::string> prepare(int gpus) {
  settle_home_variables();
  const Home home = find_home();
  const std::string named = home.var.empty() ? "StarPU's home" : "environment: " + home.var + "='" + home.value + "'";
  const fs::path models = models_folder(home.sampling), bus = home.sampling / "bus";
  std::error_code ec;
  for (const fs::path& dir : {models, bus}) {
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir) || access(dir.c_str(), W_OK) != 0)
      throw InputError(named + ": StarPU cannot keep its performance models in " + dir.string() +
                       (ec ? " (" + ec.message() + ")" : std::string(" (not a writable folder)")) +
                       "; set STARPU_HOME to a folder it may write");
  }
  ModelFiles found = model_files_in(models);
  require_room_to_save(home, named, bus, found.bytes);
  std::vector<std::string> notes;
  // Files StarPU would abort on: set aside, and measured anew.
  for (const std::string& f : found.strange)
    if (set_aside(f))
      notes.push_back("StarPU's performance model " + f + " is not a regular file; set aside as " + f +
                      ".damaged: StarPU measures that task anew");
  // StarPU's reader runs in a child process made by fork: only from a process where StarPU
  // has not run yet, whose StarPU state is fresh (a later Runtime of the same process,
  // as in the tests, finds the files its own StarPU saved).
  static bool first_start = true;
  if (!first_start) found.files.clear();
  first_start = false;
  for (const std::string& f : unreadable_models(found.files))
    if (set_aside(f))
      notes.push_back("StarPU's performance model " + f + " could not be read (cut short?); set aside as " + f +
                      ".damaged: StarPU measures that task anew");
  set_aside_unreadable_bus(bus, gpus, notes);
  return notes;
}

}  // namespace starwave::starpu_home
