// Small suite folders built inside a temporary directory, for catalog and CLI tests.
#pragma once

#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <string>

namespace mkbtest {

/// A well-formed problem file with the given docstring and extra text.
inline std::string problemText(const std::string& title = "A well-formed problem.", const std::string& extra = "") {
    return "\"\"\"" + title + "\"\"\"\n\nimport torch\n\n" + extra +
           "\ndef make_inputs(device=\"cuda\"):\n    return [torch.randn(4, device=device)]\n\n"
           "def reference(x):\n    return x * 2\n";
}

class FixtureSuite {
public:
    FixtureSuite() : root_(std::filesystem::path(dir_.path().toStdString()) / "suite") {
        std::filesystem::create_directories(root_);
    }
    const std::filesystem::path& root() const { return root_; }
    std::filesystem::path write(const std::string& relative, const std::string& bytes) {
        std::filesystem::path path = root_ / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }

private:
    QTemporaryDir dir_;
    std::filesystem::path root_;
};

} // namespace mkbtest
