// `mkb db`: create, inspect, check and migrate the project store.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/store/store.h"
#include "core/store/store_maintenance.h"
#include "core/util/paths.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kDbIntro = R"(usage: mkb db ACTION [--store PATH] [options]

Create, inspect, check and migrate the project store (one SQLite file per project).

actions:
  init     create the store (and its folders); an existing store is left as it is
  info     schema version, file size, journal mode and rows per table  [--json]
  check    run SQLite's integrity check and a foreign key check; exit 1 when a problem is found
  migrate  bring an older store forward to this build's schema, printing from -> to
  recover  apply a write-ahead log (PATH-wal) that a writer left behind, after copying the store and the log

info and check (like report and export) open the store read-only: they never migrate it and never apply,
checkpoint or delete its write-ahead log PATH-wal (its committed changes are read where they are; a writer or
`mkb db recover` copies them in). A PATH-wal that is certainly another database's is refused by every verb.

)";

const char* const kDbRest = R"(exit codes: 0 success, 1 check found problems, 2 bad command line,
            4 the store is missing (info, check, migrate, recover), corrupt, not a store, newer than this build,
              or beside another database's write-ahead log
)";

const OptionTable& dbOptions() {
    static const OptionTable table = {
        pathOption("store", "PATH", "the store file")
            .defaultSaid("$MKB_STORE, else ~/.local/share/mkb/default.mkb.sqlite"),
        flagOption("json", "(info) print one JSON object instead of text"),
    };
    return table;
}

std::string dbHelp() {
    return verbHelp(kDbIntro, dbOptions(), kDbRest);
}

const char* const kInitHelp = R"(usage: mkb db init [--store PATH]

Creates the project store at PATH (default: $MKB_STORE, else the user's data folder), with its parent folders.
An existing store is opened (and migrated forward when older) and left otherwise untouched; a file that is not a
store is refused and never overwritten.
)";

const char* const kInfoHelp = R"(usage: mkb db info [--store PATH] [--json]

Prints the store's path, schema version, file size, journal mode and rows per table. The store must exist;
exit 4 with one line when it is missing, corrupt, not a store or newer than this build. Opens the store
read-only: an older store is shown as it is (not migrated), and the committed pages of a write-ahead log beside
it are counted and read, not applied (see mkb db recover --help).
)";

const char* const kCheckHelp = R"(usage: mkb db check [--store PATH]

Runs SQLite's full integrity check and a foreign key check. Prints "ok" and exits 0 when healthy; prints each
problem and exits 1 otherwise; exits 4 when the store cannot be opened at all. Opens the store read-only, like
db info.
)";

const char* const kRecoverHelp = R"(usage: mkb db recover [--store PATH]

Applies the write-ahead log PATH-wal that a writer (an import or a run) left behind when it stopped without closing
the store (a kill, a power cut), or that two connections closing at once left for the next writer. Read-only verbs
(report, export, db info, db check) read such a log but never apply it: they cannot tell it from a log copied in
from another workbench store, which would overwrite this one.
Before applying it, the store and the log are copied to PATH.before-recover and PATH.before-recover-wal: once the
store looks right (mkb db check, mkb report), delete them; if it does not, put them back.
Refuses while any process has the store open (its log is then in use, not left over) and when the log is certainly
another database's (other page size or application): move PATH-wal aside then.
exit codes: 0 applied or nothing to apply, 2 bad command line, 4 refused or failed (the store is unchanged)
)";

const char* const kMigrateHelp = R"(usage: mkb db migrate [--store PATH]

Upgrades an older store to this build's schema (each step in its own transaction) and prints the versions
from -> to. A store that is already current is left as it is. Newer stores are refused (exit 4).
)";

std::string humanSize(std::uintmax_t bytes) {
    char text[32];
    if (bytes >= 1024 * 1024) {
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    } else if (bytes >= 1024) {
        std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
    } else {
        std::snprintf(text, sizeof text, "%ju bytes", bytes);
    }
    return text;
}

int runInit(const fs::path& path) {
    Result<StoreInit> init = initStore(path);
    if (!init) {
        return fail(kExitStore, init.error().message);
    }
    switch (init->kind) {
    case StoreInitKind::Created:
        std::cout << "created store " << path.string() << " (schema version " << init->toVersion << ")\n";
        break;
    case StoreInitKind::Migrated:
        std::cout << "store " << path.string() << " already exists; migrated schema version " << init->fromVersion
                  << " -> " << init->toVersion << "\n";
        break;
    case StoreInitKind::InitialisedEmpty:
        std::cout << "initialised empty file " << path.string() << " as a store (schema version " << init->toVersion
                  << ")\n";
        break;
    case StoreInitKind::AlreadyCurrent:
        std::cout << "store " << path.string() << " already exists (schema version " << init->toVersion
                  << "); left as it is\n";
        break;
    }
    return kExitOk;
}

