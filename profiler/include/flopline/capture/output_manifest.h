// One `flopline run` can start many processes that each write a trace (ranks, workers,
// forked children). Each notes in one manifest file (FLOPLINE_MANIFEST) the path it
// claims, and then whether the trace is on disk or why it is not, so `flopline run` can
// name and summarise every file that really exists, report every failed write, and two
// processes given the same output path never overwrite each other: the first to claim a
// path keeps it, a later one writes "NAME-PID.json" beside it.
//
// Format: one line per note, "STATE<TAB>PID<TAB>PATH<TAB>DETAIL\n", STATE one of
// C (claimed), W (written: the trace is on disk; DETAIL "N events, K kernels"),
// F (failed: DETAIL is the reason), P (part written while the program runs: DETAIL says
// up to when). Notes are made under flock(), so processes that finish at the same
// moment see each other's lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flopline::capture {

enum class ManifestState : char { kClaimed = 'C', kWritten = 'W', kFailed = 'F', kPartial = 'P' };

struct ManifestEntry {
  ManifestState state = ManifestState::kClaimed;
  std::int64_t pid = 0;
  std::string path;
  std::string detail;
};

// "dir/t.json" -> "dir/t-PID.json"; also before ".json.gz", and at the end when the
// name has neither extension.
std::string path_with_pid(std::string_view path, std::int64_t pid);
// The same with any suffix: ("t.json", "rank1") -> "t-rank1.json".
std::string path_with_suffix(std::string_view path, std::string_view suffix);

// The path this process should write: `wanted`, unless a claim of the manifest gives it
// to another pid, then path_with_pid(wanted, pid). Notes the claim (once per pid and
// path). With an empty manifest name: `wanted`, nothing noted. A manifest that cannot
// be opened is ignored (the claim is then `wanted`).
std::string claim_output_path(const std::string& manifest, const std::string& wanted,
                              std::int64_t pid);

// Notes that `path` is on disk (after the write), that writing it failed and why, or how
// much of it a flush wrote while the program runs. Nothing with an empty manifest name.
void note_written(const std::string& manifest, std::int64_t pid, const std::string& path,
                  std::string_view detail);
void note_failed(const std::string& manifest, std::int64_t pid, const std::string& path,
                 std::string_view reason);
void note_partial(const std::string& manifest, std::int64_t pid, const std::string& path,
                  std::string_view detail);

// Every note in the manifest, in the order made; malformed lines are skipped.
std::vector<ManifestEntry> read_manifest(const std::string& manifest);

// What a run left: per path, its last note (written, failed, or partial; claims whose
// process never wrote are left out), in the order the paths were first claimed.
std::vector<ManifestEntry> run_files(const std::vector<ManifestEntry>& notes);

}  // namespace flopline::capture
