// tests/test_hostile.cpp — starwave used as a hostile user would (docs/design.md §5, issue 12).
//
// Every refusal must be: one line on stderr, ours ("starwave CMD: error: …", naming the
// file or option), a non-zero exit, no output, and nothing in the folder touched — no file
// changed, none added (no temporary, no lock), none removed. The table covers each class
// of failure over the subcommands it applies to; signals, a full disk, two runs on one
// output and a failed inversion's pictures have tests of their own.
//
// Signals, out of core under faults, links, StarPU homes and inversions: tests/test_hostile_runs.cpp
// (the same executable; the fixture of tests/hostile_fixture.hpp).
#include "tests/hostile_fixture.hpp"

namespace starwave::test {
namespace {

TEST_F(Hostile, StarpuEnvironmentStarPUWouldAbortOnIsRefused) {
  // StarPU asserts (abort, core, the run's lock left behind) or hangs on these; starwave refuses them
  // first, naming the variable, and a value StarPU takes still runs.
  const std::string run = "model --model vp.h5 --survey s.h5 --out out.h5";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"STARPU_NCPU=-1", "STARPU_NCPU='-1' must be a whole number"},
      {"STARPU_NCPU=two", "STARPU_NCPU='two'"},
      {"STARPU_NCUDA=-1", "STARPU_NCUDA='-1'"},
      {"STARPU_LIMIT_CPU_MEM=1G", "STARPU_LIMIT_CPU_MEM='1G'"},
      {"STARPU_WORKERS_CPUID=abc", "STARPU_WORKERS_CPUID='abc' must list processing units"},
      {"STARPU_SCHED=fastest", "STARPU_SCHED='fastest' is not a StarPU scheduler (eager"},
      {"env -u XDG_CACHE_HOME STARPU_HOME=/proc", "STARPU_HOME='/proc': StarPU cannot keep its performance models"},
      {"env -u XDG_CACHE_HOME STARPU_HOME=vp.h5", "STARPU_HOME='vp.h5'"},
      // StarPU's cap on its allocations below one shot: it waited for memory for ever.
      {"STARPU_LIMIT_CPU_MEM=0", "STARPU_LIMIT_CPU_MEM=0 (MiB) lets StarPU allocate"},
  };
  for (const auto& [env, mention] : bad) expect_refusal(base_, run, mention, 2, env);
  expect_refusal(base_, "info", "STARPU_NCPU='-1'", 2, "STARPU_NCPU=-1");
  const fs::path dir = scratch("environment");
  fs::copy_file(base_ / "vp.h5", dir / "vp.h5");
  fs::copy_file(base_ / "s.h5", dir / "s.h5");
  for (const char* fine :
       {"STARPU_NCPU=1", "STARPU_SCHED=lws", "STARPU_WORKERS_CPUID='0 1'", "STARPU_WORKERS_CPUID=0-1"}) {
    EXPECT_EQ(run_in(dir, run + " --quiet --overwrite", fine).status, 0) << fine;
    EXPECT_TRUE(fs::exists(dir / "out.h5")) << fine;
  }
}

