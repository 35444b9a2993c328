// ImportSession: the job reads the folder into its own Store; progress travels through a shared state that keeps
// only the newest numbers, and one posted call at a time shows them.
#include "gui/project/import_session.h"

#include "core/io/import_summary_text.h"
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>

namespace mkb::gui {

/// What the import job tells the GUI thread: the latest progress (a newer one replaces one not yet shown) and the
/// user's cancel.
struct ImportSession::State {
    std::mutex mutex;
    std::size_t done = 0;
    std::size_t total = 0;
    std::string where;
    bool shownPending = false;
    std::atomic<bool> cancel{false};
};

namespace {

ImportOutcome importInto(const std::filesystem::path& project, const std::filesystem::path& source,
                         const ImportProgress& progress) {
    ImportOutcome outcome;
    auto store = Store::open(project, OpenMode::MustExist);
    if (!store) {
        outcome.summary = QString::fromStdString(store.error().message);
        return outcome;
    }
    ImportOptions options;
    options.progress = progress;
    auto imported = importMetaKernelBenchResults(**store, source, options);
    if (!imported) {
        outcome.summary = QString::fromStdString(imported.error().message);
        return outcome;
    }
    outcome.ok = !imported->cancelled && !imported->storeFailure;
    outcome.cancelled = imported->cancelled;
    outcome.changed = imported->trialsImported + imported->trialsReplaced + imported->models > 0;
    outcome.summary = QString::fromStdString(importOutcomeText(*imported));
    if (imported->storeFailure) {
        outcome.summary += QStringLiteral(" — stopped: %1; import again once the project can be written")
                               .arg(QString::fromStdString(*imported->storeFailure));
    } else if (!imported->issues.empty()) {
        outcome.summary += QStringLiteral(" — %1: %2")
                               .arg(QString::fromStdString(imported->issues.front().path.filename().string()),
                                    QString::fromStdString(imported->issues.front().message));
    }
    return outcome;
}

} // namespace

ImportSession::ImportSession(QObject* parent) : QObject(parent) {}

// imports_ cancels the import, which stops after its current trial (importing again completes it), and waits for it.
ImportSession::~ImportSession() = default;

bool ImportSession::start(const QString& storePath, const QString& folder) {
    if (state_) {
        return false;
    }
    auto state = std::make_shared<State>();
    state_ = state;
    folder_ = folder;
    const std::filesystem::path project = storePath.toStdString();
    const std::filesystem::path source = folder.toStdString();
    imports_.start(
        [this, project, source, state](const JobControl& job) {
            // Goes on while neither the user cancelled (the outcome then says so) nor the session went away.
            const ImportProgress progress = [this, state, &job](std::size_t done, std::size_t total,
                                                                std::string_view where) {
                std::lock_guard<std::mutex> lock(state->mutex);
                state->done = done;
                state->total = total;
                state->where.assign(where);
                if (!state->shownPending) {
                    state->shownPending = true;
                    job.post([this] { showProgress(); });
                }
                return !state->cancel.load() && !job.cancelled();
            };
            return importInto(project, source, progress);
        },
        [this](ImportOutcome& outcome) {
            state_.reset();
            emit finished(outcome);
        });
    return true;
}

void ImportSession::cancel() {
    if (state_) {
        state_->cancel = true;
    }
}

bool ImportSession::isCancelling() const {
    return state_ && state_->cancel.load();
}

void ImportSession::showProgress() {
    if (!state_) {
        return;
    }
    std::size_t done = 0;
    std::size_t total = 0;
    QString where;
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->shownPending = false;
        done = state_->done;
        total = state_->total;
        where = QString::fromStdString(state_->where);
    }
    emit progress(qint64(done), qint64(total), where);
}

} // namespace mkb::gui
