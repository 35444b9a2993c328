// libFuzzer target: the store-open path (header, application id, schema version and shape, page count, WAL checks)
// on damaged copies of a real store. The input is a list of edits to a store written once through the Store API, so
// mutations land on SQLite's header and pages rather than on random bytes that fail at the first check.
#include "core/store/store.h"
#include "core/store/store_files.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

namespace fs = std::filesystem;

fs::path workFolder() {
    static const fs::path folder = [] {
        fs::path made = fs::temp_directory_path() / ("mkb-fuzz-store-" + std::to_string(::getpid()));
        fs::create_directories(made);
        return made;
    }();
    return folder;
}

/// A small healthy store (two models, three problems), read back as bytes once.
const std::string& templateStore() {
    static const std::string bytes = [] {
        const fs::path path = workFolder() / "template.sqlite";
        {
            auto store = mkb::Store::open(path);
            if (store) {
                (void)(*store)->ensureModel("model-a", "reference", "{}");
                (void)(*store)->ensureModel("model-b", "reference", "{}");
                for (int i = 1; i <= 3; ++i) {
                    mkb::Problem problem;
                    problem.suite = "fuzz";
                    problem.number = i;
                    problem.slug = "p" + std::to_string(i);
                    problem.family = "fuzz";
                    problem.source = std::string(600, char('a' + i));
                    problem.fingerprint = "fp" + std::to_string(i);
                    (void)(*store)->upsertProblem(problem);
                }
            }
        } // closing the last connection checkpoints the write-ahead log into the file
        std::ifstream file(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    }();
    return bytes;
}

} // namespace

// Input: a first byte choosing the length (0: as is, 1-127: cut to that many 512-byte blocks, 128-255: append that
// many minus 127 bytes), then edits of (2-byte big-endian offset in 16-byte units, 1-byte length, bytes).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string bytes = templateStore();
    if (bytes.empty() || size == 0) {
        return 0;
    }
    std::size_t at = 1;
    while (at + 3 <= size) {
        const std::size_t offset = ((std::size_t(data[at]) << 8) | data[at + 1]) * 16;
        std::size_t length = data[at + 2];
        at += 3;
        length = std::min(length, size - at);
        for (std::size_t i = 0; i < length && offset + i < bytes.size(); ++i) {
            bytes[offset + i] = static_cast<char>(data[at + i]);
        }
        at += length;
    }
    if (data[0] >= 1 && data[0] <= 127) {
        bytes.resize(std::min(bytes.size(), std::size_t(data[0]) * 512));
    } else if (data[0] >= 128) {
        bytes.append(std::size_t(data[0]) - 127, '\x5a');
    }
    const fs::path path = workFolder() / "case.sqlite";
    for (const char* side : {"-wal", "-shm", "-journal"}) {
        fs::remove(fs::path(path.string() + side));
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));

    // The header check first, on its own: Store::open repeats a failing one for 200 ms (a writer may be mid-change),
    // which would leave the fuzzer a few inputs a second. A file that fails it fails every open the same way.
    (void)mkb::store::headerFields(path);
    if (!mkb::store::checkHeader(path, bytes.size(), /*checkLength=*/true)) {
        return 0;
    }
    (void)mkb::Store::fileSchemaVersion(path);
    for (mkb::OpenMode mode : {mkb::OpenMode::ReadExisting, mkb::OpenMode::Inspect}) {
        auto store = mkb::Store::open(path, mode);
        if (store) {
            (void)(*store)->info();
            (void)(*store)->problems();
            (void)(*store)->models();
        }
    }
    // A writer's open migrates and checks pages: it must refuse a damaged file, never crash on it.
    auto writer = mkb::Store::open(path, mkb::OpenMode::MustExist);
    if (writer) {
        (void)(*writer)->integrityCheck();
    }
    return 0;
}
