// Headless figures: chart kinds by id, presets from command-line words, a synchronous store load, one chart rendered
// and exported, and PDF dates taken from the data instead of the clock.
#include "gui/paper/headless_export.h"

#include "core/io/attempt_loader.h"
#include "core/store/store.h"
#include "gui/charts/chart_kinds.h"
#include "gui/charts/direction_matrix_chart.h"
#include "gui/charts/kbx_category_chart.h"
#include "gui/charts/kbx_events_chart.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace mkb::gui::paper {

namespace {

QString slugOf(const QString& name) {
    return name.trimmed().toLower().replace(QLatin1Char(' '), QLatin1Char('-'));
}

std::string describePresets() {
    QStringList names;
    for (const PaperPreset& preset : builtInPaperPresets()) {
        names << slugOf(preset.name);
    }
    return names.join(QStringLiteral(", ")).toStdString();
}

/// "2026-12-01T12:53:39Z" (or with fractions / an offset) as UTC; invalid when unparsable.
QDateTime parseIso(const std::string& text) {
    QDateTime when = QDateTime::fromString(QString::fromStdString(text), Qt::ISODateWithMs);
    if (!when.isValid()) {
        when = QDateTime::fromString(QString::fromStdString(text), Qt::ISODate);
    }
    return when.toUTC();
}

} // namespace

QStringList chartKindIds() {
    return {QStringLiteral("family-lift"),
            QStringLiteral("family-harm"),
            QStringLiteral("paired-ratio"),
            QStringLiteral("standing-outcomes"),
            QStringLiteral("ladder"),
            QStringLiteral("speedup-scatter"),
            QStringLiteral("direction-matrix"),
            QStringLiteral("direction-matrix-helped"),
            QStringLiteral("direction-matrix-harmed"),
            QStringLiteral("kbx-category-pass-rate"),
            QStringLiteral("kbx-category-speedup"),
            QStringLiteral("kbx-events")};
}

std::unique_ptr<Chart> makeChart(const QString& kind) {
    switch (chartKindIds().indexOf(kind)) {
    case 0:
        return std::make_unique<FamilyLiftChart>();
    case 1:
        return std::make_unique<FamilyHarmChart>();
    case 2:
        return std::make_unique<PairedRatioChart>();
    case 3:
        return std::make_unique<StandingOutcomesChart>();
    case 4:
        return std::make_unique<LadderChart>();
    case 5:
        return std::make_unique<SpeedupScatterChart>();
    case 6:
        return std::make_unique<DirectionMatrixChart>(DirectionMatrixChart::Measure::Lift);
    case 7:
        return std::make_unique<DirectionMatrixChart>(DirectionMatrixChart::Measure::Helped);
    case 8:
        return std::make_unique<DirectionMatrixChart>(DirectionMatrixChart::Measure::Harmed);
    case 9:
        return std::make_unique<KbxCategoryChart>(KbxCategoryChart::Measure::PassRate);
    case 10:
        return std::make_unique<KbxCategoryChart>(KbxCategoryChart::Measure::Speedup);
    case 11:
        return std::make_unique<KbxEventsChart>();
    default:
        return nullptr;
    }
}

