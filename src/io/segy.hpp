// src/io/segy.hpp — SEG-Y shot records in and out (docs/design.md §4), through segyio (Debian's
// libsegyio-dev): `starwave import` and `starwave export`.
//
// Header mapping, both ways: one shot per FieldRecord (bytes 9–12), in file order; x, y
// from SourceX/SourceY (73, 77) and GroupX/GroupY (81, 85) with SourceGroupScalar (71);
// z is depth below the datum (elevation 0), positive down: source z = SourceDepth (49) −
// SourceSurfaceElevation (45), receiver z = −ReceiverGroupElevation (41), with
// ElevationScalar (69); dt and nt from each trace's SampleInterval (117, µs) and
// SampleCount (115), the binary header's (3217, 3221) where a trace's is 0. A scalar s
// multiplies by s when positive, divides by −s when negative, and is 1 when 0.
#pragma once

#include <string>
#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"

namespace starwave::segy {

/// The shot records of SEG-Y file `path` as a survey with its data (`dim` 2: points must
/// share one y, which is dropped; 3: [z, y, x]; 0: 2 when they share one y, else 3) and
/// no wavelet (the caller adds it). Shots
/// of different trace counts are padded to the longest (copies of their last receiver,
/// zero traces) with /receiver/count; dead traces (TraceIdentificationCode 2) get weight 0.
/// Samples in IBM or IEEE 4-byte floats. InputError naming the file, and the trace where
/// one is at fault, for anything the mapping cannot use: a missing sample interval or
/// count, traces of one FieldRecord apart or with different source positions, shots of
/// different trace counts, another sample format, NaN or Inf samples.
Survey read_shots(const std::string& path, int dim);

/// Writes `s` (every shot's data loaded) as SEG-Y rev 1 shot records at `path`, each shot's
/// first count(shot) traces, weight-0 traces marked dead (weights other than 0 and 1 are
/// refused: SEG-Y cannot carry them) (IEEE
/// floats; coordinates with the smallest scalar 1, −10, −100, −1000 or −10000 that holds
/// every value exactly, else −10000 rounded; dt a whole number of µs). `path` is written
/// whole or not at all.
void write_shots(const std::string& path, const Survey& s);

/// Writes a field over `m`'s grid (a model, image or gradient: `values` in (nz, ny, nx)
/// order) as one trace per column (y, x), samples down z: CDP_X/CDP_Y (181, 185) with
/// SourceGroupScalar, inline = y index + 1 (189), crossline = x index + 1 (193), and the
/// sample interval field holding dz in mm (a viewer's "ms" then reads as metres).
void write_field(const std::string& path, const Model& m, const std::vector<double>& values);

/// A field stored one trace per column (write_field's layout, and how published velocity
/// models such as Marmousi-II and BP 2004 come), samples down z: the traces in file order
/// are the columns x of a 2-D field, or, when their inline numbers (189) differ, the lines
/// of a 3-D one, one after another, each with the first line's crossline numbers (193).
/// Its spacing is `spacing` ({dz, dx} or {dz, dy, dx}, or one value for every axis, m)
/// when given, else read from the
/// headers: dz from the sample interval field as millimetres (as write_field writes it),
/// dx (dy) the step of CDP_X (CDP_Y, with SourceGroupScalar) along a line (across the
/// lines); the origin is the first trace's CDP_X (CDP_Y), z0 = 0. The values are the
/// samples as they are (no unit or range check). InputError naming the file, and the trace
/// at fault, for what does not fit.
Model read_field(const std::string& path, const std::vector<double>& spacing);

}  // namespace starwave::segy
