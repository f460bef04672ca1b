#include "trace_output.h"

#include "calibration_store.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/trace/chrome_writer.h"
#include "process_info.h"

#ifndef FLOPLINE_VERSION
#define FLOPLINE_VERSION "unknown"
#endif

namespace flopline::cupti {

void add_capture_metadata(trace::Trace& t, std::uint32_t pid,
                          const std::vector<std::pair<std::string, std::string>>& info) {
  // Version, command and pid first; what decoding noted (counters) after the caller's.
  std::vector<std::pair<std::string, std::string>> head = {{"version", FLOPLINE_VERSION}};
  const std::string command = process_command_line();
  if (!command.empty()) head.emplace_back("command", command);
  head.emplace_back("pid", std::to_string(pid));
  // Ranks of a multi-host job: which host each trace's clock belongs to.
  if (const std::string host = host_name(); !host.empty()) head.emplace_back("host", host);
  head.insert(head.end(), info.begin(), info.end());
  t.info.insert(t.info.begin(), head.begin(), head.end());
  apply_calibrated_peaks(t.devices);
}

CaptureWriteResult write_capture(const capture::RecordBatch& batch, const std::string& path,
                                 const std::vector<std::pair<std::string, std::string>>& info,
                                 const capture::DecodeOptions& decode) {
  CaptureWriteResult result;
  result.path = path;
  trace::Trace t = capture::decode_to_trace(batch, decode);
  add_capture_metadata(t, batch.process_id, info);
  trace::WriteOptions options;
  options.time_base = batch.time_base;
  const trace::WriteResult w = trace::write_chrome_trace(t, path, options);
  result.ok = w.ok;
  result.error = w.error;
  result.events = w.events_written;
  result.kernels = batch.kernels.size();
  result.dropped_records = batch.dropped_records;
  return result;
}

}  // namespace flopline::cupti
