// tests/test_hostile_runs.cpp — starwave used as a hostile user would, while it runs: inputs that
// are not files, out of core under faults, signals, two runs on one output, links, limits,
// damaged StarPU homes and killed or failed inversions (tests/test_hostile.cpp: the table of
// bad inputs; the same executable, the fixture of tests/hostile_fixture.hpp).
#include "tests/hostile_fixture.hpp"

namespace starwave::test {
namespace {

/// Starts `starwave ARGS` in `dir` without waiting; returns its pid.
pid_t start_in(const fs::path& dir, const std::string& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(127);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<std::string> words = {STARWAVE_BIN};
    std::istringstream in(args);
    for (std::string w; in >> w;) words.push_back(w);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

/// Waits for `path` to appear (up to a minute).
bool appears(const fs::path& path) {
  for (int i = 0; i < 600; ++i) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

/// Waits for `pid`; its exit status, or 128 + the signal that ended it.
int finish(pid_t pid) {
  int raw = 0;
  waitpid(pid, &raw, 0);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

TEST_F(Hostile, AnInputThatIsNotAFileIsRefusedWithoutOpeningIt) {
  // A named pipe nobody writes blocked a run for ever (its output's lock taken): every input is
  // looked at (stat) before it is opened or any lock is taken. `timeout`: a regression fails
  // here instead of hanging the suite.
  const fs::path dir = scratch("pipes");
  for (const char* f : {"vp.h5", "s.h5", "d.h5", "init.h5", "d.sgy"}) fs::copy_file(base_ / f, dir / f);
  ASSERT_EQ(mkfifo((dir / "pipe.h5").c_str(), 0600), 0);
  fs::create_directories(dir / "folder.h5");
  const std::string fifo = "pipe.h5: a named pipe (FIFO), not a regular file";
  const std::vector<Case> cases = {
      {"a pipe as the model", "model --model pipe.h5 --survey s.h5 --out out.h5", fifo},
      {"a pipe as the survey", "model --model vp.h5 --survey pipe.h5 --out out.h5", fifo},
      {"a pipe as the data", "gradient --model vp.h5 --data pipe.h5 --out out.h5", fifo},
      {"a pipe as rtm's model", "rtm --model pipe.h5 --data d.h5 --out out.h5", fifo},
      {"a pipe as fwi's data", "fwi --model init.h5 --data pipe.h5 --out out.h5 --iterations 1", fifo},
      {"a pipe as the true model", "fwi --model init.h5 --data d.h5 --out out.h5 --true-model pipe.h5", fifo},
      {"a pipe planned", "plan gradient --model vp.h5 --data pipe.h5", fifo},
      {"a pipe drawn", "plot --in pipe.h5 --out out.png", fifo},
      {"a pipe imported", "import --in pipe.h5 --out out.h5 --ricker 10", fifo},
      {"a pipe exported", "export --in pipe.h5 --out out.sgy", fifo},
      {"a pipe as Marmousi2's file", "synth --kind marmousi2 --file pipe.h5 --out out.h5", fifo},
      {"a pipe as a survey's model", "survey --model pipe.h5 --out out.h5", fifo},
      {"a device as the survey", "model --model vp.h5 --survey /dev/zero --out out.h5",
       "/dev/zero: a character device, not a regular file"},
      {"a folder as the model", "gradient --model folder.h5 --data d.h5 --out out.h5",
       "folder.h5: a folder, not a regular file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    expect_refusal(dir, c.args, c.mention, 2, "timeout 60");
  }
}

TEST_F(Hostile, OutOfCoreUnderFaultsEndsInOneLineAndLeavesNothing) {
  // A store out of core (--scratch) whose disk fills mid-run: StarPU's failed write ends the
  // run in one line naming the folder and the cause, exit 1, with its scratch folder, lock and
  // temporaries removed (StarPU asserted here, exit 134). An open-files limit under which
  // StarPU cannot keep its files open is refused before any work (it spun for ever).
  const fs::path dir = scratch("out-of-core");
  auto make = [&](const std::string& args) { ASSERT_EQ(run_in(dir, args + " --quiet").status, 0) << args; };
  make("synth --kind layered --nz 150 --nx 300 --spacing 10 --smooth 40 --out vp.h5");
  make("survey --model vp.h5 --nshots 2 --dt 0.002 --t-max 1.5 --out s.h5");
  make("model --model vp.h5 --survey s.h5 --out d.h5");
  fs::create_directories(dir / "scr");
  const std::string gradient = "gradient --model vp.h5 --data d.h5 --out g.h5 --scratch scr";
  expect_refusal(dir, gradient, "more than this process's open-files limit (ulimit -n) of 100", 2, "ulimit -n 100;");
  EXPECT_EQ(run_in(dir, "gradient --quiet --model vp.h5 --data d.h5 --out g.h5", "ulimit -n 100;").status, 0)
      << "in memory, the same limit runs";
  fs::remove(dir / "g.h5");
  // A file-size limit under StarPU's files (it wrote a 16 MiB file to measure the disk, and
  // failed there): refused before any work (dash's ulimit -f counts 512-byte blocks).
  expect_refusal(dir, gradient, "StarPU's disk node writes files of 16 MiB, more than this process's file-size limit",
                 2, "ulimit -f 4000;");
  // StarPU's own swap folder is named as such, never as --scratch.
  const Result swap =
      run_in(dir, "gradient --model vp.h5 --data d.h5 --out g.h5", "STARPU_DISK_SWAP=scr STARPU_DISK_SWAP_SIZE=1");
  EXPECT_EQ(swap.status, 2) << swap.err;
  EXPECT_NE(swap.err.find("STARPU_DISK_SWAP=scr: "), std::string::npos) << swap.err;
  EXPECT_EQ(swap.err.find("--scratch"), std::string::npos) << swap.err;
  // Two out-of-core runs side by side, again and again: StarPU 1.3.10 shut down (or paused)
  // with data requests still on its disk node and crashed, 3 runs in 120 here (graph::rest
  // and graph::stopping now wait for them).
  for (const char* f : {"s.h5", "d.h5"}) fs::copy_file(base_ / f, dir / ("small-" + std::string(f)));
  fs::copy_file(base_ / "vp.h5", dir / "small-vp.h5");
  const int rounds = kSanitized ? 6 : 30;
  const auto loop = [&](int k) {
    const std::string n = std::to_string(k);
    fs::create_directories(dir / ("scr" + n));
    return "(for i in $(seq " + std::to_string(rounds) + "); do " + std::string(STARWAVE_BIN) +
           " rtm --quiet --model small-vp.h5 --data small-d.h5 --out r" + n + ".h5 --overwrite --scratch scr" + n +
           " --checkpoint-every 7 2>/dev/null || echo \"run $i ended with $?\"; done) > loop" + n + ".txt";
  };
  ASSERT_EQ(
      std::system(("cd '" + dir.string() + "' && " + loop(1) + " & cd '" + dir.string() + "' && " + loop(2) + "; wait")
                      .c_str()),
      0);
  for (const char* f : {"loop1.txt", "loop2.txt"}) {
    std::ifstream in(dir / f);
    const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(said, "") << f;
  }
  if (std::system("unshare -rm true 2>/dev/null") != 0) {
    ADD_FAILURE() << "unshare -rm (a private mount) is not allowed here: the full-disk case is not tried";
    return;
  }
  // scr a 200 MiB disk of its own, filled as soon as the run's folder appears; afterwards
  // anything but the filler's file left there is said on stderr (a second line).
  expect_refusal(
      dir, gradient, "scr: the store out of core: ", 1,
      "STARPU_LIMIT_CPU_MEM=40 unshare -rm sh -c 'mount -t tmpfs -o size=200m tmpfs scr || exit 9; "
      "(i=0; while [ $i -lt 3000 ] && [ -z \"$(ls scr)\" ]; do sleep 0.01; i=$((i+1)); done; "
      "head -c 300M /dev/zero > scr/fill 2>/dev/null) & \"$0\" \"$@\"; rc=$?; wait; "
      "left=$(ls -A scr | grep -v \"^fill$\"); [ -z \"$left\" ] || echo \"left in scr: $left\" >&2; exit $rc'");
  const Result full = run_in(dir, gradient,
                             "STARPU_LIMIT_CPU_MEM=40 unshare -rm sh -c 'mount -t tmpfs -o size=200m tmpfs scr && "
                             "head -c 300M /dev/zero > scr/fill 2>/dev/null; exec \"$0\" \"$@\"'");
  EXPECT_EQ(full.status, 2) << "a full disk before the run: refused before any work: " << full.err;
  EXPECT_NE(full.err.find("StarPU's disk node needs 16 MiB at least"), std::string::npos) << full.err;
}

TEST_F(Hostile, ASignalLeavesNoTemporaryAndNoLockAndTheOldOutputIntact) {
  const fs::path dir = scratch("signals");
  fs::copy_file(base_ / "init.h5", dir / "init.h5");
  fs::copy_file(base_ / "d.h5", dir / "small.h5");  // init.h5's data, for the inversions
  // Enough work to be caught in the middle 0.7 s in, even on a fast machine (8 shots of ~2000
  // steps were done in less here): 24 shots of ~3000 steps on 200 × 400 cells. Each run is
  // killed, so the work is never all done.
  ASSERT_EQ(run_in(dir, "synth --quiet --kind layered --nz 200 --nx 400 --spacing 10 --out vp.h5").status, 0);
  ASSERT_EQ(run_in(dir, "survey --quiet --model vp.h5 --nshots 24 --t-max 3 --out s.h5").status, 0);
  write_zero_data(dir / "s.h5", dir / "d.h5");  // modeling them costs a minute under the sanitizers
  for (const char* f : {"out.h5", "out.h5.state"}) std::ofstream(dir / f) << "an earlier result";
  struct Run {
    std::string args;
    int sig;
  };
  const std::vector<Run> runs = {
      {"model --model vp.h5 --survey s.h5 --out out.h5 --overwrite", SIGTERM},
      {"model --model vp.h5 --survey s.h5 --out out.h5 --overwrite", SIGINT},
      {"gradient --model vp.h5 --data d.h5 --out out.h5 --overwrite", SIGTERM},
      {"rtm --model vp.h5 --data d.h5 --out out.h5 --overwrite", SIGHUP},
  };
  for (const Run& r : runs) {
    SCOPED_TRACE(r.args);
    const auto before = snapshot(dir);
    const pid_t pid = start_in(dir, r.args);
    ASSERT_TRUE(appears(dir / ".out.h5.lock")) << "the run claims its output";
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // into its shots
    kill(pid, r.sig);
    EXPECT_EQ(finish(pid), 128 + r.sig) << "the signal ends the run, as its sender meant";
    EXPECT_TRUE(before == snapshot(dir)) << "no temporary, no lock, the earlier result intact";
  }
  // Out of core (--scratch): the run's scratch folder, with StarPU's files in it, goes too.
  {
    fs::create_directories(dir / "scr");
    const auto before = snapshot(dir);
    const pid_t pid = start_in(dir, "gradient --model vp.h5 --data d.h5 --out out.h5 --overwrite --scratch scr");
    bool started = false;  // the run's folder made (StarPU's disk node starting)
    for (int i = 0; i < 600 && !started; ++i) {
      started = !fs::is_empty(dir / "scr");
      if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(started) << "the run makes its scratch folder";
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // into its shots
    kill(pid, SIGTERM);
    EXPECT_EQ(finish(pid), 128 + SIGTERM);
    EXPECT_TRUE(before == snapshot(dir)) << "no scratch folder, no temporary, no lock, the earlier result intact";
    fs::remove(dir / "scr");
  }
  // SIGKILL cannot be caught: the next run on the output removes what the killed one left.
  {
    const pid_t pid = start_in(dir, runs[0].args);
    ASSERT_TRUE(appears(dir / (".out.h5.tmp." + std::to_string(pid) + ".0"))) << "the shots being written";
    kill(pid, SIGKILL);
    finish(pid);
    // A run that claims the output (and is then refused for its damaged model) tidies up.
    std::ofstream(dir / "damaged.h5") << "not HDF5";
    EXPECT_EQ(run_in(dir, "model --quiet --model damaged.h5 --survey s.h5 --out out.h5 --overwrite").status, 2);
    fs::remove(dir / "damaged.h5");
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "left: " << e.path();
  }
  // fwi and lsrtm: a first signal stops the run at the next iteration with its result and
  // state saved (exit 130); in the resumed run a second one ends it at once. Neither leaves a
  // temporary or a lock.
  auto stop_and_resume = [&](const std::string& cmd, const std::string& out) {
    SCOPED_TRACE(cmd);
    pid_t pid = start_in(dir, cmd);
    ASSERT_TRUE(appears(dir / (out + ".state"))) << "a first iteration";
    kill(pid, SIGTERM);
    EXPECT_EQ(finish(pid), 130);
    EXPECT_TRUE(fs::exists(dir / out));
    pid = start_in(dir, cmd + " --resume");
    ASSERT_TRUE(appears(dir / ("." + out + ".lock")));
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    kill(pid, SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(pid, SIGINT);
    const int status = finish(pid);
    EXPECT_TRUE(status == 130 || status == 128 + SIGINT) << status;
  };
  stop_and_resume("fwi --model init.h5 --data small.h5 --out inv.h5 --iterations 50 --figures-every 0", "inv.h5");
  stop_and_resume("lsrtm --model init.h5 --data small.h5 --out ls.h5 --iterations 50 --figures ls-figs", "ls.h5");
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << "temporary left: " << name;
    EXPECT_EQ(name.find(".lock"), std::string::npos) << "lock left: " << name;
  }
}

TEST_F(Hostile, ASecondRunOnTheSameOutputIsRefusedWhileTheFirstOwnsIt) {
  const fs::path dir = scratch("two-runs");
  for (const char* f : {"init.h5", "d.h5", "vp.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  const pid_t first = start_in(dir, "fwi --model init.h5 --data d.h5 --out inv.h5 --iterations 3 --figures-every 0");
  ASSERT_TRUE(appears(dir / ".inv.h5.lock"));
  const Result second =
      run_in(dir, "fwi --model init.h5 --data d.h5 --out inv.h5 --iterations 3 --overwrite --figures-every 0");
  const Result other = run_in(dir, "model --model vp.h5 --survey s.h5 --out inv.h5 --overwrite");
  EXPECT_EQ(finish(first), 0) << "the first run goes on undisturbed";
  for (const Result& r : {second, other}) {
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("inv.h5: another starwave run (pid " + std::to_string(first) + ") is writing it"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_TRUE(fs::exists(dir / "inv.h5"));
  EXPECT_FALSE(fs::exists(dir / ".inv.h5.lock")) << "the lock goes with its run";
  // Once the first has ended, the output is free again (and exists: --overwrite is asked).
  EXPECT_EQ(run_in(dir, "fwi --quiet --model init.h5 --data d.h5 --out inv.h5 --iterations 1 --overwrite").status, 0);
}

TEST_F(Hostile, NothingARunCreatesOrReplacesFollowsALink) {
  // A lock, an output or a picture that is a symbolic link, a second name of another file
  // (a hard link) or a pipe is refused before anything is written: the file it leads to
  // (here a user's own, or the run's own model) keeps its bytes.
  const fs::path dir = scratch("links");
  for (const char* f : {"vp.h5", "s.h5", "init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  std::ofstream(dir / "precious.txt") << "a user's own words";
  const std::string model = "model --model vp.h5 --survey s.h5 --out out.h5";
  auto lock_case = [&](const std::function<void()>& plant, const std::string& mention) {
    plant();
    expect_refusal(dir, model, mention);
    expect_refusal(dir, model + " --overwrite", mention);
    fs::remove(dir / ".out.h5.lock");
  };
  lock_case([&] { fs::create_symlink("precious.txt", dir / ".out.h5.lock"); },
            "out.h5: its lock file .out.h5.lock is a symbolic link (to precious.txt)");
  lock_case([&] { fs::create_symlink("vp.h5", dir / ".out.h5.lock"); }, "is a symbolic link (to vp.h5)");
  lock_case([&] { fs::create_symlink("nowhere", dir / ".out.h5.lock"); }, "is a symbolic link (to nowhere)");
  lock_case([&] { fs::create_hard_link(dir / "precious.txt", dir / ".out.h5.lock"); }, "(a hard link)");
  lock_case([&] { ASSERT_EQ(mkfifo((dir / ".out.h5.lock").c_str(), 0644), 0); }, "is not a regular file");
  // An output that exists is refused before its lock is touched: the planted link is
  // refused either way, and the file it leads to is never truncated.
  std::ofstream(dir / "out.h5") << "an earlier result";
  fs::create_symlink("vp.h5", dir / ".out.h5.lock");
  expect_refusal(dir, model, "out.h5: exists already");
  fs::remove(dir / ".out.h5.lock");
  fs::remove(dir / "out.h5");
  // --out naming a link, dangling or not: neither written through nor replaced.
  fs::create_symlink("nowhere.h5", dir / "dangling.h5");
  fs::create_symlink("precious.txt", dir / "mine.h5");
  for (const char* out : {"dangling.h5", "mine.h5"})
    for (const char* flag : {"", " --overwrite"}) {
      expect_refusal(dir, std::string("model --model vp.h5 --survey s.h5 --out ") + out + flag,
                     std::string(out) + ": is a symbolic link");
      expect_refusal(dir, std::string("synth --kind layered --nz 20 --nx 20 --out ") + out + flag,
                     std::string(out) + ": is a symbolic link");
    }
  EXPECT_FALSE(fs::exists(dir / "nowhere.h5"));
  // A picture fwi would draw, planted as a link in its folder.
  fs::create_directories(dir / "figs");
  fs::create_symlink("../precious.txt", dir / "figs" / "current.png");
  for (const char* flag : {"", " --overwrite"})
    expect_refusal(dir,
                   std::string("fwi --model init.h5 --data d.h5 --out inv.h5 --iterations 1 --figures figs") + flag,
                   "figs/current.png: is a symbolic link (to ../precious.txt)");
}

#if !defined(__SANITIZE_ADDRESS__)  // ASan reserves terabytes of address space: no ulimit -v
TEST_F(Hostile, AnAddressSpaceLimitIsMeasuredAndRefusedInOneLine) {
  // Under `ulimit -v` the memory plan counts the address space left, and a limit that
  // cannot hold StarPU's threads is refused before StarPU starts (it would abort there,
  // leaving the lock), never a run that waits for ever on an allocation.
  const fs::path dir = scratch("address-space");
  for (const char* f : {"vp.h5", "d.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  const std::string limit = "ulimit -v 150000;";
  expect_refusal(dir, "gradient --model vp.h5 --data d.h5 --out g.h5", "this process's address-space limit (ulimit -v)",
                 2, limit);
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out m.h5", "this process's address-space limit (ulimit -v)",
                 2, limit);
  // Room for StarPU, none for the whole wavefield of a shot (926 MiB kept whole).
  ASSERT_EQ(run_in(dir, "synth --quiet --kind layered --nz 200 --nx 400 --spacing 10 --out big.h5").status, 0);
  ASSERT_EQ(run_in(dir, "survey --quiet --model big.h5 --nshots 1 --t-max 2 --out bs.h5").status, 0);
  ASSERT_EQ(run_in(dir, "model --quiet --model big.h5 --survey bs.h5 --out bd.h5").status, 0);
  expect_refusal(dir, "gradient --model big.h5 --data bd.h5 --out g.h5 --storage full", "more than the", 2,
                 "ulimit -v 800000;");
  // Room enough: the run goes through.
  EXPECT_EQ(run_in(dir, "gradient --quiet --model vp.h5 --data d.h5 --out g.h5", "ulimit -v 1500000;").status, 0);
}
#endif

TEST_F(Hostile, ANameHoldingControlCharactersIsSaidEscapedOnOneLine) {
  // A refusal stays one line whatever the names it quotes hold: a newline, a carriage
  // return, a terminal escape.
  const fs::path dir = scratch("names");
  for (const char* f : {"vp.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  expect_refusal(dir, "model --model 'no\nsuch.h5' --survey s.h5 --out o.h5", "no\\nsuch.h5: no such file");
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out 'nodir\r\033[2K/o.h5'",
                 "nodir\\r\\x1b[2K/o.h5: the output folder");
  const Result r = run_in(dir, "'mo\ndel' --model vp.h5");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "starwave mo\\ndel: error: unknown subcommand (see starwave --help)\n");
}

/// The values of `dataset` in `file`, as doubles (empty if it cannot be read).
std::vector<double> values_of(const fs::path& file, const std::string& dataset) {
  std::vector<double> v;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return v;
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  if (d >= 0) {
    const hid_t space = H5Dget_space(d);
    v.resize(std::size_t(H5Sget_simple_extent_npoints(space)));
    if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) v.clear();
    H5Sclose(space);
    H5Dclose(d);
  }
  H5Fclose(f);
  return v;
}

TEST_F(Hostile, ADamagedStarpuHomeIsRepairedOrRefusedNeverAnAbort) {
  // StarPU aborts on model files cut short (a kill or a full disk during its save) on
  // every later run, takes an empty HOME for "/", and saves its files whatever room is
  // left. Damaged files are set aside with one line each and measured anew; a home whose
  // file system is full is refused before any work.
  const fs::path dir = scratch("starpu-home");
  for (const char* f : {"vp.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  const std::string home = "STARPU_HOME='" + (dir / "home").string() + "'";
  const std::string model = "model --quiet --model vp.h5 --survey s.h5 --out ";
  ASSERT_EQ(run_in(dir, model + "first.h5", home).status, 0);
  const fs::path models = dir / "home" / ".starpu" / "sampling" / "codelets" / "45";
  std::vector<fs::path> saved;
  for (const auto& e : fs::directory_iterator(models))
    if (e.path().filename().string().rfind("starwave_", 0) == 0) saved.push_back(e.path());
  ASSERT_FALSE(saved.empty()) << "StarPU saved no model";
  // Each model file cut short at 10%, 50% or 90% of its bytes (and the bus's
  // configuration at 10%): the run goes on, says so once per file, and computes the same.
  int k = 0;
  for (const fs::path& f : saved) fs::resize_file(f, fs::file_size(f) * std::uintmax_t(10 + 40 * (k++ % 3)) / 100);
  fs::path config;
  for (const auto& e : fs::directory_iterator(dir / "home" / ".starpu" / "sampling" / "bus"))
    if (e.path().extension() == ".config") config = e.path();
  ASSERT_FALSE(config.empty());
  fs::resize_file(config, fs::file_size(config) / 10);
  const Result r = run_in(dir, model + "second.h5", home);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), long(saved.size()) + 1) << r.err;
  EXPECT_NE(r.err.find("starwave model: note: StarPU's performance model "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("could not be read (cut short?); set aside as"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("StarPU's bus measurements " + config.string()), std::string::npos) << r.err;
  const std::vector<double> first = values_of(dir / "first.h5", "/data");
  EXPECT_FALSE(first.empty());
  EXPECT_TRUE(first == values_of(dir / "second.h5", "/data")) << "the same data, bit for bit";
  const Result again = run_in(dir, model + "third.h5", home);
  EXPECT_EQ(again.status, 0);
  EXPECT_EQ(again.err, "") << "measured anew and saved: nothing left to set aside";
  // A model that is a folder (StarPU aborts reading it; a pipe, it would wait on for ever).
  const fs::path& made = saved.front();
  fs::remove(made);
  fs::create_directories(made / "x");
  const Result folder = run_in(dir, model + "folder.h5", home);
  EXPECT_EQ(folder.status, 0) << folder.err;
  EXPECT_NE(folder.err.find(made.string() + " is not a regular file; set aside"), std::string::npos) << folder.err;
  // An empty HOME is not "/", and no home at all is the user's own.
  const bool root_home_before = fs::exists("/.starpu");
  EXPECT_EQ(run_in(dir, model + "fourth.h5", "HOME= STARPU_HOME= XDG_CACHE_HOME=").status, 0);
  if (!root_home_before) {
    EXPECT_FALSE(fs::exists("/.starpu")) << "StarPU made its home at /";
  }
  EXPECT_EQ(run_in(dir, model + "fifth.h5", "env -u HOME -u STARPU_HOME -u XDG_CACHE_HOME").status, 0);
  // A home on a full file system (a 256 KiB tmpfs, filled): refused before any work.
  if (std::system("unshare -rm true 2>/dev/null") != 0) {
    ADD_FAILURE() << "unshare -rm (a private mount) is not allowed here: the full-disk case is not tried";
    return;
  }
  fs::create_directories(dir / "full");
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out full.h5",
                 "the file system of " + (dir / "full").string() + "/.starpu/sampling has", 2,
                 "unshare -rm sh -c 'mount -t tmpfs -o size=256k tmpfs full && head -c 250000 /dev/zero > full/fill; "
                 "STARPU_HOME=\"$PWD/full\" exec \"$0\" \"$@\"'");
}

TEST_F(Hostile, AnInversionKilledOutrightLeavesNothingThatBlocksItsRerun) {
  // SIGKILL cannot be caught. Pictures are drawn only once a state is saved, so a run
  // killed at any moment leaves either nothing of its own (the same command runs again)
  // or a state with its pictures (continued with --resume, which replaces them).
  const fs::path dir = scratch("killed-fwi");
  for (const char* f : {"init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  const std::string fwi = "fwi --quiet --model init.h5 --data d.h5 --out inv.h5 --iterations 3";
  // Killed the moment its first picture appears: its state is there already.
  const pid_t pid = start_in(dir, fwi);
  bool drawn = false;
  for (int i = 0; i < 12000 && !drawn; ++i) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "inv_figures", ec))
      if (e.path().extension() == ".png") drawn = true;
    if (!drawn) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  finish(pid);
  ASSERT_TRUE(drawn) << "no picture within a minute";
  EXPECT_TRUE(fs::exists(dir / "inv.h5.state")) << "a picture drawn before any state";
  EXPECT_EQ(run_in(dir, fwi + " --resume").status, 0) << "the killed run is continued";
  // Killed as soon as it has claimed its output, before any state: the same command again.
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != "init.h5" && e.path().filename() != "d.h5") fs::remove_all(e.path());
  const pid_t early = start_in(dir, fwi);
  ASSERT_TRUE(appears(dir / ".inv.h5.lock"));
  kill(early, SIGKILL);
  finish(early);
  const bool saved = fs::exists(dir / "inv.h5.state");
  const Result again = run_in(dir, fwi + (saved ? " --resume" : ""));
  EXPECT_EQ(again.status, 0) << (saved ? "resumed: " : "the same command: ") << again.err;
}

TEST_F(Hostile, AFailedInversionLeavesNoPicturesAndNoResult) {
  const fs::path dir = scratch("failed-fwi");
  for (const char* f : {"init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  const auto before = snapshot(dir);
  const Result r =
      run_in(dir, "fwi --model init.h5 --data d.h5 --out inv.h5 --iterations 2", "STARWAVE_TEST_FAIL_TASK=adjoint");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("adjoint"), std::string::npos) << r.err;
  EXPECT_TRUE(before == snapshot(dir)) << "no figures folder, no result, no state, no temporary, no lock";
}

TEST_F(Hostile, ANumberIsDecimalAndAValueIsNeverEmpty) {
  // "0x10" is not 16 m, and an empty value (a shell variable that expanded to nothing) is a
  // mistake, not the option left out.
  const fs::path dir = scratch("words");
  for (const char* f : {"vp.h5", "init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  ASSERT_EQ(run_in(dir, "export --in vp.h5 --out vp.sgy").status, 0);
  expect_refusal(dir, "import --velocity --in vp.sgy --out v.h5 --spacing 0x10", "--spacing");
  expect_refusal(dir, "import --velocity --in vp.sgy --out v.h5 --spacing 1e1,0x4", "--spacing");
  const std::string fwi = "fwi --model init.h5 --data d.h5 --out r.h5 --iterations 1 ";
  expect_refusal(dir, fwi + "--bands ''", "--bands: empty value");
  expect_refusal(dir, fwi + "--figures ''", "--figures: empty value");
  expect_refusal(dir, "plot --in vp.h5 --out p.png --title ''", "--title: empty value");
  std::ofstream(dir / "empty.ini") << "# an empty value\nfigures =\n";
  expect_refusal(dir, fwi + "--config empty.ini",
                 "--figures: empty value; give one, or leave the option out (in empty.ini, line 2)");
  // Decimal forms are all taken.
  EXPECT_EQ(run_in(dir, "import --velocity --in vp.sgy --out v.h5 --spacing 1e1").status, 0);
}

TEST_F(Hostile, AConfigValueRefusedByItsMeaningNamesTheFileAndLine) {
  // A value that parses but means nothing here (order 5) is refused after the file is read:
  // the message still says where it came from; a value the command line gives does not.
  const fs::path dir = scratch("config-line");
  for (const char* f : {"vp.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  std::ofstream(dir / "run.ini") << "# the run\n\n  order = 5\n";
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out d.h5 --config run.ini",
                 "--order: must be 2, 4, 6 or 8 (got 5) (in run.ini, line 3)");
  std::ofstream(dir / "typo.ini") << "pml-width = 10\norder = eight\n";
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out d.h5 --config typo.ini", "typo.ini: line 2:");
  const Result cli = run_in(dir, "model --model vp.h5 --survey s.h5 --out d.h5 --order 5");
  EXPECT_EQ(cli.status, 2);
  EXPECT_EQ(cli.err.find("(in "), std::string::npos) << cli.err;
}

TEST_F(Hostile, AResumedStateOutsideTheInversionsBoundsIsRefused) {
  // A state holds a model the inversion made, always within its bounds: a negative or NaN
  // velocity there is damage, and is never continued from.
  for (const double bad : {-1500.0, std::nan("")}) {
    const fs::path dir = scratch("damaged-state");
    for (const char* f : {"init.h5", "d.h5", "r.h5", "r.h5.state"}) fs::copy_file(base_ / f, dir / f);
    poke(dir / "r.h5.state", "/vp", 5, bad);
    expect_refusal(dir, "fwi --model init.h5 --data d.h5 --out r.h5 --iterations 2 --figures-every 0 --resume",
                   std::isnan(bad) ? "r.h5.state: /vp holds NaN"
                                   : "r.h5.state: /vp holds -1500 m/s at cell 5, outside the inversion's bounds");
  }
}

TEST_F(Hostile, AFiguresFolderThatCannotBeWrittenIsRefusedBeforeAnyWork) {
  const fs::path dir = scratch("read-only-figures");
  for (const char* f : {"init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  fs::create_directories(dir / "ro");
  if (std::system("unshare -rm true 2>/dev/null") != 0) {
    ADD_FAILURE() << "unshare -rm (a private mount) is not allowed here: the read-only folder is not tried";
    return;
  }
  // A read-only file system mounted on ro/ (root writes anywhere else).
  const std::string ro = "unshare -rm sh -c 'mount -t tmpfs -o ro tmpfs ro && exec \"$0\" \"$@\"'";
  const std::string fwi = "fwi --model init.h5 --data d.h5 --out r.h5 --iterations 1 ";
  expect_refusal(dir, fwi + "--figures ro/pictures", "--figures: ro/pictures: cannot write in ro", 2, ro);
  expect_refusal(dir, fwi + "--figures ro", "--figures: ro: cannot write in ro", 2, ro);
}

}  // namespace
}  // namespace starwave::test
