// tests/test_io.cpp — HDF5 round trips and output safety.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>

#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/memory/plan.hpp"
#include "src/memory/room.hpp"
#include "src/safety/inputs.hpp"
#include "src/safety/outputs.hpp"
#include "src/synthetic/synth.hpp"
#include "tests/io_scratch.hpp"

namespace starwave {
namespace {

namespace fs = std::filesystem;

using test::scratch;

TEST(Io, AModelHoldsVelocitiesAFloatCanHold) {
  // Model files hold float32 and the kernels may compute in it: a velocity that float
  // turns into Inf or 0 (or a subnormal, flushed to 0 in the kernels) is refused by name,
  // never written or run; the extremes that float holds pass.
  Model m;
  m.nz = 2;
  m.nx = 3;
  m.dz = m.dx = 10;
  for (double bad : {1e39, 3.5e38, 1e-46, 1e-300, 1e-39}) {
    m.vp.assign(6, 2000.0);
    m.vp[4] = bad;
    try {
      m.validate("m.h5");
      ADD_FAILURE() << bad << " m/s accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("m.h5: velocity at (z=1, x=1) is "), std::string::npos) << e.what();
    }
    EXPECT_THROW(io::write_model(scratch("float.h5"), m), InputError) << bad;
    EXPECT_FALSE(fs::exists(scratch("float.h5")));
  }
  for (double edge : {double(FLT_MAX), double(FLT_MIN)}) {
    m.vp.assign(6, edge);
    EXPECT_NO_THROW(m.validate("m.h5")) << edge;
  }
  // A spacing out of range is said in a few digits, not 300.
  m.vp.assign(6, 2000.0);
  m.dx = -1e300;
  try {
    m.validate("m.h5");
    ADD_FAILURE() << "a negative spacing accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dx=-1e+300)"), std::string::npos) << e.what();
  }
}

TEST(Io, AModelWrittenThenReadIsTheSame) {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 30;
  so.nx = 50;
  so.spacing = 12.5;
  Model m = synthesize(so);
  m.z0 = 5;
  m.x0 = -100;
  const std::string p = scratch("model.h5");
  io::write_model(p, m);
  const Model r = io::read_model(p);
  EXPECT_EQ(r.nz, m.nz);
  EXPECT_EQ(r.nx, m.nx);
  EXPECT_EQ(r.dz, m.dz);
  EXPECT_EQ(r.dx, m.dx);
  EXPECT_EQ(r.z0, m.z0);
  EXPECT_EQ(r.x0, m.x0);
  for (std::size_t i = 0; i < m.vp.size(); ++i) ASSERT_EQ(float(r.vp[i]), float(m.vp[i]));
}

TEST(Synth, TheOverthrustModelRepeatsStrataAcrossItsThrusts) {
  // A thrust puts older (faster) beds over younger ones: some column meets one bed's
  // velocity in two separate depth runs. Below: a fast basement; above: the young
  // sediments and the channel's slow fill. The 2-D model is the 3-D one's plane y = 0, and
  // the channel meanders (moves in x) along y.
  SynthOptions so;
  so.kind = "overthrust";
  so.nz = 60;
  so.nx = 120;
  so.spacing = 25;
  const Model two = synthesize(so);
  so.ny = 40;
  const Model three = synthesize(so);
  EXPECT_EQ(two.vmin(), 1900);
  EXPECT_EQ(two.vmax(), 5800);
  for (int x = 0; x < two.nx; ++x) {
    ASSERT_EQ(two.at(two.nz - 1, x), 5800) << "column " << x;
    for (int z = 0; z < two.nz; ++z) ASSERT_EQ(two.at(z, x), three.at(z, 0, x)) << z << ", " << x;
  }
  int repeated = 0;
  for (int x = 0; x < two.nx; ++x) {
    std::vector<double> runs;  // one velocity per run of equal cells, down the column
    for (int z = 0; z < two.nz; ++z)
      if (runs.empty() || runs.back() != two.at(z, x)) runs.push_back(two.at(z, x));
    std::sort(runs.begin(), runs.end());
    repeated += std::adjacent_find(runs.begin(), runs.end()) != runs.end();
  }
  EXPECT_GT(repeated, two.nx / 10) << "columns with a bed repeated by a thrust";
  auto channel_x = [&](int y) {  // the mean column of the channel's fill in plane y
    double sum = 0;
    int n = 0;
    for (int z = 0; z < three.nz; ++z)
      for (int x = 0; x < three.nx; ++x)
        if (three.at(z, y, x) == 1900) sum += x, ++n;
    return n ? sum / n : -1.0;
  };
  EXPECT_GE(channel_x(0), 0);
  EXPECT_GT(std::abs(channel_x(0) - channel_x(three.ny / 2)), 5) << "the channel meanders along y";
}

