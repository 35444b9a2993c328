// Private re-timing folders: mkdtemp under the chosen root, removed whole on destruction.
#include "core/protocol/private_folder.h"

#include <cstdlib>
#include <fstream>
#include <system_error>

namespace mkb {

namespace fs = std::filesystem;

Result<PrivateFolder> PrivateFolder::make(const fs::path& root) {
    std::error_code ec;
    const fs::path base = root.empty() ? fs::temp_directory_path(ec) : root;
    if (ec) {
        return makeError("re-timing: no temporary folder (" + ec.message() + "); set TMPDIR");
    }
    std::string pattern = (base / "mkb-retime-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
        return makeError("re-timing: cannot create a private folder under " + base.string() +
                         "; check that it exists and is writable");
    }
    return PrivateFolder(fs::path(pattern));
}

PrivateFolder::PrivateFolder(PrivateFolder&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
}

PrivateFolder::~PrivateFolder() {
    if (!path_.empty()) {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
}

Status writeRetimeFile(const fs::path& path, const std::string& text) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out || ec) {
        return makeError("re-timing: cannot write " + path.string() + "; check the temporary folder's free space");
    }
    return Ok{};
}

} // namespace mkb
