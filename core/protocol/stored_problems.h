// The problem files a store holds (a corpus import stores the suite's files with its trials), written to a folder so
// that the catalog and the grader read them like any suite: mkb regrade and mkb retime --transitions grade a trial
// against the problem it was filed with.
#pragma once

#include "core/records/problem.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mkb {

struct StoredProblems {
    std::vector<std::filesystem::path> roots;      // one suite root per stored problem, under the folder given
    std::map<std::string, Problem> byFingerprint;  // read back by the catalog, so MKB_META is read as any problem's
    std::map<std::string, std::string> unreadable; // fingerprint -> why the catalog refused its file
};

/// Writes each problem the store holds to FOLDER/<first 16 hex digits of its fingerprint>/<family>/<file> and reads
/// it back. Errors: the store cannot be read, or a file cannot be written.
Result<StoredProblems> writeStoredProblems(Store& store, const std::filesystem::path& folder);

} // namespace mkb
