// The store's upkeep: which mode each action opens the store in, and how an init tells a new store from an old one.
#include "core/store/store_maintenance.h"

namespace mkb {

Result<StoreInit> initStore(const std::filesystem::path& path) {
    std::error_code ec;
    const bool existed = std::filesystem::exists(path, ec);
    Result<std::unique_ptr<Store>> store = Store::open(path, OpenMode::CreateIfMissing);
    if (!store) {
        return store.error();
    }
    StoreInit init;
    init.toVersion = Store::latestSchemaVersion();
    const int from = (*store)->migratedFromVersion();
    if (!existed) {
        init.kind = StoreInitKind::Created;
    } else if (from != 0 && from != init.toVersion) {
        init.kind = StoreInitKind::Migrated;
        init.fromVersion = from;
    } else if (from == 0) {
        init.kind = StoreInitKind::InitialisedEmpty;
    } else {
        init.kind = StoreInitKind::AlreadyCurrent;
        init.fromVersion = from;
    }
    return init;
}

Result<StoreInfo> inspectStore(const std::filesystem::path& path) {
    Result<std::unique_ptr<Store>> store = Store::open(path, OpenMode::Inspect);
    if (!store) {
        return store.error();
    }
    return (*store)->info();
}

Result<std::vector<std::string>> checkStore(const std::filesystem::path& path) {
    Result<std::unique_ptr<Store>> store = Store::open(path, OpenMode::Inspect);
    if (!store) {
        return store.error();
    }
    return (*store)->integrityCheck();
}

Result<StoreMigration> migrateStore(const std::filesystem::path& path) {
    Result<int> before = Store::fileSchemaVersion(path);
    if (!before) {
        return before.error();
    }
    StoreMigration migration{*before, Store::latestSchemaVersion()};
    if (!migration.changed()) {
        return migration;
    }
    Result<std::unique_ptr<Store>> store = Store::open(path, OpenMode::MustExist);
    if (!store) {
        return store.error();
    }
    return migration;
}

} // namespace mkb