Result<PaperPreset> presetFromWords(const QString& presetName, const QString& size, const QString& font, int dpi) {
    PaperPreset preset = builtInPaperPresets().front();
    if (!presetName.isEmpty() && !size.isEmpty()) {
        return makeError("give either a preset or a size, not both");
    }
    if (!presetName.isEmpty()) {
        const std::vector<PaperPreset> presets = builtInPaperPresets();
        auto found = std::find_if(presets.begin(), presets.end(),
                                  [&](const PaperPreset& known) { return slugOf(known.name) == slugOf(presetName); });
        if (found == presets.end()) {
            return makeError("unknown preset '" + presetName.toStdString() + "'; use " + describePresets() +
                             " or a size such as 85x60mm");
        }
        preset = *found;
    } else if (!size.isEmpty()) {
        static const QRegularExpression sizePattern(
            QStringLiteral("^\\s*([0-9]+(?:\\.[0-9]+)?)\\s*[xX×]\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(mm|in)\\s*$"));
        const QRegularExpressionMatch match = sizePattern.match(size);
        if (!match.hasMatch()) {
            return makeError("size '" + size.toStdString() +
                             "' is not WIDTHxHEIGHT followed by mm or in (e.g. 85x60mm)");
        }
        preset.name = QStringLiteral("Custom");
        preset.width = match.captured(1).toDouble();
        preset.height = match.captured(2).toDouble();
        preset.unit = match.captured(3) == QLatin1String("in") ? PaperUnit::Inches : PaperUnit::Millimetres;
    }
    if (!font.isEmpty()) {
        const qsizetype colon = font.lastIndexOf(QLatin1Char(':'));
        QString family = font;
        if (colon >= 0) {
            bool ok = false;
            const int points = font.mid(colon + 1).toInt(&ok);
            if (!ok) {
                return makeError("font '" + font.toStdString() + "': the size after ':' must be whole points (e.g. " +
                                 "'DejaVu Sans:8')");
            }
            preset.fontPoints = points;
            family = font.left(colon);
        }
        if (!family.trimmed().isEmpty()) {
            preset.fontFamily = family.trimmed();
        }
    }
    if (dpi != 0) {
        preset.pngDpi = dpi;
    }
    if (const QString problem = preset.problem(); !problem.isEmpty()) {
        return makeError("paper preset: " + problem.toStdString());
    }
    return preset;
}

Result<ProjectSnapshot> loadProjectSnapshot(const QString& storePath) {
    auto store = Store::open(std::filesystem::path(storePath.toStdString()), OpenMode::ReadExisting);
    if (!store) {
        return makeError(store.error().message);
    }
    Result<io::LoadedAttempts> attempts = io::loadAttempts(**store, io::AttemptLoadOptions{});
    if (!attempts) {
        return makeError("cannot read the trials of '" + storePath.toStdString() + "': " + attempts.error().message);
    }
    auto trials = (*store)->loadTrials({}, TrialDetail::Full);
    if (!trials) {
        return makeError("cannot read the trials of '" + storePath.toStdString() + "': " + trials.error().message);
    }
    auto categoryOf = io::storedCategoryOf(**store);
    if (!categoryOf) {
        return makeError("cannot read the problems of '" + storePath.toStdString() +
                         "': " + categoryOf.error().message);
    }
    auto agreement = io::loadKbxAgreement(**store, std::nullopt, *categoryOf);
    if (!agreement) {
        return makeError("cannot read the regradings of '" + storePath.toStdString() +
                         "': " + agreement.error().message);
    }
    auto transitions = io::loadKbxTransitions(**store, std::nullopt, *categoryOf);
    if (!transitions) {
        return makeError("cannot read the corpus transitions of '" + storePath.toStdString() +
                         "': " + transitions.error().message);
    }
    ProjectSnapshot snapshot;
    snapshot.storePath = storePath;
    snapshot.kbxTransitions = std::move(transitions.value());
    snapshot.kbxAgreement = std::move(agreement.value());
    snapshot.comparisons = std::move(attempts->comparisons);
    snapshot.trials = std::move(trials.value());
    snapshot.newestFinishedAt = QDateTime::fromSecsSinceEpoch(0, Qt::UTC);
    for (const TrialRecord& trial : snapshot.trials) {
        const QDateTime finished = parseIso(trial.finishedAt);
        if (finished.isValid() && finished > snapshot.newestFinishedAt) {
            snapshot.newestFinishedAt = finished;
        }
    }
    return snapshot;
}

