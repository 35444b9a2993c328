// `mkb plan`: what a run of model × problems × DSL pair × replicates would do next, given the store's history.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/run_selection.h"

#include "core/catalog/dsl_registry.h"
#include "core/grader_client/grader_fingerprint.h"
#include "core/protocol/plan_history.h"
#include "core/protocol/planner.h"
#include "core/protocol/run_options.h"
#include "core/util/paths.h"
#include "core/util/text.h"
#include "core/vocabulary/boundary.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kPlanIntro = R"(usage: mkb plan --problems GLOB --dsls A,B[,C...] [options]

Plans a run: every trial of the selected problems × both solo arms and both skill arms of the DSL pair ×
replicates (with more than two DSLs, of every pair of them: one solo per DSL, a skill arm per ordered pair), each
given a status from the store's history of this model (docs/guide/runs.md):
  run     no record yet
  rerun   the record holds an infrastructure error, was interrupted, or was left "running" by a crash
  reuse   the record is valid and current
  stale   the problem's or grader's fingerprint changed, the verdict was graded under another implementation
          boundary than --boundary (legacy verdicts are stale under either), or (skill arms) the source skill's
          SHA-256 changed or the source solo will run again; kept as is unless --rerun-stale is given
  redo    a stale trial under --rerun-stale: its record is archived (never deleted), then it runs again
  skip    a skill arm whose finished source wrote no skill: recorded as skipped (counts as its base)
Solos come first; a skill arm whose source solo will (re)run waits for it. One line per trial
(coordinate p<NN>_r<k>_<arm>, status, reason), then the counts per status.

This command only prints the plan; nothing is run or written, with or without --dry-run.
Running a plan is the job of `mkb run` (which takes the same options).

)";

const char* const kPlanExitCodes =
    R"(exit codes: 0 planned, 2 bad command line or unknown DSL, 3 suite folder missing or no problem matched,
            4 the store cannot be opened
)";

/// mkb plan's options: those it shares with mkb run are run's own declarations (core/protocol/run_options.h), so
/// the two verbs cannot drift apart; the rest are declared here.
const OptionTable& planOptions() {
    static const OptionTable table = [] {
        auto run = [](const char* name) { return *findOption(runOptionDeclarations(), name); };
        auto saying = [](OptionDeclaration option, std::string help) {
            option.help = std::move(help);
            return option;
        };
        OptionDeclaration dryRun = run("dry-run");
        dryRun.help = "print the plan only (today this is what plan always does)";
        OptionDeclaration store = run("store");
        store.help = "the project store; a store that does not exist yet means an empty history and is not created";
        return OptionTable{
            run("problems"),
            run("suite"),
            saying(run("dsls"), "two or more different ids of resources/dsls/; n DSLs plan all n(n-1) directions, "
                                "e.g. triton,cuda,numba,pallas gives 12"),
            run("replicates"),
            textOption("model", "NAME", "the model whose history is read").withDefault("reference"),
            store,
            textOption("grader-fingerprint", "H",
                       "judge records against this grader fingerprint (records graded by another grader are stale)")
                .defaultSaid("the fingerprint of the grader package this mkb uses"),
            saying(run("boundary"), "the implementation boundary the run would grade under: mkb or strict "
                                    "(docs/guide/boundaries.md); records graded under another one are stale"),
            saying(run("rerun-stale"), "turn stale trials into redo entries"),
            dryRun,
            flagOption("json", "print one JSON object instead of text"),
        };
    }();
    return table;
}

std::string planHelp() {
    return verbHelp(kPlanIntro, planOptions(), kPlanExitCodes);
}

struct PlanOptions {
    std::string glob;
    std::vector<fs::path> suites;
    std::vector<std::string> dsls; // two or more; every pair is planned
    int replicates = 0;
    std::string model;
    fs::path storePath;
    std::string graderFingerprint;
    std::string boundary;
    bool rerunStale = false;
    bool dryRun = false;
    bool json = false;
};

