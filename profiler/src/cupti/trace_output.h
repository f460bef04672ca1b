// Turns what CuptiSource captured into a trace file: decode() into the trace model,
// flopline's metadata, calibrated peaks when a calibration exists, then the
// Chrome-trace writer. Shared by the injection library and flopline::Session.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/capture/records.h"
#include "flopline/trace/model.h"

namespace flopline::cupti {

struct CaptureWriteResult {
  bool ok = false;
  std::string path;
  std::string error;
  std::uint64_t events = 0;
  std::uint64_t kernels = 0;
  std::uint64_t dropped_records = 0;
};

// `info` goes into the trace's "flopline" metadata after the version and command line.
CaptureWriteResult write_capture(const capture::RecordBatch& batch, const std::string& path,
                                 const std::vector<std::pair<std::string, std::string>>& info,
                                 const capture::DecodeOptions& decode = {});

// What every captured trace carries besides its events, added to a decoded trace `t` of
// process `pid`: the "flopline" metadata (version, command line, pid, host, then `info`,
// then what decoding noted) and calibrated peaks when a calibration exists.
void add_capture_metadata(trace::Trace& t, std::uint32_t pid,
                          const std::vector<std::pair<std::string, std::string>>& info);

}  // namespace flopline::cupti
