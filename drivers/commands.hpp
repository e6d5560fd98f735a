// drivers/commands.hpp — one function per `starwave` subcommand (one file each).
#pragma once

namespace starwave::commands {
int info(int argc, char** argv);
int synth(int argc, char** argv);
int survey(int argc, char** argv);
int model(int argc, char** argv);
int gradient(int argc, char** argv);
int rtm(int argc, char** argv);
int plan(int argc, char** argv);
int fwi(int argc, char** argv);
int plot(int argc, char** argv);
int import_segy(int argc, char** argv);
int export_segy(int argc, char** argv);
}  // namespace starwave::commands