int runInfo(const fs::path& path, bool json) {
    Result<StoreInfo> info = inspectStore(path);
    if (!info) {
        return fail(kExitStore, info.error().message);
    }
    const bool migrated = info->migratedFromVersion != 0 && info->migratedFromVersion != info->schemaVersion;
    if (json) {
        nlohmann::json out;
        out["path"] = info->path.string();
        out["schema_version"] = info->schemaVersion;
        out["latest_schema_version"] = Store::latestSchemaVersion();
        out["migrated_from_version"] = migrated ? nlohmann::json(info->migratedFromVersion) : nlohmann::json();
        out["file_size_bytes"] = info->fileSizeBytes;
        out["journal_mode"] = info->journalMode;
        out["wal_pending_pages"] = info->walPendingPages;
        nlohmann::json tables = nlohmann::json::object();
        for (const auto& [table, rows] : info->rowCounts) {
            tables[table] = rows;
        }
        out["tables"] = tables;
        out["live_trials"] = info->liveTrials;
        out["archived_trials"] = info->archivedTrials;
        std::cout << out.dump(2) << '\n';
        return kExitOk;
    }
    const bool older = info->schemaVersion < Store::latestSchemaVersion();
    std::cout << "store:          " << info->path.string() << '\n'
              << "schema version: " << info->schemaVersion
              << (migrated ? " (migrated from " + std::to_string(info->migratedFromVersion) + " just now)" : "")
              << (older ? " (this build writes " + std::to_string(Store::latestSchemaVersion()) +
                              "; mkb db migrate upgrades it)"
                        : "")
              << '\n'
              << "file size:      " << humanSize(info->fileSizeBytes) << '\n'
              << "journal mode:   " << info->journalMode << '\n'
              << (info->walPendingPages > 0
                      ? "write-ahead:    " + std::to_string(info->walPendingPages) + " committed page(s) in " +
                            info->path.string() + "-wal not yet in the store file (read as usual; a writer or mkb " +
                            "db recover copies them in)\n"
                      : std::string())
              << "rows:\n";
    for (const auto& [table, rows] : info->rowCounts) {
        std::printf("  %-15s %lld\n", table.c_str(), static_cast<long long>(rows));
    }
    std::fflush(stdout);
    std::cout << "trials:         " << info->liveTrials << " live, " << info->archivedTrials << " archived\n";
    return kExitOk;
}

int runCheck(const fs::path& path) {
    Result<std::vector<std::string>> problems = checkStore(path);
    if (!problems) {
        return fail(kExitStore, problems.error().message);
    }
    if (problems->empty()) {
        std::cout << "ok: " << path.string() << " passed the integrity and foreign key checks\n";
        return kExitOk;
    }
    for (const std::string& problem : *problems) {
        std::cout << path.string() << ": " << problem << '\n';
    }
    return fail(kExitFailed, "store " + path.string() + " failed its integrity check (" +
                                 std::to_string(problems->size()) + " problem(s)); keep a copy before repairing it");
}

int runMigrate(const fs::path& path) {
    Result<StoreMigration> migration = migrateStore(path);
    if (!migration) {
        return fail(kExitStore, migration.error().message);
    }
    if (!migration->changed()) {
        std::cout << "store " << path.string() << " is already at schema version " << migration->toVersion
                  << "; nothing to do\n";
        return kExitOk;
    }
    std::cout << "store " << path.string() << ": schema version " << migration->fromVersion << " -> "
              << migration->toVersion << '\n';
    return kExitOk;
}

int runRecover(const fs::path& path) {
    Result<Store::LogRecovery> recovered = Store::recoverWriteAheadLog(path);
    if (!recovered) {
        return fail(kExitStore, recovered.error().message);
    }
    if (recovered->copy.empty()) {
        std::cout << "store " << path.string() << ": no write-ahead log to apply; nothing was changed\n";
        return kExitOk;
    }
    fs::path walCopy = recovered->copy;
    walCopy += "-wal";
    std::cout << "store " << path.string() << ": applied " << recovered->appliedPages
              << " page(s) from its write-ahead log; the store and the log as they were are in "
              << recovered->copy.string() << " and " << walCopy.string()
              << " (delete them once mkb db check and mkb report look right)\n";
    return kExitOk;
}

int runDb(const std::vector<std::string>& args) {
    Result<ParsedOptions> parsed = parseOptions(dbOptions(), args);
    if (!parsed) {
        return fail(kExitUsage, "db: " + parsed.error().message);
    }
    if (parsed->positionals.empty()) {
        if (parsed->help) {
            std::cout << dbHelp();
            return kExitOk;
        }
        return fail(kExitUsage, "db: name an action: init, info, check, migrate or recover (see mkb db --help)");
    }
    if (parsed->positionals.size() > 1) {
        return fail(kExitUsage, "db: unexpected argument '" + parsed->positionals[1] + "' (see mkb db --help)");
    }
    const std::string& action = parsed->positionals[0];
    const char* help = action == "init"      ? kInitHelp
                       : action == "info"    ? kInfoHelp
                       : action == "check"   ? kCheckHelp
                       : action == "migrate" ? kMigrateHelp
                       : action == "recover" ? kRecoverHelp
                                             : nullptr;
    if (!help) {
        return fail(kExitUsage, "db: unknown action '" + action + "' (actions: init, info, check, migrate, recover)");
    }
    if (parsed->help) {
        std::cout << help;
        return kExitOk;
    }
    if (parsed->flag("json") && action != "info") {
        return fail(kExitUsage, "db " + action + ": --json is only for db info");
    }
    const fs::path path = parsed->value("store") ? fs::path(*parsed->value("store")) : defaultStorePath();
    if (action == "init") {
        return runInit(path);
    }
    if (action == "info") {
        return runInfo(path, parsed->flag("json"));
    }
    if (action == "check") {
        return runCheck(path);
    }
    if (action == "recover") {
        return runRecover(path);
    }
    return runMigrate(path);
}

const bool registered =
    registerCommand({"db", "create, inspect, check and migrate the project store", dbHelp(), runDb});

} // namespace
} // namespace mkb::cli
