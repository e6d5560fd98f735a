// src/runtime/simulated_machine.cpp — a StarPU-SimGrid machine of G GPUs from one GPU's
// calibration (simulated_machine.hpp).
#include "src/runtime/simulated_machine.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/base/error.hpp"
#include "src/safety/inputs.hpp"

namespace starwave::simulation {
namespace fs = std::filesystem;
namespace {

constexpr int kNodes = 32;  // STARPU_MAXNODES of the StarPU build: the bus matrices' size
constexpr const char* kMarker = "made-by-starwave-plan";

std::string read_text(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw InputError("--calibration: " + p.string() + ": no such file (is the calibration's host name right?)");
  if (!fs::is_regular_file(p, ec)) throw InputError("--calibration: " + p.string() + ": not a regular file");
  std::ifstream f(p);
  if (!f) throw InputError("--calibration: " + p.string() + ": cannot be read");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// A StarPU bus matrix (bandwidth MB/s or latency µs; rows: from, columns: to).
std::vector<std::vector<double>> read_matrix(const fs::path& p) {
  std::istringstream text(read_text(p));
  std::vector<std::vector<double>> rows;
  for (std::string line; std::getline(text, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::vector<double> row;
    for (std::string w; words >> w;) row.push_back(std::strtod(w.c_str(), nullptr));  // "nan" too
    if (!row.empty()) rows.push_back(row);
  }
  if (rows.size() < 2 || rows[0].size() < 2 || rows[1].empty())
    throw InputError("--calibration: " + p.string() + ": not a StarPU bus matrix");
  return rows;
}

/// Refuses a bus figure outside what a machine measures: a bandwidth (MB/s) finite and within
/// 1 MB/s … 100 TB/s, a latency (µs) finite and within 0 … 1 s.
void check_bus_value(double v, bool bandwidth, const fs::path& p, const char* what) {
  const bool ok = bandwidth ? std::isfinite(v) && v >= 1 && v <= 1e8 : std::isfinite(v) && v >= 0 && v <= 1e6;
  if (!ok)
    throw InputError(
        "--calibration: " + p.string() + ": the " + what + " is " + number_text(v) +
        (bandwidth ? " MB/s, not a measured bandwidth (1 MB/s … 100 TB/s)" : " µs, not a measured latency (0 … 1 s)"));
}

/// A number of a model entry, whole text parsed and within [low, high]; NaN when not.
double entry_number(const std::string& w, double low, double high) {
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  return end && *end == '\0' && end != w.c_str() && std::isfinite(v) && v >= low && v <= high ? v : NAN;
}

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%e", v);
  return b;
}

std::string fixed(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%f", v);
  return b;
}

class Writer {
 public:
  explicit Writer(const fs::path& p) : path_(p), f_(p) {
    if (!f_) throw RuntimeError(p.string() + ": cannot write");
  }
  ~Writer() = default;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  std::ofstream& out() { return f_; }
  void close() {
    f_.close();
    if (!f_) throw RuntimeError(path_.string() + ": cannot write");
  }

 private:
  fs::path path_;
  std::ofstream f_;
};

/// Every codelet model of `host`, the CUDA entries' times divided by k (mean, deviation, sum;
/// sum of squares by k²), renamed to host `simulated`.
void scale_models(const fs::path& from, const fs::path& to, const std::string& host, double k) {
  fs::create_directories(to);
  const std::string suffix = "." + host;
  // A history entry: its footprint (8 hex digits), a tab, then the numbers.
  const auto entry = [](const std::string& line) {
    if (line.size() < 9 || line[8] != '\t') return false;
    return std::all_of(line.begin(), line.begin() + 8,
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  };
  int copied = 0;
  for (const auto& e : fs::directory_iterator(from)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string whole = read_text(e.path());
    if (whole.rfind("##################\n# Performance Model Version\n45\n", 0) != 0)
      throw InputError("--calibration: " + e.path().string() + ": not a StarPU 1.3 performance model (version 45)");
    std::istringstream text(whole);
    Writer w(to / (name.substr(0, name.size() - suffix.size()) + ".simulated"));
    int device = -1;
    bool type_next = false;
    for (std::string line; std::getline(text, line);) {
      if (line.rfind("# device type", 0) == 0) {
        type_next = true;
      } else if (type_next && !line.empty() && line[0] != '#') {
        device = std::atoi(line.c_str());
        type_next = false;
      } else if (device == 1 && entry(line)) {
        std::istringstream words(line);
        std::vector<std::string> v;
        for (std::string x; words >> x;) v.push_back(x);
        // An entry StarPU made for a size it has not measured yet (n = 0, every number 0): no
        // time to scale, kept as it is (the simulation treats it as StarPU does).
        const bool unmeasured = v.size() == 8 && std::all_of(v.begin() + 3, v.end(), [](const std::string& x) {
                                  return entry_number(x, 0, 0) == 0;
                                });
        if (v.size() == 8 && !unmeasured) {  // hash size flops mean dev sum sum2 n
          // A measurement: times in µs, positive and below a day; n a whole number of runs.
          const double mean = entry_number(v[3], 1e-3, 8.64e10), dev = entry_number(v[4], 0, 8.64e10);
          const double sum = entry_number(v[5], 0, 1e300), sum2 = entry_number(v[6], 0, 1e300);
          const double size = entry_number(v[1], 1, 1e18), n = entry_number(v[7], 1, 1e15);
          if (std::isnan(mean) || std::isnan(dev) || std::isnan(sum) || std::isnan(sum2) || std::isnan(size) ||
              std::isnan(n) || n != std::floor(n))
            throw InputError("--calibration: " + e.path().string() + ": the entry '" + line.substr(0, 80) +
                             "' is not a measurement (size, flops, mean and deviation in µs, sums, runs)");
          v[3] = num(mean / k), v[4] = num(dev / k), v[5] = num(sum / k), v[6] = num(sum2 / k / k);
          line = v[0];
          for (std::size_t i = 1; i < v.size(); ++i) line += "\t" + v[i];
        }
      }
      w.out() << line << "\n";
    }
    w.close();
    ++copied;
  }
  if (copied == 0) throw InputError("--calibration: " + from.string() + ": no codelet models of host '" + host + "'");
}

/// SimGrid's description of the machine (platform version 3 or 4): CPUs, GPUs each on its own
/// links to and from RAM, every route also through `Host` (main memory's bandwidth).
void write_platform(const fs::path& p, int version, int gpus, int cpus, long long memsize, double up, double down,
                    double lat_up, double lat_down, double host_bw) {
  const char* sep = version == 4 ? "-" : "_";
  Writer w(p);
  std::ofstream& f = w.out();
  f << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM 'http://simgrid.gforge.inria.fr/"
    << (version == 4 ? "simgrid/simgrid.dtd" : "simgrid.dtd") << "'>\n <platform version=\"" << version << "\">\n"
    << " <config id=\"General\">\n"
    << "   <prop id=\"network/TCP" << sep << "gamma\" value=\"-1\"></prop>\n"
    << "   <prop id=\"network/latency" << sep << "factor\" value=\"1\"></prop>\n"
    << "   <prop id=\"network/bandwidth" << sep << "factor\" value=\"1\"></prop>\n"
    << "   <prop id=\"network/crosstraffic\" value=\"0\"></prop>\n"
    << "   <prop id=\"network/weight" << sep << "S\" value=\"0.0\"></prop>\n"
    << " </config>\n <AS  id=\"AS0\"  routing=\"Full\">\n   <host id=\"MAIN\" speed=\"1f\"/>\n";
  for (int c = 0; c < cpus; ++c) f << "   <host id=\"CPU" << c << "\" speed=\"2000000000f\"/>\n";
  for (int g = 0; g < gpus; ++g)
    f << "   <host id=\"CUDA" << g << "\" speed=\"2000000000f\">\n     <prop id=\"memsize\" value=\"" << memsize
      << "\"/>\n     <prop id=\"memcpy_peer\" value=\"0\"/>\n   </host>\n";
  f << "   <host id=\"RAM\" speed=\"1f\"/>\n   <link id=\"Host\" bandwidth=\"" << fixed(host_bw)
    << "Bps\" latency=\"0.000000s\"/>\n";
  for (int g = 0; g < gpus; ++g)
    f << "   <link id=\"RAM-CUDA" << g << "\" bandwidth=\"" << fixed(down) << "Bps\" latency=\"" << fixed(lat_down)
      << "s\"/>\n   <link id=\"CUDA" << g << "-RAM\" bandwidth=\"" << fixed(up) << "Bps\" latency=\"" << fixed(lat_up)
      << "s\"/>\n";
  for (int g = 0; g < gpus; ++g) {
    const std::string gpu = "CUDA" + std::to_string(g);
    for (const auto& [src, dst] : {std::pair{gpu, std::string("RAM")}, std::pair{std::string("RAM"), gpu}})
      f << "   <route src=\"" << src << "\" dst=\"" << dst << "\" symmetrical=\"NO\">\n    <link_ctn id=\"" << src
        << "-" << dst << "\"/>\n    <link_ctn id=\"Host\"/>\n   </route>\n";
  }
  f << " </AS>\n </platform>\n";
  w.close();
}

/// A bus matrix over memory nodes 0 (RAM) … gpus: RAM → GPU `down`, GPU → RAM `up`, GPU → GPU
/// through RAM `between`; nan beyond the machine, as StarPU writes it.
void write_matrix(const fs::path& p, int gpus, double down, double up, double between) {
  Writer w(p);
  std::ofstream& f = w.out();
  f << "# ";
  for (int d = 0; d < kNodes; ++d) f << "to " << d << "\t\t";
  f << "\n";
  for (int s = 0; s < kNodes; ++s) {
    for (int d = 0; d < kNodes; ++d) {
      const double v = s > gpus || d > gpus ? NAN : s == d ? 0.0 : s == 0 ? down : d == 0 ? up : between;
      f << (d ? "\t" : "") << num(v);
    }
    f << "\n";
  }
  w.close();
}

}  // namespace

std::string sampling_folder(const std::string& dir) {
  const fs::path d(dir);
  std::error_code ec;
  if (!fs::exists(d, ec)) throw InputError("--calibration: " + dir + ": no such folder");
  if (!fs::is_directory(d, ec)) throw InputError("--calibration: " + dir + ": not a folder");
  for (const fs::path& p : {d, d / ".starpu" / "sampling"})
    if (fs::is_directory(p / "bus") && fs::is_directory(p / "codelets" / "45")) {
      // Its files only files: a pipe among them would block the simulation for ever.
      for (const fs::path& f : {p / "bus", p / "codelets" / "45"})
        safety::require_input_folder(f.string(), "--calibration");
      return p.string();
    }
  throw InputError("--calibration: " + dir +
                   ": not a StarPU calibration (a folder with bus/ and codelets/45/, or a STARPU_HOME holding "
                   ".starpu/sampling/)");
}

std::vector<std::string> calibrated_hosts(const std::string& sampling) {
  std::vector<std::string> hosts;
  const std::string suffix = ".platform.v4.xml";
  for (const auto& e : fs::directory_iterator(fs::path(sampling) / "bus")) {
    const std::string name = e.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      hosts.push_back(name.substr(0, name.size() - suffix.size()));
  }
  std::sort(hosts.begin(), hosts.end());
  return hosts;
}

void write_machine(const std::string& sampling, const std::string& host, const std::string& starpu_home, int gpus,
                   double throughput, double host_bandwidth) {
  if (gpus < 1 || gpus > kMaxGpus)
    throw InputError("--gpus: 1 … " + std::to_string(kMaxGpus) + " GPUs a simulated node (StarPU's " +
                     "STARPU_MAXCUDADEVS), not " + std::to_string(gpus));
  if (!(throughput > 0)) throw InputError("a simulated GPU's throughput factor must be > 0");
  const fs::path bus = fs::path(sampling) / "bus";
  const auto bw = read_matrix(bus / (host + ".bandwidth"));  // MB/s
  const auto lat = read_matrix(bus / (host + ".latency"));   // µs
  const double down = bw[0][1], up = bw[1][0], lat_down = lat[0][1], lat_up = lat[1][0];
  if (std::isnan(down) || std::isnan(up))
    throw InputError("--calibration: " + bus.string() + "/" + host +
                     ".bandwidth: no measured bandwidth between main memory and a GPU (calibrate on a machine "
                     "with a GPU)");
  check_bus_value(down, true, bus / (host + ".bandwidth"), "bandwidth from main memory to GPU 0");
  check_bus_value(up, true, bus / (host + ".bandwidth"), "bandwidth from GPU 0 to main memory");
  check_bus_value(lat_down, false, bus / (host + ".latency"), "latency from main memory to GPU 0");
  check_bus_value(lat_up, false, bus / (host + ".latency"), "latency from GPU 0 to main memory");
  const std::string platform = read_text(bus / (host + ".platform.v4.xml"));
  long long memsize = 80LL << 30;  // GPU 0's memory, as StarPU measured it
  const std::size_t gpu0 = platform.find("<host id=\"CUDA0\"");
  const std::string key = "<prop id=\"memsize\" value=\"";
  const std::size_t at = gpu0 == std::string::npos ? gpu0 : platform.find(key, gpu0);
  if (at != std::string::npos && platform.find("</host>", gpu0) > at)
    memsize = std::atoll(platform.c_str() + at + key.size());
  if (memsize < (1LL << 20) || memsize > (1LL << 50))
    throw InputError("--calibration: " + bus.string() + "/" + host + ".platform.v4.xml: GPU 0's memory is " +
                     std::to_string(memsize) + " bytes, not a GPU's (1 MiB … 1 PiB)");
  int cpus = 0;
  for (std::size_t p = platform.find("<host id=\"CPU"); p != std::string::npos;
       p = platform.find("<host id=\"CPU", p + 1))
    if (std::isdigit(static_cast<unsigned char>(platform[p + 13]))) ++cpus;

  const fs::path out = fs::path(starpu_home) / ".starpu" / "sampling";
  if (fs::exists(out) && !fs::exists(out / kMarker))
    throw RuntimeError(out.string() + " holds StarPU measurements starwave plan did not make: not replaced");
  fs::remove_all(out);
  fs::create_directories(out / "bus");
  Writer(out / kMarker).close();
  scale_models(fs::path(sampling) / "codelets" / "45", out / "codelets" / "45", host, throughput);
  write_matrix(out / "bus" / "simulated.bandwidth", gpus, down, up, 1 / (1 / down + 1 / up));
  write_matrix(out / "bus" / "simulated.latency", gpus, lat_down, lat_up, lat_down + lat_up);
  {
    Writer w(out / "bus" / "simulated.affinity");
    w.out() << "# GPU\tNUMA0\t\n";
    for (int g = 0; g < gpus; ++g) w.out() << g << "\t0\t\n";
    w.close();
  }
  {
    Writer w(out / "bus" / "simulated.config");
    w.out() << "# Current configuration\n"
            << std::max(cpus, 1) << " # Number of CPUs\n1 # Number of NUMA nodes\n"
            << gpus << " # Number of CUDA devices\n0 # Number of OpenCL devices\n0 # Number of MIC devices\n"
            << "0 # Number of MPI devices\n";
    w.close();
  }
  const double shared = host_bandwidth > 0 ? host_bandwidth : gpus * std::max(up, down) * 1e6;
  write_platform(out / "bus" / "simulated.platform.xml", 3, gpus, std::max(cpus, 1), memsize, up * 1e6, down * 1e6,
                 lat_up * 1e-6, lat_down * 1e-6, shared);
  write_platform(out / "bus" / "simulated.platform.v4.xml", 4, gpus, std::max(cpus, 1), memsize, up * 1e6, down * 1e6,
                 lat_up * 1e-6, lat_down * 1e-6, shared);
}

}  // namespace starwave::simulation
