// libFuzzer target: the results importer's JSON paths. Each input is split into the texts of store.json,
// invocations.jsonl, results.json, record.json, verdict.json and submissions.jsonl, written as one model folder with
// one trial, and imported into a store, the way `mkb import` reads a MetaKernelBench results folder.
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

/// The line between two files' texts in an input; the corpus and fuzz.dict use the same.
constexpr std::string_view kSeparator = "\n#--#\n";

/// Fresh stores every so many inputs, so that the store stays small and each input runs at the same speed.
constexpr int kInputsPerStore = 500;

struct Workspace {
    fs::path root;               // a private folder (under /dev/shm when there is one)
    fs::path model;              // root/results/model: the model folder
    fs::path trial;              // its one trial folder
    fs::path storePath;          // root/store.sqlite
    std::vector<fs::path> files; // where each section of an input goes, in input order
    std::unique_ptr<mkb::Store> store;
    int inputsOnStore = 0;
};

fs::path privateFolder() {
    std::error_code ec;
    fs::path base = fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm")
                                                                                        : fs::temp_directory_path();
    std::string pattern = (base / "mkb-fuzz-import-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
        std::fprintf(stderr, "fuzz_results_import: cannot create a folder under %s\n", base.c_str());
        std::abort();
    }
    return pattern;
}

void openFreshStore(Workspace& workspace) {
    workspace.store.reset();
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        fs::remove(workspace.storePath.string() + suffix, ec);
    }
    auto store = mkb::Store::open(workspace.storePath);
    if (!store) {
        std::fprintf(stderr, "fuzz_results_import: cannot open the store: %s\n", store.error().message.c_str());
        std::abort();
    }
    workspace.store = std::move(store).value();
    workspace.inputsOnStore = 0;
}

Workspace& workspace() {
    static Workspace* made = [] {
        auto* w = new Workspace;
        w->root = privateFolder();
        w->model = w->root / "results" / "model";
        w->trial = w->model / "problems" / "01_mha_prefill" / "abc123_p01_r1_solo_cutedsl";
        w->storePath = w->root / "store.sqlite";
        w->files = {w->model / "store.json",  w->model / "invocations.jsonl", w->model / "results.json",
                    w->trial / "record.json", w->trial / "verdict.json",      w->trial / "submissions.jsonl"};
        fs::create_directories(w->trial);
        std::atexit([] {
            std::error_code ec;
            fs::remove_all(workspace().root, ec);
        });
        openFreshStore(*w);
        return w;
    }();
    return *made;
}

void writeText(const fs::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Workspace& w = workspace();
    std::string_view input(reinterpret_cast<const char*>(data), size);
    std::size_t section = 0;
    for (; section < w.files.size(); ++section) {
        const std::size_t end = input.find(kSeparator);
        writeText(w.files[section], input.substr(0, end));
        if (end == std::string_view::npos) {
            ++section;
            break;
        }
        input.remove_prefix(end + kSeparator.size());
    }
    for (std::error_code ec; section < w.files.size(); ++section) {
        fs::remove(w.files[section], ec); // an input with fewer sections leaves those files out
    }
    if (++w.inputsOnStore > kInputsPerStore) {
        openFreshStore(w);
    }
    (void)mkb::importMetaKernelBenchResults(*w.store, w.root / "results");
    return 0;
}
