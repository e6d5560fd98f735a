// drivers/commands.hpp — one function per `starwave` subcommand (one file each).
#pragma once

namespace starwave {
class Runtime;
struct ImagingResult;
}  // namespace starwave

namespace starwave::commands {
int info(int argc, char** argv);
int synth(int argc, char** argv);
int survey(int argc, char** argv);
int model(int argc, char** argv);
int born(int argc, char** argv);
int gradient(int argc, char** argv);
int rtm(int argc, char** argv);
int plan(int argc, char** argv);
int plan_fwi(int argc, char** argv);  // `plan fwi …`, called by plan()
int fwi(int argc, char** argv);
int lsrtm(int argc, char** argv);
int plot(int argc, char** argv);
int import_segy(int argc, char** argv);
int export_segy(int argc, char** argv);

/// The last line of `starwave plan`: the steps a shot takes and the workers (rank 0).
void say_planned(const ImagingResult& r, const Runtime& rt);
}  // namespace starwave::commands
