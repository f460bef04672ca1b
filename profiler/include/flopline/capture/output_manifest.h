// One `flopline run` can start many processes that each write a trace (ranks, workers,
// forked children). Each notes the file it writes in one manifest file
// (FLOPLINE_MANIFEST), so `flopline run` can name and summarise every file, and two
// processes given the same output path never overwrite each other: the first to claim a
// path keeps it, a later one writes "NAME-PID.json" beside it.
//
// Format: one line per claim, "PID<TAB>PATH\n". Claims are made under flock(), so
// processes that finish at the same moment see each other's lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flopline::capture {

struct ManifestEntry {
  std::int64_t pid = 0;
  std::string path;
};

// "dir/t.json" -> "dir/t-PID.json"; also before ".json.gz", and at the end when the
// name has neither extension.
std::string path_with_pid(std::string_view path, std::int64_t pid);

// The path this process should write: `wanted`, unless a line of the manifest gives it
// to another pid, then path_with_pid(wanted, pid). Notes the claim (once per pid and
// path). With an empty manifest name: `wanted`, nothing noted. A manifest that cannot
// be opened is ignored (the claim is then `wanted`).
std::string claim_output_path(const std::string& manifest, const std::string& wanted,
                              std::int64_t pid);

// Every claim in the manifest, in the order made; malformed lines are skipped.
std::vector<ManifestEntry> read_manifest(const std::string& manifest);

}  // namespace flopline::capture
