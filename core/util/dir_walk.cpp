// Walking a folder tree once: entries sorted, folders identified by device and inode so no cycle is ever followed.
#include "core/util/dir_walk.h"

#include "core/util/text.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <utility>

namespace mkb {
namespace fs = std::filesystem;
namespace {

using FolderId = std::pair<dev_t, ino_t>;

class FolderWalk {
public:
    FolderWalk(const WalkVisitor& visit, const WalkOptions& options) : visit_(visit), options_(options) {}

    void enter(const fs::path& folder, const FolderId& id, int depth) {
        entered_.emplace(id, folder);
        ancestors_.push_back(id);
        for (const fs::path& path : sortedEntries(folder)) {
            FolderId childId{};
            const WalkEntry entry = examine(path, depth, childId);
            const bool wantsIn = visit_(entry);
            if (entry.kind != WalkEntryKind::Folder || !wantsIn || (entry.isSymlink && !options_.followLinks)) {
                continue;
            }
            if (!mayEnter(path, childId, depth)) {
                continue;
            }
            enter(path, childId, depth + 1);
        }
        ancestors_.pop_back();
    }

    std::vector<WalkProblem> problems;

private:
    std::vector<fs::path> sortedEntries(const fs::path& folder) {
        std::vector<fs::path> paths;
        std::error_code ec;
        fs::directory_iterator it(folder, ec);
        for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
            paths.push_back(it->path());
        }
        if (ec) {
            problems.push_back({folder, "cannot list this folder (" + ec.message() + "); check its permissions"});
        }
        std::sort(paths.begin(), paths.end());
        return paths;
    }

    /// The entry as the visitor sees it; for a folder, id receives the folder's device and inode.
    static WalkEntry examine(const fs::path& path, int depth, FolderId& id) {
        WalkEntry entry;
        entry.path = path;
        entry.depth = depth;
        struct stat self {};
        if (::lstat(path.c_str(), &self) != 0) {
            entry.kind = WalkEntryKind::Unreachable;
            entry.problem = errnoInWords(errno);
            return entry;
        }
        entry.isSymlink = S_ISLNK(self.st_mode);
        struct stat target = self;
        if (entry.isSymlink && ::stat(path.c_str(), &target) != 0) {
            const int error = errno;
            entry.kind = WalkEntryKind::Unreachable;
            entry.problem = error == ENOENT ? "it is a symbolic link to something that does not exist; fix or remove "
                                              "the link"
                                            : errnoInWords(error);
            return entry;
        }
        entry.kind = S_ISDIR(target.st_mode)   ? WalkEntryKind::Folder
                     : S_ISREG(target.st_mode) ? WalkEntryKind::RegularFile
                                               : WalkEntryKind::Other;
        id = {target.st_dev, target.st_ino};
        return entry;
    }

    bool mayEnter(const fs::path& path, const FolderId& id, int depth) {
        if (auto seen = entered_.find(id); seen != entered_.end()) {
            const bool cycle = std::find(ancestors_.begin(), ancestors_.end(), id) != ancestors_.end();
            problems.push_back({path, cycle ? "a link back to " + safeOneLine(seen->second.string()) +
                                                  ", which holds it (a cycle); not followed"
                                            : "the same folder as " + safeOneLine(seen->second.string()) +
                                                  ", already walked; not walked again"});
            return false;
        }
        if (depth + 1 > options_.maxDepth) {
            problems.push_back(
                {path, "nested more than " + std::to_string(options_.maxDepth) + " folders deep; not walked"});
            return false;
        }
        return true;
    }

    const WalkVisitor& visit_;
    const WalkOptions& options_;
    std::map<FolderId, fs::path> entered_;
    std::vector<FolderId> ancestors_;
};

} // namespace

std::vector<WalkProblem> walkFolder(const fs::path& root, const WalkVisitor& visit, const WalkOptions& options) {
    FolderWalk walk(visit, options);
    struct stat info {};
    if (::stat(root.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        walk.problems.push_back({root, whyNotAFolder(root)});
        return std::move(walk.problems);
    }
    walk.enter(root, {info.st_dev, info.st_ino}, 1);
    return std::move(walk.problems);
}

std::string whyNotAFolder(const fs::path& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) {
        return S_ISDIR(info.st_mode) ? "" : "is " + fileKindInWords(info.st_mode) + ", not a folder";
    }
    const int error = errno;
    struct stat self {};
    if (error == ENOENT && ::lstat(path.c_str(), &self) == 0) {
        return "is a symbolic link to something that does not exist";
    }
    if (error == ENOENT) {
        return "does not exist";
    }
    if (error == ELOOP) {
        return "is a symbolic link that never resolves (it points back at itself, or round a loop of links)";
    }
    return "cannot be examined (" + std::string(errnoInWords(error)) + ")";
}

} // namespace mkb