TEST_F(Hostile, EveryClassOfBadInputIsRefusedInOneLineAndTouchesNothing) {
  std::vector<Case> cases = {
      // 1. Crashes: inputs that used to end in a signal.
      {"NaN in a gradient drawn", "plot --in nan-gradient.h5 --dataset /gradient --out out.png", "nan-gradient.h5"},
      {"NaN in a gather drawn", "plot --in nan-data.h5 --dataset /data --shot 0 --out out.png", "NaN"},
      {"NaN in fwi's data", "fwi --model init.h5 --data nan-data.h5 --out out.h5 --iterations 1", "nan-data.h5: /data"},
      {"a smoothing longer than the model", "synth --kind layered --smooth 1e10 --out out.h5", "--smooth"},
      {"fwi smoothing longer than the model", "fwi --model init.h5 --data d.h5 --out out.h5 --smooth 1e10", "--smooth"},
      // 2. Silent garbage: values that cannot give a finite result.
      {"NaN in observed data", "gradient --model vp.h5 --data nan-data.h5 --out out.h5", "NaN"},
      {"NaN in rtm's data", "rtm --model vp.h5 --data nan-data.h5 --out out.h5", "nan-data.h5"},
      {"Inf in a wavelet", "gradient --model vp.h5 --data inf-wavelet.h5 --out out.h5", "/source/wavelet holds Inf"},
      {"Inf in a wavelet modeled", "model --model vp.h5 --survey inf-wavelet.h5 --out out.h5", "inf-wavelet.h5"},
      {"NaN in a position", "model --model vp.h5 --survey nan-position.h5 --out out.h5", "/receiver/position"},
      {"an absurd dt", "model --model vp.h5 --survey absurd-dt-survey.h5 --out out.h5", "dt"},
      {"an absurd dt in data", "gradient --model vp.h5 --data absurd-dt.h5 --out out.h5", "dt"},
      {"a restart state holding NaN", "fwi --model init.h5 --data d.h5 --out nan-state.h5 --resume --iterations 2",
       "nan-state.h5.state: /vp holds NaN"},
      {"NaN as an option", "survey --model vp.h5 --frequency nan --out out.h5", "--frequency"},
      {"Inf as an option", "fwi --model init.h5 --data d.h5 --out out.h5 --vmax inf", "--vmax"},
      {"a velocity a float cannot hold", "synth --kind constant --velocity 1e39 --nz 4 --nx 4 --out out.h5",
       "--velocity: velocity at (z=0, x=0) is 1e+39"},
      {"a velocity a float rounds to 0", "synth --kind constant --velocity 1e-46 --nz 4 --nx 4 --out out.h5",
       "within a 32-bit float's range"},
      {"a unit scale beyond a float", "import --velocity --in vp.sgy --out out.h5 --scale 1e35", "vp.sgy: velocity"},
      {"a zero velocity drawn", "plot --in zero-vp.h5 --out out.png", "zero-vp.h5: velocity at"},
      {"a zero velocity exported", "export --in zero-vp.h5 --out out.sgy", "zero-vp.h5: velocity at"},
      {"a zero spacing drawn", "plot --in flat-vp.h5 --out out.png", "flat-vp.h5: /vp's spacing attribute holds 0"},
      {"a spacing of no size modeled", "model --model tiny-vp.h5 --survey s.h5 --out out.h5",
       "tiny-vp.h5: grid spacing must be positive, in metres, between"},
      {"a spacing of no size synthesized", "synth --kind layered --spacing 1e-300 --out out.h5",
       "--spacing: must be 0 (the kind's default) or a grid spacing"},
      {"a spacing beyond the earth synthesized", "synth --kind layered --spacing 1e300 --out out.h5", "(got 1e+300)"},
      {"a spacing of no size imported", "import --velocity --in vp.sgy --out out.h5 --spacing 1e-300",
       "--spacing: '1e-300' is not one spacing"},
      {"a gradient's zero spacing drawn", "plot --in flat-g.h5 --dataset /gradient --out out.png",
       "flat-g.h5: /gradient's spacing attribute holds 0"},
      {"a gradient's zero spacing exported", "export --in flat-g.h5 --dataset /gradient --out out.sgy",
       "flat-g.h5: /gradient's spacing attribute holds 0"},
      {"a name longer than the file system allows", "synth --kind layered --out " + std::string(256, 'n'),
       "a file name of 256 bytes; this file system allows 255"},
      {"fwi's state name past the limit", "fwi --model init.h5 --data d.h5 --out " + std::string(252, 'n'),
       ".state: a file name of 258 bytes"},
      {"a default Ricker delay past a short record", "import --in d.sgy --out out.h5 --ricker 2",
       "--ricker: the pulse's peak at its default delay 1.5 / F0 = 0.75 s (give --delay)"},
      {"fwi's state where a folder is", "fwi --model init.h5 --data d.h5 --out clash.h5 --iterations 1",
       "clash.h5.state: is a folder"},
      {"fwi's state where a folder is, overwriting",
       "fwi --model init.h5 --data d.h5 --out clash.h5 --iterations 1 --overwrite", "clash.h5.state: is a folder"},
      {"a model compressed by a missing plugin", "model --model plugin-vp.h5 --survey s.h5 --out out.h5",
       "plugin-vp.h5: cannot read dataset /vp (it is compressed with HDF5 filter 40000"},
      {"data compressed by a missing plugin", "gradient --model vp.h5 --data plugin-data.h5 --out out.h5",
       "HDF5 filter 40000"},
      {"a gather compressed by a missing plugin", "plot --in plugin-data.h5 --dataset /data --out out.png",
       "h5repack -f NONE"},
      {"an imported Ricker above Nyquist", "import --in d.sgy --out out.h5 --ricker 300", "--ricker: a 300 Hz"},
      {"an imported Ricker after the record", "import --in d.sgy --out out.h5 --ricker 10 --delay 1e9",
       "--delay: the pulse's peak at 1e+09 s"},
      {"an upper bound no time step follows", "fwi --model init.h5 --data d.h5 --out out.h5 --vmax 1e30",
       "--vmax: the inversion's upper bound 1e+30 m/s cannot be modeled"},
      {"a dt of no size", "survey --model vp.h5 --dt 1e-300 --out out.h5",
       "samples per trace, more than any machine can hold"},
      {"a Ricker of no frequency", "survey --model vp.h5 --frequency 1e-9 --out out.h5",
       "--frequency: a 1e-09 Hz Ricker peaks at 1.5e+09 s (1.5 / its frequency), after the record's end"},
      {"a Ricker of a THz", "survey --model vp.h5 --frequency 1e12 --out out.h5",
       "at dt = 8e-14 s (automatic: 12 samples per period of the 1e+12 Hz Ricker)"},
      {"a Marmousi2 file of zeros", "synth --kind marmousi2 --file zeros.f32 --out out.h5",
       "zeros.f32: velocity at (z=0, x=0) is 0"},
      {"a source below the model", "survey --model vp.h5 --source-depth 1e9 --out out.h5",
       "--source-depth: 1e+09 m is not a grid row inside the model"},
      {"a record shorter than a cell's crossing", "gradient --model vp.h5 --data us-data.h5 --out out.h5",
       "ends before a wave at the model's v_max = 3500 m/s crosses one cell (10 m)"},
      {"a record of one sample", "survey --model vp.h5 --t-max 1e-300 --out out.h5", "a record needs at least 2"},
      // 3. Sizes: declared shapes far beyond memory, in tiny files.
      {"an enormous model", "model --model huge-vp.h5 --survey s.h5 --out out.h5", "huge-vp.h5: /vp"},
      {"an enormous model drawn", "plot --in huge-vp.h5 --out out.png", "huge-vp.h5"},
      {"an enormous wavelet", "model --model vp.h5 --survey huge-wavelet.h5 --out out.h5", "huge-wavelet.h5"},
      {"an enormous record asked for", "survey --model vp.h5 --t-max 1e9 --out out.h5", "--t-max"},
      {"a whole stored wavefield beyond memory",
       "gradient --model big.h5 --data big-data.h5 --out out.h5 --storage full", "the stored forward wavefield"},
      {"an RTM's whole store beyond memory", "rtm --model big.h5 --data big-data.h5 --out out.h5 --storage full",
       "--scratch DIR (the store out of core), --storage boundary"},
      // 4. Inputs as outputs, whatever the flags.
      {"gradient over its data", "gradient --model vp.h5 --data d.h5 --out d.h5 --overwrite", "is also an input"},
      {"rtm over its model", "rtm --model vp.h5 --data d.h5 --out vp.h5 --overwrite", "is also an input"},
      {"model over its survey", "model --model vp.h5 --survey s.h5 --out s.h5 --overwrite", "is also an input"},
      {"model over a hard link to its input", "model --model vp.h5 --survey d.h5 --out d-link.h5 --overwrite",
       "is also an input"},
      {"plot over its input", "plot --in vp.h5 --out vp.h5 --overwrite", "is also an input"},
      {"a PNG under a JPEG's name", "plot --in vp.h5 --out out.JPG",
       "--out: out.JPG: this command writes PNG, and a name ending in .jpg says JPEG: give a name ending in .png"},
      {"HDF5 under a SEG-Y name", "model --model vp.h5 --survey s.h5 --out out.sgy", "writes HDF5, and a name ending"},
      {"a model's shot records exported", "export --in vp.h5 --dataset /data --out out.sgy",
       "vp.h5: missing dataset /data"},
      {"SEG-Y under an HDF5 name", "export --in d.h5 --out out.h5",
       "ending in .h5 says HDF5: give a name ending in .sgy"},
      {"HDF5 under a NumPy name", "synth --kind layered --out out.npy", "ending in .npy says NumPy"},
      {"a SEG-Y model given as HDF5", "model --model vp.sgy --survey s.h5 --out out.h5",
       "vp.sgy: a SEG-Y file, not HDF5: bring it in with `starwave import`"},
      {"a SEG-Y file renamed, drawn", "plot --in d-sgy.h5 --out out.png", "d-sgy.h5: a SEG-Y file, not HDF5"},
      {"an import under a SEG-Y name", "import --in d.sgy --out out.segy --ricker 10", "ending in .segy says SEG-Y"},
      {"survey over its model", "survey --model vp.h5 --out vp.h5 --overwrite", "is also an input"},
      {"fwi over its data", "fwi --model init.h5 --data d.h5 --out d.h5 --overwrite", "is also an input"},
      {"fwi over its true model", "fwi --model init.h5 --data d.h5 --out vp.h5 --true-model vp.h5 --overwrite",
       "is also an input"},
      {"fwi's pictures over a user's file", "fwi --model init.h5 --data d.h5 --out out.h5 --figures mine",
       "mine/current.png: exists already"},
      {"fwi's pictures in a missing folder", "fwi --model init.h5 --data d.h5 --out out.h5 --figures no/such/dir",
       "--figures"},
      {"an existing output", "synth --kind layered --out vp.h5", "exists already"},
      {"an output folder that does not exist", "synth --kind layered --out nowhere/out.h5", "does not exist"},
      {"an output that is a folder", "synth --kind layered --out mine --overwrite", "is a folder"},
      {"an output that is a device", "synth --kind layered --out /dev/null --overwrite", "not a regular file"},
      // 6. Words dropped.
      {"a list in several words", "fwi --model init.h5 --data d.h5 --out out.h5 --bands 3 5 8", "'5'"},
      {"info with a word", "info bogus", "'bogus'"},
      {"model with a word", "model --model vp.h5 --survey s.h5 --out out.h5 extra", "'extra'"},
      {"synth with a word", "synth layered --out out.h5", "'layered'"},
      {"plot with a word", "plot --in vp.h5 --out out.png twice", "'twice'"},
      // 7. Nonsense.
      {"a negative dt", "survey --model vp.h5 --dt -0.001 --out out.h5", "--dt"},
      {"layers that would not absorb", "gradient --model vp.h5 --data d.h5 --out out.h5 --pml-velocity 1e300",
       "--pml-velocity: 1e+300 m/s is outside 150 … 35000 m/s"},
      {"layers that would not damp", "model --model vp.h5 --survey s.h5 --out out.h5 --pml-velocity 1e-300",
       "--pml-velocity: 1e-300 m/s is outside"},
      {"a layers' frequency past Nyquist", "gradient --model vp.h5 --data d.h5 --out out.h5 --pml-frequency 1e300",
       "--pml-frequency: 1e+300 Hz is above the data's Nyquist frequency 250 Hz"},
      {"checkpoints past any record", "gradient --model vp.h5 --data d.h5 --out out.h5 --checkpoint-every 99999999999",
       "--checkpoint-every: 99999999999 steps is more than a record can have"},
      {"a negative record length", "survey --model vp.h5 --t-max -1 --out out.h5", "--t-max"},
      {"a negative source depth", "survey --model vp.h5 --source-depth -10 --out out.h5", "--source-depth"},
      {"a Ricker above Nyquist", "survey --model vp.h5 --dt 0.01 --frequency 40 --out out.h5", "--frequency"},
      {"a negative fix-top", "fwi --model init.h5 --data d.h5 --out out.h5 --fix-top -10", "--fix-top"},
      {"a negative vmin", "fwi --model init.h5 --data d.h5 --out out.h5 --vmin -1500", "--vmin"},
      {"pictures where the result goes", "fwi --model init.h5 --data d.h5 --out out.h5 --figures ./out.h5",
       "--figures: ./out.h5 is the name of the result (--out)"},
      {"pictures where the state goes", "fwi --model init.h5 --data d.h5 --out out.h5 --figures out.h5.state",
       "--figures: out.h5.state is the name of the restart state (out.h5.state)"},
      {"bounds in km/s", "fwi --model init.h5 --data d.h5 --out out.h5 --vmin 1.5 --vmax 4.5",
       "--vmin/--vmax: the bounds 1.5–4.5 m/s exclude every velocity of the initial model"},
      {"a band at 0 Hz", "fwi --model init.h5 --data d.h5 --out out.h5 --bands 0,5",
       "--bands: 0 Hz is not between 0 and the data's Nyquist"},
      {"a negative smoothing", "fwi --model init.h5 --data d.h5 --out out.h5 --smooth -5", "--smooth"},
      {"a NaN smoothing", "synth --kind layered --smooth nan --out out.h5", "--smooth"},
      {"batches with L-BFGS", "fwi --model init.h5 --data d.h5 --out out.h5 --batch-shots 1", "--batch-shots"},
      {"a learning rate with L-BFGS", "fwi --model init.h5 --data d.h5 --out out.h5 --learning-rate 5",
       "--learning-rate"},
      {"a seed without batches", "fwi --model init.h5 --data d.h5 --out out.h5 --optimizer adam --seed 3", "--seed"},
      {"L-BFGS memory with Adam", "fwi --model init.h5 --data d.h5 --out out.h5 --optimizer adam --memory 3",
       "--memory"},
      {"resume and overwrite", "fwi --model init.h5 --data d.h5 --out r.h5 --resume --overwrite", "choose one"},
      // 5. A resume must continue the run its state was made by (docs/design.md §5): the state, the
      // result and the pictures stay as they are.
      {"a resume with another order", "fwi --model init.h5 --data d.h5 --out r.h5 --resume --iterations 2 --order 4",
       "r.h5.state was made with --order 8, this run has 4"},
      {"a resume with another optimiser setting",
       "fwi --model init.h5 --data d.h5 --out r.h5 --resume --iterations 2 --memory 3", "--memory 5, this run has 3"},
      {"a resume with bands", "fwi --model init.h5 --data d.h5 --out r.h5 --resume --iterations 2 --bands 5",
       "--bands none, this run has 5"},
      {"a resume with a 16-bit store",
       "fwi --model init.h5 --data d.h5 --out r.h5 --resume --iterations 2 --store-compression bf16",
       "--store-compression none, this run has bf16"},
      {"a resume from another model", "fwi --model vp.h5 --data d.h5 --out r.h5 --resume --iterations 2",
       "the initial model's values (--model)"},
      {"a resume with other data", "fwi --model init.h5 --data other-data.h5 --out r.h5 --resume --iterations 2",
       "the observed traces (--data)"},
      {"a resume of a state that does not say what made it",
       "fwi --model init.h5 --data d.h5 --out old.h5 --resume --iterations 2", "does not record what made it"},
      {"keep-water without smoothing", "synth --kind layered --keep-water --out out.h5", "--keep-water"},
      {"a velocity for a layered model", "synth --kind layered --velocity 1800 --out out.h5", "--velocity"},
      {"storage for modeling", "model --model vp.h5 --survey s.h5 --out out.h5 --storage full", "--storage"},
      {"a negative PML velocity", "gradient --model vp.h5 --data d.h5 --out out.h5 --pml-velocity -1500",
       "--pml-velocity"},
      {"a PML inset past the stencil", "model --model vp.h5 --survey s.h5 --out out.h5 --order 4 --pml-inset 3",
       "--pml-inset: must be between 0 and the stencil's radius, 2 at order 4 (got 3)"},
      {"a negative PML inset", "gradient --model vp.h5 --data d.h5 --out out.h5 --pml-inset -2", "--pml-inset"},
      {"a PML velocity that is not a number", "model --model vp.h5 --survey s.h5 --out out.h5 --pml-velocity nan",
       "--pml-velocity"},
      {"an unknown storage", "rtm --model vp.h5 --data d.h5 --out out.h5 --storage layers",
       "'boundary', 'full' or 'shell'"},
      {"a negative checkpoint interval", "gradient --model vp.h5 --data d.h5 --out out.h5 --checkpoint-every -3",
       "--checkpoint-every: must be a whole number of steps, 0 or more (got '-3')"},
      {"a checkpoint interval in steps and a half", "rtm --model vp.h5 --data d.h5 --out out.h5 --checkpoint-every 2.5",
       "--checkpoint-every"},
      {"a checkpoint interval past any run",
       "fwi --model init.h5 --data d.h5 --out out.h5 --checkpoint-every 99999999999", "--checkpoint-every"},
      {"checkpoints for modeling", "model --model vp.h5 --survey s.h5 --out out.h5 --checkpoint-every 5",
       "--checkpoint-every: has no effect in model"},
      {"an unknown store compression", "gradient --model vp.h5 --data d.h5 --out out.h5 --store-compression zfp",
       "--store-compression: must be 'none', 'fp16', 'bf16', 'zfp16', 'zfp12' or 'zfp8' (got 'zfp')"},
      {"a store compression in capitals", "rtm --model vp.h5 --data d.h5 --out out.h5 --store-compression FP16",
       "--store-compression"},
      {"a memory limit in no unit", "gradient --model vp.h5 --data d.h5 --out out.h5 --memory-limit 4X",
       "--memory-limit: must be a size such as 8G"},
      {"a memory limit of nothing", "rtm --model vp.h5 --data d.h5 --out out.h5 --memory-limit 0G", "(got '0G')"},
      {"store compression for modeling", "model --model vp.h5 --survey s.h5 --out out.h5 --store-compression fp16",
       "--store-compression: has no effect in model"},
      {"quiet and verbose", "gradient --model vp.h5 --data d.h5 --out out.h5 --quiet --verbose", "--quiet"},
      {"a colour scale upside down", "plot --in vp.h5 --out out.png --vmin 3000 --vmax 1000", "--vmin"},
      {"a colour scale for a gather", "plot --in d.h5 --dataset /data --out out.png --vmin 0 --vmax 1", "--vmin"},
      {"a shot for a model", "plot --in vp.h5 --out out.png --shot 3", "--shot"},
      {"a negative shot", "plot --in d.h5 --dataset /data --shot -1 --out out.png", "--shot"},
      {"a shot past the last", "plot --in d.h5 --dataset /data --shot 9 --out out.png", "index 9"},
      // 8. Messages: the option named once, not the library's words.
      {"an unknown option", "gradient --model vp.h5 --data d.h5 --out out.h5 --bogus 3", "--bogus"},
      {"a bad number", "survey --model vp.h5 --nshots many --out out.h5", "--nshots"},
      {"a negative seed", "fwi --model init.h5 --data d.h5 --out out.h5 --optimizer adam --batch-shots 1 --seed -1",
       "--seed: must be a whole number from 0 to 4294967295"},
      {"more shots than columns", "survey --model vp.h5 --nshots 61 --out out.h5",
       "--nshots: 61 shots along x do not fit the model's 60 columns"},
  };
  // The classes whose defence is shared, over every subcommand they apply to: each
  // subcommand's normal arguments, spoiled one way at a time.
  const std::map<std::string, std::string> normal = {
      {"synth", "synth --kind layered --out out.h5"},
      {"survey", "survey --model vp.h5 --out out.h5"},
      {"model", "model --model vp.h5 --survey s.h5 --out out.h5"},
      {"gradient", "gradient --model vp.h5 --data d.h5 --out out.h5"},
      {"rtm", "rtm --model vp.h5 --data d.h5 --out out.h5"},
      {"fwi", "fwi --model init.h5 --data d.h5 --out out.h5 --iterations 1"},
      {"plot", "plot --in vp.h5 --out out.png"},
  };
  for (const auto& [command, args] : normal) {
    cases.push_back({"a stray word", args + " stray", "'stray'"});
    cases.push_back({"quiet and verbose", args + " --quiet --verbose", "choose one"});
    std::string existing = args;  // its --out an existing file (not an input), no --overwrite
    const std::size_t out = existing.find("--out out."), end = existing.find(' ', out + 6);
    existing.replace(out, end == std::string::npos ? std::string::npos : end - out, "--out g.h5");
    cases.push_back({"an existing output", existing, "g.h5: exists already"});
  }
  cases.push_back({"a stray word", "info stray", "'stray'"});
  // Inputs as outputs, NaN and enormous shapes, for every subcommand that reads a file.
  for (const std::string command : {"survey", "model", "gradient", "rtm", "fwi", "plot"}) {
    std::string args = normal.at(command);
    auto with = [&](const std::string& from, const std::string& to) {
      std::string a = args;
      const std::size_t at = a.find(from);
      return a.replace(at, from.size(), to);
    };
    const std::string model = command == "fwi" ? "init.h5" : "vp.h5";
    const std::string model_option = command == "plot" ? "--in " : "--model ";
    cases.push_back({"an enormous model", with(model_option + model, model_option + "huge-vp.h5"), "huge-vp.h5"});
    if (command == "plot" || command == "survey") continue;
    const std::string data = command == "model" ? "--survey s.h5" : "--data d.h5";
    const std::string data_file = data.substr(data.find(' ') + 1);
    cases.push_back(
        {"the output is the data", with("--out out.h5", "--out " + data_file + " --overwrite"), "is also an input"});
    cases.push_back({"Inf in the wavelet", with(data, data.substr(0, data.find(' ')) + " inf-wavelet.h5"),
                     "/source/wavelet holds Inf"});
    cases.push_back(
        {"an enormous wavelet", with(data, data.substr(0, data.find(' ')) + " huge-wavelet.h5"), "huge-wavelet.h5"});
    if (command != "model")
      cases.push_back({"NaN in the data", with(data, "--data nan-data.h5"), "nan-data.h5: /data"});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    expect_refusal(base_, c.args, c.mention);
  }
}

