// The one recursive folder walk: sorted, depth-bounded, and never entering a folder (device and inode) twice.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace mkb {

/// What an entry turned out to be once links are followed.
enum class WalkEntryKind {
    Folder,
    RegularFile,
    Other,      // a FIFO, socket or device
    Unreachable // a broken or looping symbolic link, or one that cannot be examined; see WalkEntry::problem
};

struct WalkEntry {
    std::filesystem::path path;
    int depth = 1; // 1 for the root's own entries
    WalkEntryKind kind = WalkEntryKind::Other;
    bool isSymlink = false; // the entry itself is a link (kind describes its target)
    std::string problem;    // for Unreachable: why, in words ("a symbolic link that never reaches a file ...")
};

/// Something the walk could not do, with its reason in words: a folder it cannot list, a cycle or a folder already
/// walked under another name, a folder nested deeper than the limit.
struct WalkProblem {
    std::filesystem::path path;
    std::string message;
};

struct WalkOptions {
    int maxDepth = 32;       // folders whose entries would be deeper are not entered (a WalkProblem says so)
    bool followLinks = true; // enter folders reached through symbolic links (cycles are still never entered)
};

/// Called for each entry in sorted order, depth first; for a folder, returning true enters it.
using WalkVisitor = std::function<bool(const WalkEntry&)>;

/// Walks the folder below root. Never throws and always ends: each folder is entered at most once, however many
/// links lead to it, so two links to "." cost one extra entry each, not an exponential walk.
std::vector<WalkProblem> walkFolder(const std::filesystem::path& root, const WalkVisitor& visit,
                                    const WalkOptions& options = {});

/// Why the path cannot be used as a folder, in words ("does not exist", "is a regular file, not a folder",
/// "is a symbolic link that never reaches a file ..."), or "" when it is a folder.
std::string whyNotAFolder(const std::filesystem::path& path);

} // namespace mkb
