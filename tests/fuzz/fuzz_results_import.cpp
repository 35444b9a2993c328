// libFuzzer target: the results importer's JSON paths. Each input is split into the texts of store.json,
// invocations.jsonl, results.json, record.json, verdict.json and submissions.jsonl, written as one model folder with
// one trial, and imported into a store, the way `mkb import` reads a MetaKernelBench results folder.
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"
#include "json_mutator.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
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

/// Sections of an input that are JSON Lines (invocations.jsonl, submissions.jsonl) rather than one document.
bool isJsonLines(std::size_t section) {
    return section == 1 || section == 5;
}

// clang-format off
const std::vector<std::string> kResultKeys = {
    "model", "prefix", "created_at", "started_at", "timestamp", "argv", "cells", "cell", "problem", "category",
    "rewards", "imported", "correct", "speedup_vs_eager", "passed", "stamps", "task_fingerprint", "skill_sha256",
    "error", "skipped", "timed_out", "usage", "n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd",
    "agent_sec", "eval_sec", "counted", "note", "id"};
// clang-format on

/// One JSON value of one file (or of one line of a JSON Lines file) changed by json_mutator.h; false when that text
/// is not JSON.
bool mutateOneFile(std::string& input, std::minstd_rand& rng) {
    std::vector<std::string> sections;
    for (std::string_view rest = input;;) {
        const std::size_t end = rest.find(kSeparator);
        sections.emplace_back(rest.substr(0, end));
        if (end == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(end + kSeparator.size());
    }
    const std::size_t section = rng() % sections.size();
    std::string& text = sections[section];
    if (isJsonLines(section)) {
        std::vector<std::string> lines;
        std::size_t start = 0;
        for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
            lines.push_back(text.substr(start, end - start));
        }
        lines.push_back(text.substr(start));
        std::string& line = lines[rng() % lines.size()];
        if (!mkbfuzz::mutateJsonText(line, rng, kResultKeys, /*oneLine=*/true)) {
            return false;
        }
        text.clear();
        for (std::size_t i = 0; i < lines.size(); ++i) {
            text += (i == 0 ? "" : "\n") + lines[i];
        }
    } else if (!mkbfuzz::mutateJsonText(text, rng, kResultKeys)) {
        return false;
    }
    input.clear();
    for (std::size_t i = 0; i < sections.size(); ++i) {
        if (i > 0) {
            input += kSeparator;
        }
        input += sections[i];
    }
    return true;
}

} // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t maxSize);

/// Half the mutations change one JSON value of one file, half are libFuzzer's byte mutations.
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t maxSize,
                                               unsigned int seed) {
    std::minstd_rand rng(seed);
    if (rng() % 2 == 0) {
        std::string input(reinterpret_cast<const char*>(data), size);
        if (mutateOneFile(input, rng) && input.size() <= maxSize) {
            std::memcpy(data, input.data(), input.size());
            return input.size();
        }
    }
    return LLVMFuzzerMutate(data, size, maxSize);
}

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