TEST_F(Hostile, AFullDiskIsOneLineNamingTheFileAndLeavesNothing) {
  // A file-size limit (ulimit -f: 512-byte blocks under dash, 1 KiB under bash) fails every
  // write as a full disk does: the same path through HDF5 and libpng, without needing the
  // privilege to mount a small disk.
  const fs::path dir = scratch("full");
  for (const char* f : {"vp.h5", "s.h5", "d.h5", "d.sgy"}) fs::copy_file(base_ / f, dir / f);
  const std::string limit = "ulimit -f 8;";
  expect_refusal(dir, "gradient --model vp.h5 --data d.h5 --out g.h5", "g.h5: writing the file: file too large", 1,
                 limit);
  expect_refusal(dir, "synth --kind layered --out m.h5", "m.h5: writing", 1, limit);
  expect_refusal(dir, "plot --in d.h5 --dataset /data --out p.png", "p.png: cannot write the picture", 1,
                 "ulimit -f 1;");
  // With --overwrite too, the existing output stays as it was.
  fs::copy_file(dir / "vp.h5", dir / "old.h5");
  expect_refusal(dir, "synth --kind layered --out old.h5 --overwrite", "old.h5: writing", 1, limit);
  // Shot records (the large outputs) are measured against the disk and the limit before
  // any work: refused, not written until the disk fills.
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out data.h5",
                 "data.h5: /data needs 70.8 KiB on disk, more than this process's file-size limit (ulimit -f)", 2,
                 limit);
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out d.h5 --overwrite", "d.h5: /data needs", 2, limit);
  expect_refusal(dir, "import --in d.sgy --out i.h5 --ricker 10", "i.h5: /data needs", 2, limit);
  expect_refusal(dir, "export --in d.h5 --out e.sgy", "e.sgy: the SEG-Y file needs", 2, limit);
  expect_refusal(dir, "export --in vp.h5 --out e.sgy", "e.sgy: the SEG-Y file needs", 2, "ulimit -f 1;");
}

}  // namespace
}  // namespace starwave::test
