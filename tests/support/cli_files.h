// Files and progress streams for the tests that drive the mkb binary: write and read fixture files, lay out the
// two-DSL cpusim fixture, and pick a run's --progress json events by kind.
#pragma once

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <filesystem>

#include "support/testpaths.h"

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

/// The two CPU test DSLs a reference run pairs, under `root`: dsls/cpusim.json (the fixture's descriptor) and
/// dsls/cpusimb.json (the same under id cpusimb), and solutions/STEM.cpusim.py and STEM.cpusimb.py (the fixture's
/// cpusim solution, for both) for each stem. Returns what went wrong, or "" when every file was written.
inline QString writeCpusimPair(const QString& root, const QStringList& stems) {
    const QString fixtures = qpath(sourceDir() / "tests" / "fixtures");
    QByteArray descriptor = readText(fixtures + "/dsls/cpusim.json");
    if (descriptor.isEmpty() || !writeText(root + "/dsls/cpusim.json", descriptor)) {
        return "cannot copy " + fixtures + "/dsls/cpusim.json to " + root + "/dsls";
    }
    descriptor.replace("\"id\": \"cpusim\"", "\"id\": \"cpusimb\"");
    descriptor.replace("cpusim (CPU test DSL)", "cpusim B");
    if (!descriptor.contains("\"cpusimb\"") || !writeText(root + "/dsls/cpusimb.json", descriptor)) {
        return "cannot write the cpusimb descriptor under " + root + "/dsls";
    }
    for (const QString& stem : stems) {
        const QByteArray source = readText(fixtures + "/solutions/" + stem + ".cpusim.py");
        if (source.isEmpty() || !writeText(root + "/solutions/" + stem + ".cpusim.py", source) ||
            !writeText(root + "/solutions/" + stem + ".cpusimb.py", source)) {
            return "cannot copy the cpusim solution of " + stem + " to " + root + "/solutions";
        }
    }
    return {};
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