TEST(Io, AnInputReplacedOrRewrittenMidRunIsRefused) {
  // Every read of an input reads the file the run's first read did: a file renamed over
  // it (`model --overwrite`) or rewritten in place is refused by name, never mixed in; a
  // file the run itself writes is read back as written.
  const auto model_of = [](double v, int nx) {
    Model m;
    m.nz = 2;
    m.nx = nx;
    m.dz = m.dx = 10;
    m.vp.assign(std::size_t(2 * nx), v);
    return m;
  };
  const auto refused = [](const std::string& path, const std::string& words) {
    try {
      io::read_model(path);
      ADD_FAILURE() << path << ": read";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": " + words + " while this run was reading it"), std::string::npos)
          << e.what();
    }
  };
  const std::string p = scratch("pinned.h5"), q = scratch("replacement.h5"), r = scratch("rewritten.h5");
  io::write_model(p, model_of(2000, 3));
  io::write_model(r, model_of(2000, 3));
  {
    const safety::InputPins pins;
    EXPECT_EQ(io::read_model(p).vp[0], 2000.0);
    EXPECT_EQ(io::read_model(p).vp[0], 2000.0) << "read twice, unchanged";
    io::write_model(q, model_of(3000, 3));
    fs::rename(q, p);  // what `model --overwrite` does to a file another run reads
    refused(p, "replaced");

    EXPECT_EQ(io::read_model(r).nx, 3);
    io::write_model(q, model_of(3000, 5));
    {  // the same file, its bytes replaced
      std::ifstream from(q, std::ios::binary);
      std::ofstream to(r, std::ios::binary | std::ios::trunc);
      to << from.rdbuf();
    }
    refused(r, "changed");

    io::write_model(p, model_of(4000, 3));  // the run's own output, read back
    EXPECT_EQ(io::read_model(p).vp[0], 4000.0);
  }
  EXPECT_EQ(io::read_model(r).nx, 5) << "without pins, files are read as they are";
}

