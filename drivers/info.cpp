// drivers/info.cpp — `starwave info`: what this build and this machine offer.
#include <H5public.h>

#include <iostream>
#include <string>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/runtime/runtime.hpp"
#include "starwave_version.hpp"

namespace starwave::commands {

int info(int argc, char** argv) {
  cli::po::options_description desc("starwave info");
  cli::po::variables_map vm;
  cli::parse("info", argc, argv, desc, vm);

  unsigned h5maj = 0, h5min = 0, h5rel = 0;
  H5get_libversion(&h5maj, &h5min, &h5rel);
  std::cout << "starwave " STARWAVE_VERSION " (" STARWAVE_COMMIT ")\n"
            << "  StarPU         " << Runtime::starpu_version() << " (" << STARWAVE_STARPU_PREFIX << ")\n"
            << "  HDF5           " << h5maj << "." << h5min << "." << h5rel << "\n"
#ifdef STARWAVE_USE_CUDA
            << "  CUDA codelets  compiled in\n"
#else
            << "  CUDA codelets  not compiled\n"
#endif
#ifdef STARWAVE_USE_MPI
            << "  MPI            compiled in (starpu-mpi)\n";
#else
            << "  MPI            not compiled\n";
#endif
  Runtime rt;
  std::cout << "  workers        " << rt.cpu_workers() << " CPU, " << rt.cuda_workers() << " CUDA";
  if (rt.gpus() > 0)
    std::cout << " (" << rt.gpus() << " GPU" << (rt.gpus() > 1 ? "s" : "") << " × " << rt.cuda_workers() / rt.gpus()
              << " shots in flight, each on its own stream)";
  std::cout << "\n"
            << "  scheduler      " << rt.scheduler() << "\n";
  std::string cores;  // where the CPU workers run (hwloc's logical PU numbers)
  for (int pu : rt.cpu_worker_pus()) cores += (cores.empty() ? "" : " ") + std::to_string(pu);
  std::cout << "  CPU workers on PUs " << cores << "\n"
            << "  CPU kernels    " << Runtime::cpu_kernels() << " (STARWAVE_CPU_ISA chooses)\n";
  if (rt.size() > 1)
    std::cout << "  MPI rank       " << rt.rank() << " of " << rt.size() << " (" << rt.node_rank() << " of "
              << rt.node_ranks() << " on this node)\n";
  return 0;
}

}  // namespace starwave::commands
