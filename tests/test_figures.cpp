// tests/test_figures.cpp — the pictures, decoded: a section's cells in their colours and to
// scale, its axes' ticks where their values lie, text in the title, axis and colour-bar
// margins, the colour bar running from the scale's low to its high colour; a 3-D field's
// three slices; a gather's receiver lines as panels with a time axis; the misfit curve
// with its band marks; a picture that cannot be written leaves nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "src/base/error.hpp"
#include "src/plot/figures.hpp"
#include "src/safety/signals.hpp"
#include "tests/png.hpp"

namespace starwave::figures {
namespace {

namespace fs = std::filesystem;

class Figures : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("starwave-figures-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

bool dark(unsigned rgb) { return ((rgb >> 16) & 255) < 90 && ((rgb >> 8) & 255) < 90 && (rgb & 255) < 90; }

/// Dark (text or line) pixels of `p` in the rectangle [x0, x1) × [y0, y1).
int dark_pixels(const test::Picture& p, int x0, int y0, int x1, int y1) {
  int n = 0;
  for (int y = std::max(0, y0); y < std::min(p.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(p.width, x1); ++x) n += dark(p.pixel(x, y)) ? 1 : 0;
  return n;
}

/// Whether two colours differ by at most `tol` in each channel.
bool near(unsigned a, unsigned b, int tol) {
  for (int s : {16, 8, 0})
    if (std::abs(int((a >> s) & 255) - int((b >> s) & 255)) > tol) return false;
  return true;
}

/// A 40 × 60 section at 10 m from (z, x) = (100, −5) m: 1500 m/s above 200 m, 3000 below.
Field two_layers() {
  Field f;
  f.nz = 40;
  f.nx = 60;
  f.dz = f.dx = 10;
  f.z0 = 100;
  f.x0 = -5;
  for (int z = 0; z < f.nz; ++z)
    for (int x = 0; x < f.nx; ++x) f.values.push_back(z < 10 ? 1500.f : 3000.f);
  return f;
}

TEST_F(Figures, SectionInItsColoursToScaleWithAxesAndColourBar) {
  const Layout L = plot_model(path("m.png"), two_layers(), "a two-layer model", 1000, 3500);
  const test::Picture p = test::read_png(path("m.png"));
  ASSERT_EQ(p.width, L.width);
  ASSERT_EQ(p.height, L.height);
  ASSERT_EQ(L.panels.size(), 1u);
  const Box b = L.panels[0];
  EXPECT_NEAR(double(b.w) / b.h, 60.0 / 40.0, 0.02) << "to scale: 600 m across, 400 m down";
  EXPECT_GE(b.w, 800);
  // The cells: the slow layer's colour in the top quarter, the fast one's below, each
  // where its value lies on the 1000…3500 scale.
  const unsigned slow = colour_of(Colormap::Velocity, 0.2), fast = colour_of(Colormap::Velocity, 0.8);
  EXPECT_TRUE(near(p.pixel(b.x + b.w / 2, b.y + b.h / 8), slow, 2))
      << std::hex << p.pixel(b.x + b.w / 2, b.y + b.h / 8);
  EXPECT_TRUE(near(p.pixel(b.x + b.w / 3, b.y + 3 * b.h / 4), fast, 2));
  // The colour bar: the scale's top colour at the top, its bottom colour at the bottom.
  const Box& bar = L.bar;
  EXPECT_TRUE(near(p.pixel(bar.x + bar.w / 2, bar.y + 2), colour_of(Colormap::Velocity, 1), 6));
  EXPECT_TRUE(near(p.pixel(bar.x + bar.w / 2, bar.y + bar.h - 3), colour_of(Colormap::Velocity, 0), 6));
  // Text: the title above, tick values and the axis labels below and left, the bar's values
  // and label on its right.
  EXPECT_GT(dark_pixels(p, 0, 0, p.width, b.y - 10), 100) << "title";
  EXPECT_GT(dark_pixels(p, 0, b.y, b.x - 8, b.y + b.h), 100) << "depth ticks and label";
  EXPECT_GT(dark_pixels(p, b.x, b.y + b.h + 7, b.x + b.w, p.height), 100) << "x ticks and label";
  EXPECT_GT(dark_pixels(p, bar.x + bar.w + 7, bar.y, p.width, bar.y + bar.h), 100) << "colour bar values and label";
  // The ticks lie at their values: x from −10 m (the first cell's edge) to 590 m, ticks at
  // 0, 100, … 500 m; depth from 95 m to 495 m, ticks at 100 … 400 m.
  for (int v = 0; v <= 500; v += 100) {
    const int x = int(std::lround(b.x + (v + 10.0) / 600.0 * b.w));
    EXPECT_TRUE(dark(p.pixel(x, b.y + b.h + 2)) || dark(p.pixel(x + 1, b.y + b.h + 2)) ||
                dark(p.pixel(x - 1, b.y + b.h + 2)))
        << "a tick at x = " << v << " m";
  }
  for (int v = 100; v <= 400; v += 100) {
    const int y = int(std::lround(b.y + (v - 95.0) / 400.0 * b.h));
    EXPECT_TRUE(dark(p.pixel(b.x - 3, y)) || dark(p.pixel(b.x - 3, y + 1)) || dark(p.pixel(b.x - 3, y - 1)))
        << "a tick at depth " << v << " m";
  }
}

TEST_F(Figures, LongDistancesInKilometres) {
  EXPECT_EQ(distance_axis("x", 0, 10, 600).label, "x (km)");
  EXPECT_DOUBLE_EQ(distance_axis("x", 2000, 10, 600).origin, 2.0);
  EXPECT_DOUBLE_EQ(distance_axis("x", 0, 10, 600).step, 0.01);
  EXPECT_EQ(distance_axis("depth", 0, 10, 300).label, "depth (m)");
  // A field 12 km wide and 3 km deep: both axes in km, so the section keeps its proportions.
  Field wide;
  wide.nz = 151;
  wide.nx = 601;
  wide.dz = wide.dx = 20;
  wide.values.assign(std::size_t(151 * 601), 2000.f);
  const std::vector<Panel> p = field_panels(wide, 0, 0, 0);
  EXPECT_EQ(p[0].down.label, "depth (km)");
  EXPECT_EQ(p[0].across.label, "x (km)");
  const Layout L = plot_model(path("wide.png"), wide, "wide", 1500, 2500);
  EXPECT_NEAR(double(L.panels[0].w) / L.panels[0].h, 601.0 / 151.0, 0.05);
}

TEST_F(Figures, ThreeSlicesOfAVolume) {
  Field f;
  f.nz = 6;
  f.ny = 5;
  f.nx = 7;
  f.dz = 10;
  f.dy = 20;
  f.dx = 30;
  for (int z = 0; z < f.nz; ++z)
    for (int y = 0; y < f.ny; ++y)
      for (int x = 0; x < f.nx; ++x) f.values.push_back(float(100 * z + 10 * y + x));
  const std::vector<Panel> p = field_panels(f, 2, 3, 4);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].values.rows, 6);  // (depth, x) at y = 60 m
  EXPECT_EQ(p[0].values.cols, 7);
  EXPECT_EQ(p[0].values.values[std::size_t(5 * 7 + 6)], 100 * 5 + 10 * 3 + 6);
  EXPECT_EQ(p[0].caption, "y = 60 m");
  EXPECT_EQ(p[1].values.cols, 5);  // (depth, y) at x = 120 m
  EXPECT_EQ(p[1].values.values[std::size_t(1 * 5 + 2)], 100 * 1 + 10 * 2 + 4);
  EXPECT_EQ(p[1].caption, "x = 120 m");
  EXPECT_EQ(p[2].values.rows, 5);  // plan (y, x) at depth 20 m
  EXPECT_EQ(p[2].values.values[std::size_t(4 * 7 + 1)], 100 * 2 + 10 * 4 + 1);
  EXPECT_EQ(p[2].caption, "depth = 20 m");
  EXPECT_EQ(p[2].down.label, "y (m)");
  const Layout L = plot_section(path("v.png"), f, "slices", "amplitude");
  ASSERT_EQ(L.panels.size(), 3u);
  const test::Picture pic = test::read_png(path("v.png"));
  for (std::size_t i = 0; i + 1 < L.panels.size(); ++i) {  // blank between the panels
    const int gap = (L.panels[i].x + L.panels[i].w + L.panels[i + 1].x) / 2;
    EXPECT_EQ(pic.pixel(gap, L.panels[i].y + 10), 0xFFFFFFu) << "between panels " << i << " and " << i + 1;
  }
  EXPECT_NEAR(double(L.panels[0].h) / L.panels[0].w, 60.0 / 210.0, 0.02) << "to scale";
  EXPECT_GT(dark_pixels(pic, 0, 0, pic.width, L.panels[0].y - 4), 150) << "title and captions";
}

TEST_F(Figures, GatherLinesArePanelsWithATimeAxis) {
  // 12 receivers in 3 lines of 4, 500 samples at 2 ms: a spike at 0.4 s on every trace.
  Image2D traces{12, 500, std::vector<float>(12 * 500, 0.f)};
  for (int r = 0; r < 12; ++r) traces.values[std::size_t(r) * 500 + 200] = 1.f;
  const std::vector<int> line = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  const Layout L = plot_gather(path("g.png"), traces, 0.002, "a gather", line);
  ASSERT_EQ(L.panels.size(), 3u);
  const test::Picture p = test::read_png(path("g.png"));
  for (std::size_t i = 0; i < 3; ++i) {
    const Box& b = L.panels[i];
    // The spike's row (0.4 s of 1 s) is white, the rest mid-grey (0 on a symmetric scale).
    const int spike = int(b.y + (0.4 + 0.001) / 1.0 * b.h);
    bool bright = false;
    for (int y = spike - 2; y <= spike + 2; ++y) bright = bright || near(p.pixel(b.x + b.w / 2, y), 0xFFFFFF, 60);
    EXPECT_TRUE(bright) << "line " << i << ": the spike at 0.4 s";
    EXPECT_TRUE(near(p.pixel(b.x + b.w / 2, b.y + b.h / 5), colour_of(Colormap::Seismic, 0.5), 3)) << "line " << i;
    if (i > 0) {
      EXPECT_EQ(p.pixel(L.panels[i - 1].x + L.panels[i - 1].w + 5, b.y + 20), 0xFFFFFFu) << "gap " << i;
    }
    EXPECT_GT(dark_pixels(p, b.x, b.y - 22, b.x + b.w, b.y - 4), 20) << "line " << i << "'s caption";
  }
  EXPECT_GT(dark_pixels(p, 0, L.panels[0].y, L.panels[0].x - 8, L.panels[0].y + L.panels[0].h), 100)
      << "time ticks and label";
}

TEST_F(Figures, AFieldSurveysManyLinesShareAFewPanels) {
  // 700 receiver lines of 3 (a panel each would be ~38 000 px wide, beyond Cairo's
  // surface): consecutive lines share at most kMaxGatherPanels panels, captioned with the
  // lines they hold, every line in one of them and the picture of ordinary width.
  const int lines = 700, per = 3, nt = 200;
  Image2D traces{lines * per, nt, std::vector<float>(std::size_t(lines * per * nt), 0.f)};
  std::vector<int> line;
  for (int l = 0; l < lines; ++l)
    for (int k = 0; k < per; ++k) line.push_back(l + 1);
  for (int r = lines * per - 30; r < lines * per; ++r)
    traces.values[std::size_t(r) * nt + 100] = 1.f;  // the last lines'
  const Layout L = plot_gather(path("many.png"), traces, 0.004, "a field survey", line);
  ASSERT_EQ(L.panels.size(), std::size_t(kMaxGatherPanels));
  EXPECT_LT(L.width, 2000);
  const test::Picture p = test::read_png(path("many.png"));
  EXPECT_EQ(p.width, L.width);
  const Box& b = L.panels.back();
  bool bright = false;  // the last lines are in the last panel, at its right edge
  for (int y = b.y + b.h / 2 - 3; y <= b.y + b.h / 2 + 3; ++y)
    bright = bright || near(p.pixel(b.x + b.w - 3, y), 0xFFFFFF, 60);
  EXPECT_TRUE(bright);
  for (const Box& c : L.panels) EXPECT_GT(dark_pixels(p, c.x, c.y - 22, c.x + c.w, c.y - 4), 20) << "caption";
  // Few lines keep a panel each.
  const std::vector<int> few = {1, 1, 1, 2, 2, 2};
  EXPECT_EQ(plot_gather(path("few.png"), Image2D{6, nt, std::vector<float>(6 * nt, 0.f)}, 0.004, "two lines", few)
                .panels.size(),
            2u);
}

TEST_F(Figures, ALongRecordIsDrawn) {
  // 3 traces of 40 001 samples (40 s at 1 ms): longer than a Cairo surface's side.
  Image2D traces{3, 40001, std::vector<float>(3 * 40001, 0.f)};
  for (int r = 0; r < 3; ++r) traces.values[std::size_t(r) * 40001 + 20000] = 1.f;
  const Layout L = plot_gather(path("long.png"), traces, 0.001, "a long record");
  const test::Picture p = test::read_png(path("long.png"));
  EXPECT_EQ(p.width, L.width);
  const Box& b = L.panels[0];
  EXPECT_TRUE(near(p.pixel(b.x + b.w / 2, b.y + b.h / 4), colour_of(Colormap::Seismic, 0.5), 3)) << "zero, mid-grey";
}

TEST_F(Figures, MisfitCurveWithLogAxisAndBandMarks) {
  Curve c{"misfit", "iteration", "misfit Φ", {8, 4, 2, 1, 30, 10, 3}, true, {{0, "4 Hz"}, {4, "8 Hz"}}};
  const Layout L = plot_curve(path("c.png"), c);
  const test::Picture p = test::read_png(path("c.png"));
  EXPECT_EQ(p.width, 800);
  EXPECT_EQ(p.height, 400);
  const Box& b = L.panels[0];
  // The band mark at iteration 4: a dashed grey line down the plot.
  const int x4 = int(std::lround(b.x + b.w * 4 / 6.0));
  int grey = 0;
  for (int y = b.y + 20; y < b.y + b.h - 5; ++y)
    for (int dx = -1; dx <= 1; ++dx) grey += near(p.pixel(x4 + dx, y), 0x737373, 40) ? 1 : 0;
  EXPECT_GT(grey, b.h / 4) << "the dashed line where the second band starts";
  // The curve: its dots where the values lie on the decades 1e0 … 1e2.
  auto py = [&](double v) { return int(std::lround(b.y + b.h * (2 - std::log10(v)) / 2)); };
  for (int i : {0, 3, 4}) {
    const int x = int(std::lround(b.x + b.w * i / 6.0));
    EXPECT_FALSE(near(p.pixel(x, py(c.values[std::size_t(i)])), 0xFFFFFF, 40)) << "the dot of iteration " << i;
  }
  EXPECT_GT(dark_pixels(p, 0, b.y, b.x - 6, b.y + b.h), 80) << "decade labels and the axis label";
  EXPECT_GT(dark_pixels(p, b.x, b.y + b.h + 6, b.x + b.w, p.height), 60) << "iterations and the axis label";
}

TEST_F(Figures, ATitleThatIsNotUtf8IsDrawnWithReplacementCharacters) {
  // A Latin-1 file name (the default title) and stray bytes: Cairo stops drawing at the
  // first invalid UTF-8 string, which left a white picture.
  const Layout L =
      plot_model(path("t.png"), two_layers(), "caf\xe9.h5 \xff\xfe x \xed\xa0\x80 \xf4\x90\x80\x80 ok", 1000, 3500);
  const test::Picture p = test::read_png(path("t.png"));
  const Box b = L.panels[0];
  EXPECT_GT(dark_pixels(p, 0, 0, p.width, b.y - 10), 100) << "title";
  EXPECT_TRUE(near(p.pixel(b.x + b.w / 3, b.y + 3 * b.h / 4), colour_of(Colormap::Velocity, 0.8), 2)) << "cells";
  EXPECT_GT(dark_pixels(p, b.x, b.y + b.h + 7, b.x + b.w, p.height), 100) << "x ticks and label";
}

TEST_F(Figures, APictureThatCannotBeWrittenLeavesNothing) {
  const std::string where = path("no-such-folder/m.png");
  EXPECT_THROW(plot_model(where, two_layers(), "m"), std::runtime_error);
  EXPECT_FALSE(fs::exists(where));
  EXPECT_THROW(draw(path("empty.png"), "nothing", {}, ColourScale{}), InputError);
  EXPECT_FALSE(fs::exists(path("empty.png")));
}

TEST_F(Figures, AFolderOfPicturesGoesWithARunStoppedBeforeItKeptThem) {
  // What a signal's handler does (safety::remove_tracked) before the run kept its pictures:
  // the pictures drawn and the folder it made go; a user's own file in it stays, and so
  // does the folder then. Once kept, nothing goes.
  {
    Folder run(path("figs"), "--figures", {"initial.png", "current.png"}, false, {}, true);
    run.create();
    plot_model(run.file("initial.png"), two_layers(), "initial");
    safety::remove_tracked();
    EXPECT_FALSE(fs::exists(path("figs/initial.png")));
    EXPECT_FALSE(fs::exists(path("figs"))) << "the folder the run made";
  }
  {
    fs::create_directories(path("mine"));
    std::ofstream(path("mine/notes.txt")) << "the user's";
    Folder run(path("mine"), "--figures", {"initial.png"}, false, {}, true);
    run.create();
    plot_model(run.file("initial.png"), two_layers(), "initial");
    safety::remove_tracked();
    EXPECT_FALSE(fs::exists(path("mine/initial.png")));
    EXPECT_TRUE(fs::exists(path("mine/notes.txt")));
  }
  {
    Folder run(path("kept"), "--figures", {"initial.png"}, false, {}, true);
    run.create();
    plot_model(run.file("initial.png"), two_layers(), "initial");
    plot_model(run.file("initial.png"), two_layers(), "drawn again");
    run.keep();
    safety::remove_tracked();
    EXPECT_TRUE(fs::exists(path("kept/initial.png")));
  }
  EXPECT_TRUE(fs::exists(path("kept/initial.png"))) << "kept: the destructor leaves it too";
  // A temporary left by a run killed outright (its process gone) is removed when a run
  // next draws that picture.
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  const std::string stale = path("kept/.current.png.tmp." + std::to_string(gone) + ".0");
  std::ofstream(stale) << "half a picture";
  Folder again(path("kept"), "--figures", {"current.png"}, false, {}, true);
  again.create();
  again.file("current.png");
  EXPECT_FALSE(fs::exists(stale));
  again.keep();
}

}  // namespace
}  // namespace starwave::figures