nlohmann::json planToJson(const Plan& plan, const PlanOptions& options, bool storeExists) {
    nlohmann::json out;
    out["model"] = options.model;
    out["dsls"] = options.dsls;
    out["replicates"] = options.replicates;
    out["store"] = options.storePath.string();
    out["store_exists"] = storeExists;
    out["grader_fingerprint"] =
        options.graderFingerprint.empty() ? nlohmann::json() : nlohmann::json(options.graderFingerprint);
    out["boundary"] = options.boundary;
    out["rerun_stale"] = options.rerunStale;
    out["executed"] = false;
    nlohmann::json entries = nlohmann::json::array();
    for (const PlanEntry& entry : plan.entries) {
        nlohmann::json item;
        item["coordinate"] = entry.coordinateText;
        item["problem"] = entry.problemName;
        item["replicate"] = entry.coordinate.replicate;
        item["arm"] = entry.coordinate.arm.name();
        item["dsl"] = entry.coordinate.arm.dsl;
        item["status"] = toString(entry.status);
        item["reason"] = entry.reason;
        item["live_trial_id"] = entry.liveTrialId ? nlohmann::json(*entry.liveTrialId) : nlohmann::json();
        item["waits_for"] = entry.waitsForSource && entry.sourceEntry
                                ? nlohmann::json(plan.entries[*entry.sourceEntry].coordinateText)
                                : nlohmann::json();
        entries.push_back(std::move(item));
    }
    out["entries"] = std::move(entries);
    nlohmann::json counts = nlohmann::json::object();
    for (PlanStatus status : kAllPlanStatuses) {
        counts[toString(status)] = plan.count(status);
    }
    out["counts"] = std::move(counts);
    out["total"] = plan.entries.size();
    return out;
}

void printPlan(const Plan& plan, const PlanOptions& options, std::size_t problemCount, bool storeExists) {
    std::string dslList;
    for (const std::string& dsl : options.dsls) {
        dslList += (dslList.empty() ? "" : ",") + safeOneLine(dsl);
    }
    const std::size_t n = options.dsls.size();
    std::cout << "plan for model " << safeOneLine(options.model) << ", DSLs " << dslList << ": " << problemCount
              << (problemCount == 1 ? " problem" : " problems") << " x " << options.replicates
              << (options.replicates == 1 ? " replicate" : " replicates") << " x " << n + n * (n - 1)
              << " arms = " << plan.entries.size() << " trials\n";
    std::cout << "history: "
              << (storeExists ? "store " + options.storePath.string()
                              : "none (no store at " + options.storePath.string() + ")")
              << "\n";
    std::cout << "boundary: " << options.boundary << " (trials graded under another boundary are stale)\n\n";
    std::size_t width = 0;
    for (const PlanEntry& entry : plan.entries) {
        width = std::max(width, entry.coordinateText.size());
    }
    for (const PlanEntry& entry : plan.entries) {
        std::printf("%-*s  %-5s  %s\n", static_cast<int>(width), entry.coordinateText.c_str(), toString(entry.status),
                    entry.reason.c_str());
    }
    std::string counts;
    for (PlanStatus status : kAllPlanStatuses) {
        counts +=
            (counts.empty() ? "" : ", ") + std::string(toString(status)) + " " + std::to_string(plan.count(status));
    }
    std::printf("\ncounts: %s (total %zu)\n", counts.c_str(), plan.entries.size());
    std::printf("waiting: %zu skill arms wait for their source solo\n", plan.dependencies().size());
    if (!options.dryRun) {
        std::printf("nothing was run: mkb plan only prints the plan; `mkb run` executes it\n");
    }
    std::fflush(stdout);
}