TEST(Messages, WhatAUserNamedIsPrintedOnOneLine) {
  // Control characters (a newline in a file name could forge a second message), C1
  // controls, line separators and bytes that are not UTF-8 are escaped; the rest of
  // UTF-8 is kept as written.
  EXPECT_EQ(printable("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(printable("v\xc2\x85z"), "v\\u0085z");  // NEL
  EXPECT_EQ(printable("a\xe2\x80\xa8"
                      "b\xe2\x80\xa9"),
            "a\\u2028b\\u2029");
  EXPECT_EQ(printable("caf\xe9.h5"), "caf\\xe9.h5");  // Latin-1, not UTF-8
  EXPECT_EQ(printable("\xc0\xafx"), "\\xc0\\xafx");   // an overlong '/'
  EXPECT_EQ(printable("mod\xc3\xa8le \xe6\xb3\xa2.h5 \xf0\x9f\x8c\x8a"),
            "mod\xc3\xa8le \xe6\xb3\xa2.h5 \xf0\x9f\x8c\x8a");
  EXPECT_EQ(printable("\xe2\x80"), "\\xe2\\x80");  // cut short
  set_command("mo\ndel");
  EXPECT_EQ(error_prefix(), "starwave mo\\ndel: error: ");
  set_command("");
  EXPECT_EQ(error_prefix(), "starwave: error: ");
}

#if !defined(__SANITIZE_ADDRESS__)  // ASan ends the process on a failed allocation
TEST(Messages, AnAllocationThatFailsIsNamedByWhatAskedForIt) {
  memory::name_failed_allocations();
  EXPECT_EQ(memory::out_of_memory_use(), "");
  {
    const memory::MemoryUse outer("big.h5: /vp");
    const memory::MemoryUse inner("big.h5: /data");
    volatile std::size_t huge = std::size_t(1) << 62;
    EXPECT_THROW(std::vector<char>(std::size_t(huge)), std::bad_alloc);
  }
  EXPECT_EQ(memory::out_of_memory_use(), "big.h5: /data") << "the innermost use";
  std::set_new_handler(nullptr);
}
#endif

TEST(Io, ASurveyAndItsDataWrittenThenReadAreTheSame) {
  Model m;
  m.nz = 20;
  m.nx = 30;
  m.dz = m.dx = 10;
  m.vp.assign(600, 2000);
  SurveyOptions so;
  so.nshots = 3;
  so.dt = 1e-3;
  so.t_max = 0.1;
  so.frequency = 20;  // its peak, 0.075 s, inside the record
  Survey s = regular_survey(m, so);
  s.data.resize(std::size_t(s.nshots()) * s.nrec() * s.nt);
  for (std::size_t i = 0; i < s.data.size(); ++i) s.data[i] = float(std::sin(0.01 * double(i)));
  const std::string p = scratch("data.h5");
  io::write_survey(p, s, &m);
  const Survey r = io::read_survey(p, true);
  EXPECT_EQ(r.dt, s.dt);
  EXPECT_EQ(r.nt, s.nt);
  ASSERT_EQ(r.nshots(), s.nshots());
  ASSERT_EQ(r.nrec(), s.nrec());
  for (int i = 0; i < s.nshots(); ++i) EXPECT_EQ(r.sources[std::size_t(i)], s.sources[std::size_t(i)]);
  EXPECT_EQ(r.receivers, s.receivers);
  EXPECT_EQ(r.wavelets, s.wavelets);
  EXPECT_EQ(r.data, s.data);
  // A survey read without requiring data still carries it when present.
  EXPECT_EQ(io::read_survey(p, false).data.size(), s.data.size());
}

/// A small survey with 3 shots and distinct data values.
Survey small_survey(Model& m) {
  m.nz = 20;
  m.nx = 30;
  m.dz = m.dx = 10;
  m.vp.assign(600, 2000);
  SurveyOptions so;
  so.nshots = 3;
  so.dt = 1e-3;
  so.t_max = 0.1;
  so.frequency = 20;  // its peak, 0.075 s, inside the record
  Survey s = regular_survey(m, so);
  s.data.resize(std::size_t(s.nshots()) * s.nrec() * s.nt);
  for (std::size_t i = 0; i < s.data.size(); ++i) s.data[i] = float(std::cos(0.02 * double(i)));
  return s;
}

TEST(Io, ReceiverCountsAndWeightsRoundTripAndAreChecked) {
  // /receiver/count and /receiver/weight (docs/design.md §4) written and read back; a shot's trace
  // weights are the file's, 0 past its count; bad counts and weights refused by name.
  Model m;
  Survey s = small_survey(m);
  const int nrec = s.nrec();
  s.counts = {nrec, 2, nrec - 1};
  s.weights.assign(std::size_t(3 * nrec), 1.0f);
  s.weights[1] = 0;
  s.weights[std::size_t(2 * nrec)] = 2.5f;
  const std::string p = scratch("ragged.h5");
  io::write_survey(p, s, &m);
  const Survey r = io::read_survey(p, true);
  EXPECT_EQ(r.counts, s.counts);
  EXPECT_EQ(r.weights, s.weights);
  EXPECT_EQ(r.count(1), 2);
  const std::vector<float> w1 = r.trace_weights(1), w2 = r.trace_weights(2), w0 = r.trace_weights(0);
  EXPECT_EQ(w0[1], 0.0f);
  EXPECT_EQ(w1[1], 1.0f);
  for (int k = 2; k < nrec; ++k) EXPECT_EQ(w1[std::size_t(k)], 0.0f) << "past the count";
  EXPECT_EQ(w2[0], 2.5f);
  EXPECT_EQ(w2[std::size_t(nrec - 1)], 0.0f);
  // One weight per receiver, shared by every shot.
  Survey shared = s;
  shared.weights.assign(std::size_t(nrec), 1.0f);
  shared.weights[3] = 0;
  io::write_survey(scratch("shared.h5"), shared, &m);
  EXPECT_EQ(io::read_survey(scratch("shared.h5"), true).trace_weights(0)[3], 0.0f);
  // Refused by name.
  auto refused = [&](Survey bad, const std::string& mention) {
    try {
      bad.validate("file.h5");
      ADD_FAILURE() << "accepted; expected '" << mention << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    }
  };
  Survey bad = s;
  bad.counts = {nrec, 0, 1};
  refused(bad, "/receiver/count of shot 1 is 0");
  bad.counts = {nrec, nrec + 1, 1};
  refused(bad, "/receiver/count of shot 1 is");
  bad.counts = {nrec, 1};
  refused(bad, "/receiver/count must have shape (nshots,)");
  bad = s;
  bad.weights[4] = -1;
  refused(bad, "/receiver/weight holds a negative");
  bad.weights.resize(5);
  refused(bad, "/receiver/weight must have shape");
}

TEST(Io, DataWrittenShotByShotReadsBackLikeAWholeFile) {
  Model m;
  const Survey s = small_survey(m);
  const std::size_t per_shot = std::size_t(s.nrec()) * s.nt;
  const std::string p = scratch("streamed.h5");
  {
    io::DataWriter w(p, s, &m);
    for (int shot : {2, 0, 1}) w.write_shot(shot, s.data.data() + std::size_t(shot) * per_shot);
    EXPECT_FALSE(fs::exists(p)) << "the file appears only when committed";
    w.commit();
  }
  const Survey r = io::read_survey(p, true);
  EXPECT_EQ(r.data, s.data);
  EXPECT_EQ(r.receivers, s.receivers);
  EXPECT_EQ(r.wavelets, s.wavelets);
  EXPECT_EQ(r.dt, s.dt);
}

TEST(Io, UnfinishedDataFileLeavesNothingBehind) {
  Model m;
  const Survey s = small_survey(m);
  const fs::path dir = scratch("unfinished");
  fs::create_directories(dir);
  const std::string p = (dir / "data.h5").string();
  {
    io::DataWriter w(p, s, &m);
    w.write_shot(0, s.data.data());
    EXPECT_THROW(w.commit(), RuntimeError);  // shots 1 and 2 are missing
  }
  { io::DataWriter abandoned(p, s, &m); }  // e.g. a run that threw before its first shot
  EXPECT_TRUE(fs::is_empty(dir)) << "no output and no temporary file";
}

TEST(Io, AnOutputClaimRefusesWhatItMustNotTouch) {
  const std::string p = scratch("exists.h5"), in = scratch("input.h5"), link = scratch("input-link.h5");
  { std::ofstream(p) << "precious"; }
  { std::ofstream(in) << "input"; }
  fs::remove(link);
  fs::create_hard_link(in, link);
  EXPECT_THROW(safety::OutputClaim(p, "--out", false, {}, true), InputError);
  EXPECT_NO_THROW(safety::OutputClaim(p, "--out", true, {}, true));
  EXPECT_THROW(safety::OutputClaim(scratch("no-such-dir/x.h5").string(), "--out", true, {}, true), InputError);
  EXPECT_THROW(safety::OutputClaim(scratch(".").string(), "--out", true, {}, true), InputError);  // a folder
  // An input is never an output, whatever the flags, also under another name.
  EXPECT_THROW(safety::OutputClaim(in, "--out", true, {in}, true), InputError);
  EXPECT_THROW(safety::OutputClaim(link, "--out", true, {"", in}, true), InputError);
  std::ifstream back(in);
  std::string text;
  back >> text;
  EXPECT_EQ(text, "input");
}

TEST(Io, AClaimedOutputIsLockedUntilReleased) {
  const std::string p = scratch("locked.h5");
  const fs::path lock = fs::path(p).parent_path() / ".locked.h5.lock";
  fs::remove(p);
  {
    safety::OutputClaim first(p, "--out", false, {}, true);
    EXPECT_TRUE(fs::exists(lock));
    try {
      safety::OutputClaim second(p, "--out", true, {}, true);
      ADD_FAILURE() << "a second claim of a locked output must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("another starwave run (pid " + std::to_string(getpid()) + ")"),
                std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(fs::exists(lock)) << "a refused claim must leave the holder's lock alone";
    safety::OutputClaim unlocked(p, "--out", false, {}, false);  // a non-writing MPI rank takes no lock
  }
  EXPECT_FALSE(fs::exists(lock)) << "the lock file goes with its claim";
  EXPECT_NO_THROW(safety::OutputClaim(p, "--out", false, {}, true));
}

TEST(Io, ATemporaryIsCreatedAfreshAndNeverThroughALink) {
  // Whatever waits under the names the next temporaries would take (a link to a user's
  // file, a dangling link, a file) is passed over: the temporary is a new file of its own.
  const std::string target = scratch("fresh.h5");
  const std::string victim = scratch("victim.txt");
  std::ofstream(victim) << "a user's own words";
  std::string first;
  {
    safety::Temporary t(target);
    first = t.path();
  }
  const std::string stem = first.substr(0, first.rfind('.') + 1);
  const long serial = std::stol(first.substr(first.rfind('.') + 1));
  fs::create_symlink(victim, stem + std::to_string(serial + 1));
  fs::create_symlink(scratch("nowhere"), stem + std::to_string(serial + 2));
  std::ofstream(stem + std::to_string(serial + 3)) << "left here";
  {
    safety::Temporary t(target);
    EXPECT_EQ(t.path(), stem + std::to_string(serial + 4));
    EXPECT_FALSE(fs::is_symlink(fs::symlink_status(t.path())));
    std::ofstream(t.path()) << "the run's bytes";
    t.commit();
  }
  std::ifstream in(victim);
  std::string words;
  std::getline(in, words);
  EXPECT_EQ(words, "a user's own words");
  EXPECT_FALSE(fs::exists(scratch("nowhere")));
  EXPECT_EQ(fs::file_size(target), std::string("the run's bytes").size());
  for (int k = 1; k <= 3; ++k) fs::remove(stem + std::to_string(serial + k));
}

TEST(Io, AnOutputNamedNearTheLimitHasItsTemporaryAndLock) {
  // 250 bytes is a legal file name; ".NAME.tmp.PID.N" and ".NAME.lock" would not be.
  for (const std::size_t length : {240u, 250u, 255u}) {
    const std::string p = scratch(std::string(length - 3, 'x') + ".h5").string();
    fs::remove(p);
    {
      safety::OutputClaim claim(p, "--out", false, {}, true);
      Model m;
      m.nz = m.nx = 4;
      m.dz = m.dx = 10;
      m.vp.assign(16, 1500);
      io::write_model(p, m);
      try {
        safety::OutputClaim second(p, "--out", true, {}, true);
        ADD_FAILURE() << "a long name's lock does not hold";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("another starwave run"), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(io::read_model(p).nx, 4) << length;
    std::size_t others = 0;
    for (const auto& e : fs::directory_iterator(fs::path(p).parent_path()))
      others += e.path().filename().string().find(std::string(60, 'x')) != std::string::npos ? 1 : 0;
    EXPECT_EQ(others, 1u) << "only the output itself: no temporary, no lock left";
    fs::remove(p);
  }
}

TEST(Io, NonFiniteInputsAndResultsAreRefused) {
  Model m;
  m.nz = m.nx = 10;
  m.dz = m.dx = 10;
  m.vp.assign(100, 1500);
  const std::string out = scratch("nan-result.h5");
  fs::remove(out);
  std::vector<double> field(100, 0.0);
  field[17] = std::nan("");
  EXPECT_THROW(io::write_fields(out, m, {{"/gradient", field}}, {}), RuntimeError);
  EXPECT_THROW(io::write_fields(out, m, {{"/gradient", std::vector<double>(100, 0.0)}}, {{"misfit", INFINITY}}),
               RuntimeError);
  EXPECT_FALSE(fs::exists(out)) << "a non-finite result is an error, never a file";
}

TEST(Io, MissingDataIsReportedWithTheFileName) {
  Model m;
  m.nz = m.nx = 10;
  m.dz = m.dx = 10;
  m.vp.assign(100, 1500);
  SurveyOptions so;
  so.nshots = 1;
  so.dt = 1e-3;
  so.t_max = 0.01;
  so.frequency = 200;  // its peak, 7.5 ms, inside the record
  const std::string p = scratch("survey.h5");
  io::write_survey(p, regular_survey(m, so), &m);
  try {
    io::read_survey(p, true);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("/data"), std::string::npos);
  }
}

memory::MemoryRoom room(std::uint64_t bytes) { return {bytes, "this machine has available"}; }

TEST(Memory, AMemoryLimitIsASizeAndBoundsTheRoom) {
  EXPECT_EQ(memory::parse_size("1000000", "--memory-limit"), 1000000u);
  EXPECT_EQ(memory::parse_size("8G", "--memory-limit"), std::uint64_t(8) << 30);
  EXPECT_EQ(memory::parse_size("512MiB", "--memory-limit"), std::uint64_t(512) << 20);
  EXPECT_EQ(memory::parse_size("3KB", "--memory-limit"), 3u * 1024);
  EXPECT_EQ(memory::parse_size("2T", "--memory-limit"), std::uint64_t(2) << 40);
  EXPECT_EQ(memory::parse_size("7B", "--memory-limit"), 7u);
  for (const char* bad : {"", "0", "0G", "-1G", "8X", "8g", "1.5G", "G", "8 G", "9000000T", "1234567890123456"}) try {
      memory::parse_size(bad, "--memory-limit");
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--memory-limit: must be a size"), std::string::npos) << e.what();
    }
  // The room counts the limit less what the process holds, and says so.
  const memory::MemoryRoom free = memory::memory_room();
  memory::set_memory_limit(std::uint64_t(1) << 40);  // 1 TiB: above what this machine has
  EXPECT_EQ(memory::memory_room().bound, free.bound);
  memory::set_memory_limit(std::uint64_t(3) << 30);
  const memory::MemoryRoom capped = memory::memory_room();
  memory::set_memory_limit(0);
  EXPECT_LT(capped.bytes, std::uint64_t(3) << 30);
  EXPECT_GT(capped.bytes, std::uint64_t(2) << 30);  // this test holds less than 1 GiB
  EXPECT_EQ(capped.bound.rfind("--memory-limit 3 GiB leaves beside the ", 0), 0u) << capped.bound;
  EXPECT_NE(capped.bound.find(" this process holds"), std::string::npos) << capped.bound;
  EXPECT_EQ(memory::memory_room().bound, free.bound);
}

TEST(Memory, StarPUsOwnCountOfMainMemoryBoundsTheRoom) {
  // StarPU allocates no more main memory than it counts (hwloc's figure, less than the
  // system's on some virtual machines): the plan's room is the least of the two, and says
  // which; STARPU_LIMIT_CPU_MEM, lower still, names itself.
  const memory::MemoryRoom have{std::uint64_t(20) << 30, "this machine has available"};
  set_starpu_main_memory(std::uint64_t(12) << 30);
  const memory::MemoryRoom counted = starpu_room(have);
  EXPECT_EQ(counted.bytes, std::uint64_t(12) << 30);
  EXPECT_NE(counted.bound.find("StarPU counts as this machine's main memory"), std::string::npos) << counted.bound;
  setenv("STARPU_LIMIT_CPU_MEM", "1024", 1);
  const memory::MemoryRoom limited = starpu_room(have);
  unsetenv("STARPU_LIMIT_CPU_MEM");
  EXPECT_EQ(limited.bytes, std::uint64_t(1) << 30);
  EXPECT_EQ(limited.bound, "STARPU_LIMIT_CPU_MEM=1024 (MiB) lets StarPU allocate");
  set_starpu_main_memory(std::uint64_t(40) << 30);  // more than the system has: the system's room
  EXPECT_EQ(starpu_room(have).bound, have.bound);
  set_starpu_main_memory(0);
  EXPECT_EQ(starpu_room(have).bytes, have.bytes);
}

TEST(Memory, CheckpointIntervalTakesTheFewestBytes) {
  // Against every interval: the ring of min(L + 2, N + 1) slots and ⌈N/L⌉ − 1 states.
  for (int n : {1, 2, 10, 1000, 4001})
    for (std::uint64_t slot : {1ull, 40ull, 3000ull})
      for (std::uint64_t state : {1ull, 800ull, 100000ull}) {
        auto bytes = [&](int l) {
          return slot * std::uint64_t(std::min(l + 2, n + 1)) + state * std::uint64_t((n + l - 1) / l - 1);
        };
        const int l = checkpoint_interval(n, slot, state);
        ASSERT_GE(l, 1);
        ASSERT_LE(l, n);
        for (int k = 1; k <= n; ++k) ASSERT_LE(bytes(l), bytes(k)) << n << " " << slot << " " << state << " " << k;
      }
  // The square-root rule, L ≈ √(N · state / slot): 4000 steps, a state of 100 slots: about 632.
  EXPECT_GT(checkpoint_interval(4000, 10, 1000), 500);
  EXPECT_LT(checkpoint_interval(4000, 10, 1000), 800);
  // A state dearer than the whole store: no checkpoint (one interval).
  EXPECT_EQ(checkpoint_interval(100, 1, 1000), 100);
}

TEST(Memory, ShotsInFlightShrinkToWhatFitsAndARunThatCannotHoldOneIsRefused) {
  MemoryNeed need;
  need.shared = 100;
  need.per_worker = 10;
  need.per_shot = 50;
  need.store = 40;
  EXPECT_EQ(need.total(2, 3), 100u + 20u + 150u);
  EXPECT_EQ(shots_in_flight(need, 2, 4, room(1000), "this run", "hint"), 4);  // room for all
  EXPECT_EQ(shots_in_flight(need, 2, 4, room(230), "this run", "hint"), 2);   // 120 + 2 × 50 fits, 3 do not
  EXPECT_EQ(shots_in_flight(need, 2, 4, room(170), "this run", "hint"), 1);
  try {
    shots_in_flight(need, 2, 4, room(169), "this run", "use --storage boundary");
    ADD_FAILURE() << "one shot that does not fit was accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("this run needs 170 B at least"), std::string::npos) << m;
    EXPECT_NE(m.find("the stored forward wavefield 40 B"), std::string::npos) << m;
    EXPECT_NE(m.find("169 B this machine has available (use --storage boundary)"), std::string::npos) << m;
  }
  // Sizes that would wrap a 64-bit count saturate: never taken for small after wrapping.
  need.per_shot = std::uint64_t(1) << 63;
  EXPECT_EQ(need.total(1, 4), ~std::uint64_t(0));
  EXPECT_EQ(shots_in_flight(need, 1, 4, room(~std::uint64_t(0) - 1), "this run", "hint"), 1);  // 4 × 2^63 wraps to 0
  need.per_worker = ~std::uint64_t(0) / 2;
  EXPECT_THROW(shots_in_flight(need, 3, 4, room(~std::uint64_t(0) - 1), "this run", "hint"), InputError);
}

}  // namespace
}  // namespace starwave
