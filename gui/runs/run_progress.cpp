// Reads `mkb run --progress json` lines; unknown fields are ignored so newer mkb versions stay readable.
#include "gui/runs/run_progress.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace mkb::gui {
namespace {

std::optional<RunEventKind> kindNamed(const QString& name) {
    if (name == QLatin1String("plan")) {
        return RunEventKind::Plan;
    }
    if (name == QLatin1String("trial_started")) {
        return RunEventKind::TrialStarted;
    }
    if (name == QLatin1String("submission")) {
        return RunEventKind::Submission;
    }
    if (name == QLatin1String("trial_finished")) {
        return RunEventKind::TrialFinished;
    }
    if (name == QLatin1String("run_finished")) {
        return RunEventKind::RunFinished;
    }
    return std::nullopt;
}

std::optional<bool> optionalBool(const QJsonValue& value) {
    return value.isBool() ? std::optional<bool>(value.toBool()) : std::nullopt;
}

std::optional<double> optionalNumber(const QJsonValue& value) {
    return value.isDouble() ? std::optional<double>(value.toDouble()) : std::nullopt;
}

QString clock(double seconds) {
    const qint64 total = qint64(seconds + 0.5);
    const qint64 hours = total / 3600;
    const qint64 minutes = (total / 60) % 60;
    const qint64 rest = total % 60;
    if (hours > 0) {
        return QStringLiteral("%1:%2:%3")
            .arg(hours)
            .arg(minutes, 2, 10, QLatin1Char('0'))
            .arg(rest, 2, 10, QLatin1Char('0'));
    }
    return QStringLiteral("%1:%2").arg(minutes, 2, 10, QLatin1Char('0')).arg(rest, 2, 10, QLatin1Char('0'));
}

} // namespace

std::optional<RunEvent> parseRunEventLine(const QByteArray& line) {
    const QByteArray trimmed = line.trimmed();
    if (!trimmed.startsWith('{')) {
        return std::nullopt;
    }
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(trimmed, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        return std::nullopt;
    }
    const QJsonObject object = document.object();
    const auto kind = kindNamed(object.value(QStringLiteral("event")).toString());
    if (!kind) {
        return std::nullopt;
    }
    RunEvent event;
    event.kind = *kind;
    const QJsonObject counts = object.value(QStringLiteral("counts")).toObject();
    event.counts.total = counts.value(QStringLiteral("total")).toInt();
    event.counts.done = counts.value(QStringLiteral("done")).toInt();
    event.counts.running = counts.value(QStringLiteral("running")).toInt();
    event.counts.failed = counts.value(QStringLiteral("failed")).toInt();
    event.counts.interrupted = counts.value(QStringLiteral("interrupted")).toInt();
    event.counts.passed = counts.value(QStringLiteral("passed")).toInt();
    event.counts.elapsedSeconds = object.value(QStringLiteral("elapsed_s")).toDouble();
    event.counts.etaSeconds = optionalNumber(object.value(QStringLiteral("eta_s")));
    for (const QJsonValue& value : object.value(QStringLiteral("entries")).toArray()) {
        const QJsonObject entry = value.toObject();
        event.plan.push_back(
            {entry.value(QStringLiteral("coordinate")).toString(), entry.value(QStringLiteral("problem")).toString(),
             entry.value(QStringLiteral("arm")).toString(), entry.value(QStringLiteral("status")).toString(),
             entry.value(QStringLiteral("reason")).toString()});
    }
    event.coordinate = object.value(QStringLiteral("coordinate")).toString();
    event.trialId = qint64(object.value(QStringLiteral("trial_id")).toDouble());
    event.status = object.value(QStringLiteral("status")).toString();
    event.message = object.value(QStringLiteral("message")).toString();
    event.submissionIndex = object.value(QStringLiteral("index")).toInt();
    event.counted = object.value(QStringLiteral("counted")).toBool();
    event.passed = optionalBool(object.value(QStringLiteral("passed")));
    event.speedup = optionalNumber(object.value(QStringLiteral("speedup")));
    event.submissionsLeft = object.value(QStringLiteral("submissions_left")).toInt();
    event.secondsLeft = object.value(QStringLiteral("seconds_left")).toDouble();
    event.exitCode = object.value(QStringLiteral("exit_code")).toInt();
    return event;
}

QString describeCounts(const RunCounts& counts) {
    QString text = QCoreApplication::translate("RunProgress", "%1/%2 done · %3 running · %4 failed · %5 passed")
                       .arg(counts.done)
                       .arg(counts.total)
                       .arg(counts.running)
                       .arg(counts.failed)
                       .arg(counts.passed);
    if (counts.interrupted > 0) {
        text += QCoreApplication::translate("RunProgress", " · %1 interrupted").arg(counts.interrupted);
    }
    text += QCoreApplication::translate("RunProgress", " · %1 elapsed").arg(clock(counts.elapsedSeconds));
    if (counts.etaSeconds) {
        text += QCoreApplication::translate("RunProgress", " · ETA %1").arg(clock(*counts.etaSeconds));
    }
    return text;
}

} // namespace mkb::gui
