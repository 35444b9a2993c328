// The recent projects list kept in QSettings: most recent first, at most ten, files that vanished are pruned.
#pragma once

#include <QString>
#include <QStringList>

class QSettings;

namespace mkb::gui {

class RecentProjects {
public:
    static constexpr int kMaximum = 10;

    explicit RecentProjects(QSettings& settings);

    /// The recent project files that still exist, most recent first; missing ones are removed from the settings.
    QStringList paths();
    /// Puts path first (as an absolute, clean path), drops an older entry of the same file, keeps kMaximum.
    void add(const QString& path);
    void remove(const QString& path);
    void clear();

private:
    QStringList stored() const;
    void store(const QStringList& paths);

    QSettings& settings_;
};

} // namespace mkb::gui
