// Recent projects persisted under the settings key "recentProjects".
#include "gui/shell/recent_projects.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace mkb::gui {
namespace {

const QString kKey = QStringLiteral("recentProjects");

QString normalised(const QString& path) {
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

} // namespace

RecentProjects::RecentProjects(QSettings& settings) : settings_(settings) {}

QStringList RecentProjects::stored() const {
    return settings_.value(kKey).toStringList();
}

void RecentProjects::store(const QStringList& paths) {
    if (paths.isEmpty()) {
        settings_.remove(kKey);
    } else {
        settings_.setValue(kKey, paths);
    }
}

QStringList RecentProjects::paths() {
    const QStringList all = stored();
    QStringList existing;
    for (const QString& path : all) {
        if (QFileInfo(path).isFile() && !existing.contains(path)) {
            existing << path;
        }
    }
    if (existing != all) {
        store(existing);
    }
    return existing;
}

void RecentProjects::add(const QString& path) {
    const QString clean = normalised(path);
    QStringList paths = stored();
    paths.removeAll(clean);
    paths.prepend(clean);
    while (paths.size() > kMaximum) {
        paths.removeLast();
    }
    store(paths);
}

void RecentProjects::remove(const QString& path) {
    QStringList paths = stored();
    paths.removeAll(normalised(path));
    store(paths);
}

void RecentProjects::clear() {
    store({});
}

} // namespace mkb::gui
