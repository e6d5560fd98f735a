// src/runtime/starpu_home.hpp — the folder where StarPU keeps what it measured (the performance
// models of starwave's tasks, the bus's speeds), made fit for StarPU before it starts.
//
// StarPU 1.3 asserts and aborts on a model file cut short (what a kill or a full disk
// during its save leaves) and on every later run after it, takes an empty $HOME for "/",
// and saves its files at the end of a run whether or not the disk has room. So before
// starpu_init: empty home variables are removed, a missing home becomes the user's own,
// the file system must have room for StarPU's files, and files StarPU could not read are
// set aside (renamed *.damaged, one line each saying so), so that StarPU measures anew.
#pragma once

#include <string>
#include <vector>

namespace starwave::starpu_home {

/// StarPU's sampling folder, as StarPU 1.3 finds it: $STARPU_PERF_MODEL_DIR, else
/// HOME/.starpu/sampling with HOME the first of $XDG_CACHE_HOME, $STARPU_HOME, $HOME,
/// $TMPDIR, $TEMP, $TMP, /tmp that is set.
std::string sampling_folder();

/// This host's name in StarPU's bus files: $STARPU_HOSTNAME, else the host name up to
/// its first dot.
std::string host_name();

/// Before starpu_init (Runtime): the home variables made sound, the folder made and
/// checked for room (InputError naming it), and the files StarPU would abort on set
/// aside. Returns what was set aside, a sentence each, for the caller to say.
std::vector<std::string> prepare(int gpus);

/// Whether StarPU's own reader takes each of `files` (history-based model files): the
/// ones it would abort on. Each is read in a child process, as the reader asserts.
std::vector<std::string> unreadable_models(const std::vector<std::string>& files);

/// Whether this host's bus file `path` of kind `kind` ("config", "affinity") is one
/// StarPU reads without aborting; `gpus`: the CUDA devices StarPU will count.
bool bus_file_sound(const std::string& path, const std::string& kind, int gpus);

}  // namespace starwave::starpu_home
