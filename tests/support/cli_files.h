// Files and progress streams for the tests that drive the mkb binary: write and read fixture files, and pick a
// run's --progress json events by kind.
#pragma once

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <filesystem>

namespace mkbtest {

inline QString qpath(const std::filesystem::path& path) {
    return QString::fromStdString(path.string());
}

/// Writes `text` to `file`, making its folder first; false when any of it could not be written.
inline bool writeText(const QString& file, const QByteArray& text) {
    QDir().mkpath(QFileInfo(file).absolutePath());
    QFile out(file);
    return out.open(QIODevice::WriteOnly | QIODevice::Truncate) && out.write(text) == text.size();
}

/// The file's bytes, or empty when it cannot be read.
inline QByteArray readText(const QString& file) {
    QFile in(file);
    return in.open(QIODevice::ReadOnly) ? in.readAll() : QByteArray();
}

/// The JSON events of a --progress json run's output, by kind ("trial_finished", "note", …), in order.
inline QList<QJsonObject> events(const QString& out, const QString& kind) {
    QList<QJsonObject> found;
    for (const QString& line : out.split('\n', Qt::SkipEmptyParts)) {
        const QJsonObject event = QJsonDocument::fromJson(line.toUtf8()).object();
        if (event["event"].toString() == kind) {
            found.push_back(event);
        }
    }
    return found;
}

} // namespace mkbtest