Result<PlanOptions> readOptions(const ParsedOptions& args) {
    PlanOptions options;
    if (!args.positionals.empty()) {
        return makeError("plan: unexpected argument '" + safeOneLine(args.positionals.front()) +
                         "'; see mkb plan --help");
    }
    auto glob = args.value("problems");
    if (!glob || trimmed(*glob).empty()) {
        return makeError("plan: --problems GLOB is required, e.g. --problems '*'");
    }
    options.glob = *glob;
    auto dsls = args.value("dsls");
    if (!dsls) {
        return makeError("plan: --dsls A,B is required, e.g. --dsls triton,cuda");
    }
    auto list = parseDslList(*dsls, "plan");
    if (!list) {
        return list.error();
    }
    options.dsls = std::move(list).value();
    options.replicates = args.integer("replicates");
    options.model = args.text("model");
    if (trimmed(options.model).empty()) {
        return makeError("plan: --model needs a name");
    }
    for (const std::string& suite : args.all("suite")) {
        options.suites.emplace_back(suite);
    }
    if (options.suites.empty()) {
        options.suites.push_back(shippedProblemsDir());
    }
    options.storePath = args.value("store") ? fs::path(*args.value("store")) : defaultStorePath();
    if (auto given = args.value("grader-fingerprint")) {
        options.graderFingerprint = *given;
    } else {
        Result<std::string> current = graderFingerprintOf(graderPackageDir());
        if (!current) {
            return current.error();
        }
        options.graderFingerprint = *current;
    }
    auto boundary = parseBoundary(args.text("boundary"), "plan: --boundary");
    if (!boundary) {
        return boundary.error();
    }
    options.boundary = *boundary;
    options.rerunStale = args.flag("rerun-stale");
    options.dryRun = args.flag("dry-run");
    options.json = args.flag("json");
    return options;
}

int runPlan(const std::vector<std::string>& rawArgs) {
    Result<ParsedOptions> args = parseOptions(planOptions(), rawArgs);
    if (!args) {
        return fail(kExitUsage, args.error().message);
    }
    if (args->help) {
        std::cout << planHelp();
        return kExitOk;
    }
    Result<PlanOptions> options = readOptions(*args);
    if (!options) {
        return fail(kExitUsage, options.error().message);
    }

    Result<DslRegistry> registry = loadDslRegistry();
    if (!registry) {
        return fail(kExitBadInput, registry.error().message);
    }
    for (const std::string& dsl : options->dsls) {
        if (!registry->find(dsl)) {
            std::string known;
            for (const std::string& id : registry->ids()) {
                known += (known.empty() ? "" : ", ") + id;
            }
            return fail(kExitUsage, "plan: unknown DSL '" + safeOneLine(dsl) + "' in --dsls; known DSLs: " + known);
        }
    }

    SelectionError selectionError;
    std::vector<Problem> selected = selectProblems(options->suites, options->glob, "plan", &selectionError);
    if (selected.empty()) {
        return fail(selectionError.exitCode, selectionError.message);
    }

    PlanRequest request;
    request.model = options->model;
    request.problems = std::move(selected);
    request.dslA = options->dsls[0];
    request.dslB = options->dsls[1];
    request.replicates = options->replicates;
    request.graderFingerprint = options->graderFingerprint;
    request.boundary = options->boundary;
    request.rerunStale = options->rerunStale;
    if (Status valid = validatePlanRequest(request); !valid) {
        return fail(kExitUsage, valid.error().message);
    }

    Result<PlanHistory> history = loadPlanHistory(options->storePath, options->model);
    if (!history) {
        return fail(kExitStore, history.error().message);
    }
    const bool storeExists = history->storeExists;

    const Plan plan = makePlanForDsls(request, options->dsls, history->trials, contextFromTrials(history->trials));
    if (options->json) {
        std::cout << planToJson(plan, *options, storeExists).dump(2) << '\n';
    } else {
        printPlan(plan, *options, request.problems.size(), storeExists);
    }
    return kExitOk;
}

const bool registered =
    registerCommand({"plan", "plan a run: run / rerun / reuse / stale per trial (prints only)", planHelp(), runPlan});

} // namespace
} // namespace mkb::cli
