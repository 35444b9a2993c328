// The private kernel folders of a re-timing: made with mkdtemp (mode 0700) and removed with everything in them.
#pragma once

#include "core/util/result.h"

#include <filesystem>
#include <string>

namespace mkb {

/// A private folder (mode 0700, from mkdtemp) removed with everything in it when this goes out of scope.
class PrivateFolder {
public:
    /// A new folder "mkb-retime-XXXXXX" under root ("" = the system's temporary folder).
    static Result<PrivateFolder> make(const std::filesystem::path& root);
    PrivateFolder(PrivateFolder&& other) noexcept;
    PrivateFolder(const PrivateFolder&) = delete;
    PrivateFolder& operator=(const PrivateFolder&) = delete;
    PrivateFolder& operator=(PrivateFolder&&) = delete;
    ~PrivateFolder();
    const std::filesystem::path& path() const { return path_; }

private:
    explicit PrivateFolder(std::filesystem::path path) : path_(std::move(path)) {}
    std::filesystem::path path_;
};

/// Writes text to path (its folders made first); the error names the file and says to check the free space.
Status writeRetimeFile(const std::filesystem::path& path, const std::string& text);

} // namespace mkb