std::vector<analysis::Comparison> filteredComparisons(const ProjectSnapshot& project, const FigureRequest& request) {
    const std::string model = request.model.toStdString();
    const std::string direction = request.direction.toStdString();
    const std::string family = request.family.toStdString();
    std::vector<analysis::Comparison> kept;
    for (const analysis::Comparison& comparison : project.comparisons) {
        if ((model.empty() || comparison.model == model) && (direction.empty() || comparison.direction == direction) &&
            (family.empty() || comparison.family == family)) {
            kept.push_back(comparison);
        }
    }
    return kept;
}

Status renderFigure(const ProjectSnapshot& project, const FigureRequest& request) {
    std::unique_ptr<Chart> chart = makeChart(request.kind);
    if (!chart) {
        return makeError("unknown chart kind '" + request.kind.toStdString() + "'; use one of " +
                         chartKindIds().join(QStringLiteral(", ")).toStdString());
    }
    const QString format = request.format.toLower();
    if (format != QLatin1String("pdf") && format != QLatin1String("svg") && format != QLatin1String("png")) {
        return makeError("unknown format '" + request.format.toStdString() + "'; use pdf, svg or png");
    }
    if (request.output.isEmpty()) {
        return makeError("no output file given");
    }
    // The same size as an on-screen chart, so layout decisions taken at draw time match the view's.
    chart->resize(800, 500);
    if (auto* category = qobject_cast<KbxCategoryChart*>(chart.get())) {
        category->setAgreement(project.kbxAgreement);
    }
    if (auto* events = qobject_cast<KbxEventsChart*>(chart.get())) {
        events->setTransitions(project.kbxTransitions);
    }
    chart->setComparisons(filteredComparisons(project, request), analysis::AnalysisSettings{});
    Status written = format == QLatin1String("pdf")   ? exportChartPdf(*chart, request.output, request.preset)
                     : format == QLatin1String("svg") ? exportChartSvg(*chart, request.output, request.preset)
                                                      : exportChartPng(*chart, request.output, request.preset);
    if (!written) {
        return written;
    }
    if (format == QLatin1String("pdf")) {
        return stampPdf(request.output, project.newestFinishedAt);
    }
    return Ok{};
}

Status stampPdf(const QString& path, const QDateTime& stamp) {
    QFile file(path);
    if (!file.open(QIODevice::ReadWrite)) {
        return makeError("cannot date the PDF '" + path.toStdString() + "': " + file.errorString().toStdString());
    }
    QByteArray bytes = file.readAll();
    // Every PDF date "(D:YYYYMMDDhhmmss" gets the stamp's digits: the same length, so the xref offsets hold.
    const QByteArray digits = stamp.toUTC().toString(QStringLiteral("yyyyMMddhhmmss")).toLatin1();
    const QByteArray marker("(D:");
    qsizetype at = 0;
    while ((at = bytes.indexOf(marker, at)) >= 0) {
        const qsizetype start = at + marker.size();
        qsizetype end = start;
        while (end < bytes.size() && end - start < digits.size() &&
               std::isdigit(static_cast<unsigned char>(bytes[end]))) {
            ++end;
        }
        bytes.replace(start, end - start, digits.left(end - start));
        at = end;
    }
    // A document id (/ID [<hex> <hex>], written by some PDF versions) becomes a hash of the page content's size and
    // the stamp, again of the same length.
    const QByteArray idMarker("/ID [<");
    if (const qsizetype id = bytes.indexOf(idMarker); id >= 0) {
        const QByteArray fill = QByteArray::number(stamp.toSecsSinceEpoch(), 16).rightJustified(32, '0');
        for (qsizetype i = id + idMarker.size(), k = 0; i < bytes.size() && bytes[i] != ']'; ++i) {
            if (std::isxdigit(static_cast<unsigned char>(bytes[i]))) {
                bytes[i] = fill[k++ % fill.size()];
            }
        }
    }
    if (!file.seek(0) || file.write(bytes) != bytes.size()) {
        return makeError("cannot date the PDF '" + path.toStdString() + "': " + file.errorString().toStdString());
    }
    return Ok{};
}

} // namespace mkb::gui::paper
