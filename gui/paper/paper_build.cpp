// The paper build: manifest parsing with errors that name the entry, tables through writeReportTable (the report
// model, in this process), figures through renderFigure, and the provenance file (store SHA-256, commit, graders,
// devices, calibrations, command).
#include "gui/paper/paper_build.h"

#include "gui/paper/paper_table.h"

#include "core/store/store.h"
#include "core/util/json_input.h"
#include "core/util/sha256.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

namespace mkb::gui::paper {

namespace {

using nlohmann::json;

QString absoluteIn(const QString& folder, const QString& path) {
    return QDir::cleanPath(QDir(folder).absoluteFilePath(path));
}

std::string entryName(const char* kind, std::size_t index, const QString& output) {
    return std::string(kind) + " " + std::to_string(index + 1) +
           (output.isEmpty() ? std::string() : " (" + output.toStdString() + ")");
}

/// A string member, empty when absent; an error when present and not a string.
Result<QString> stringField(const json& entry, const char* key, const std::string& where) {
    if (!entry.contains(key) || entry[key].is_null()) {
        return QString();
    }
    if (!entry[key].is_string()) {
        return makeError(where + ": '" + key + "' must be a string");
    }
    return QString::fromStdString(entry[key].get<std::string>());
}

Result<FigureRequest> readFigure(const json& entry, std::size_t index, const QString& folder) {
    const QString rawOutput = entry.is_object() && entry.contains("output") && entry["output"].is_string()
                                  ? QString::fromStdString(entry["output"].get<std::string>())
                                  : QString();
    const std::string where = "manifest " + entryName("figure", index, rawOutput);
    if (!entry.is_object()) {
        return makeError(where + ": must be an object with chart, output and a preset or size");
    }
    for (const auto& [key, value] : entry.items()) {
        static const std::set<std::string> known = {"chart", "model", "direction", "family", "preset",
                                                    "size",  "font",  "dpi",       "format", "output"};
        if (!known.count(key)) {
            return makeError(where + ": unknown field '" + key +
                             "'; use chart, model, direction, family, preset, size, font, dpi, format, output");
        }
    }
    FigureRequest figure;
    QString preset;
    QString size;
    QString font;
    for (auto [key, target] :
         {std::pair{"chart", &figure.kind}, std::pair{"model", &figure.model},
          std::pair{"direction", &figure.direction}, std::pair{"family", &figure.family}, std::pair{"preset", &preset},
          std::pair{"size", &size}, std::pair{"font", &font}, std::pair{"format", &figure.format}}) {
        Result<QString> value = stringField(entry, key, where);
        if (!value) {
            return makeError(value.error().message);
        }
        *target = *value;
    }
    if (rawOutput.isEmpty()) {
        return makeError(where + ": 'output' is missing (the file to write, relative to the manifest)");
    }
    if (figure.kind.isEmpty()) {
        return makeError(where + ": 'chart' is missing; use one of " +
                         chartKindIds().join(QStringLiteral(", ")).toStdString());
    }
    if (!chartKindIds().contains(figure.kind)) {
        return makeError(where + ": unknown chart '" + figure.kind.toStdString() + "'; use one of " +
                         chartKindIds().join(QStringLiteral(", ")).toStdString());
    }
    int dpi = 0;
    if (entry.contains("dpi")) {
        if (!entry["dpi"].is_number_integer()) {
            return makeError(where + ": 'dpi' must be a whole number");
        }
        dpi = entry["dpi"].get<int>();
    }
    if (preset.isEmpty() && size.isEmpty()) {
        return makeError(where + ": give 'preset' (single-column, double-column, slide) or 'size' (e.g. 85x60mm)");
    }
    Result<PaperPreset> paper = presetFromWords(preset, size, font, dpi);
    if (!paper) {
        return makeError(where + ": " + paper.error().message);
    }
    figure.preset = *paper;
    if (figure.format.isEmpty()) {
        figure.format = QFileInfo(rawOutput).suffix().toLower();
    }
    if (figure.format != QLatin1String("pdf") && figure.format != QLatin1String("svg") &&
        figure.format != QLatin1String("png")) {
        return makeError(where + ": format '" + figure.format.toStdString() + "' is not pdf, svg or png");
    }
    figure.output = absoluteIn(folder, rawOutput);
    return figure;
}

Result<TableRequest> readTable(const json& entry, std::size_t index, const QString& folder) {
    const QString rawOutput = entry.is_object() && entry.contains("output") && entry["output"].is_string()
                                  ? QString::fromStdString(entry["output"].get<std::string>())
                                  : QString();
    const std::string where = "manifest " + entryName("table", index, rawOutput);
    if (!entry.is_object()) {
        return makeError(where + ": must be an object with report, format and output");
    }
    for (const auto& [key, value] : entry.items()) {
        if (key != "report" && key != "format" && key != "output") {
            return makeError(where + ": unknown field '" + key + "'; use report, format, output");
        }
    }
    TableRequest table;
    if (entry.contains("report")) {
        if (!entry["report"].is_array()) {
            return makeError(where + ": 'report' must be a list of `mkb report` arguments");
        }
        for (const json& word : entry["report"]) {
            if (!word.is_string()) {
                return makeError(where + ": every 'report' argument must be a string");
            }
            const QString argument = QString::fromStdString(word.get<std::string>());
            for (const char* owned : {"--store", "--output", "--format"}) {
                if (argument == QLatin1String(owned) || argument.startsWith(QLatin1String(owned) + QLatin1Char('='))) {
                    return makeError(where + ": '" + owned +
                                     "' is set by the manifest (store, output, format), not in 'report'");
                }
            }
            table.arguments << argument;
        }
    }
    Result<QString> format = stringField(entry, "format", where);
    if (!format) {
        return makeError(format.error().message);
    }
    if (rawOutput.isEmpty()) {
        return makeError(where + ": 'output' is missing (the file to write, relative to the manifest)");
    }
    table.format = format->isEmpty() ? QStringLiteral("latex") : *format;
    static const QStringList formats = {QStringLiteral("md"), QStringLiteral("csv"), QStringLiteral("latex"),
                                        QStringLiteral("json")};
    if (!formats.contains(table.format)) {
        return makeError(where + ": format '" + table.format.toStdString() + "' is not md, csv, latex or json");
    }
    table.output = absoluteIn(folder, rawOutput);
    return table;
}

Result<std::string> fileSha256(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return makeError("cannot read '" + path.toStdString() + "': " + file.errorString().toStdString());
    }
    const QByteArray bytes = file.readAll();
    return sha256Hex(std::string_view(bytes.constData(), std::size_t(bytes.size())));
}

/// A path as the provenance file gives it: relative to the manifest's folder when inside it.
std::string shown(const QString& folder, const QString& path) {
    const QString relative = QDir(folder).relativeFilePath(path);
    return (relative.startsWith(QLatin1String("..")) ? path : relative).toStdString();
}

json calibrationJson(const CalibrationRecord& calibration) {
    json methods = json::array();
    for (const CalibrationMethodResult& method : calibration.methods) {
        json item = {{"method", method.method},
                     {"delta", method.delta},
                     {"aa_comparisons", method.aaComparisons},
                     {"aa_false_rate", method.falseRate()},
                     {"ab_comparisons", method.abComparisons},
                     {"ab_detection_rate", method.detectionRate()}};
        item["smallest_delta"] = method.smallestDelta ? json(*method.smallestDelta) : json(nullptr);
        methods.push_back(item);
    }
    return {{"id", calibration.id},
            {"device", calibration.device},
            {"device_name", calibration.deviceName},
            {"grader_fingerprint", calibration.graderFingerprint},
            {"selection", calibration.selection},
            {"slowdown", calibration.slowdown},
            {"created_at", calibration.createdAt},
            {"methods", methods}};
}

} // namespace

Result<PaperManifest> readPaperManifest(const QString& path) {
    const QFileInfo info(path);
    Result<json> parsed = readJsonFile(std::filesystem::path(info.absoluteFilePath().toStdString()));
    if (!parsed) {
        return makeError("cannot read the paper manifest: " + parsed.error().message);
    }
    const json& root = *parsed;
    const std::string where = "manifest '" + path.toStdString() + "'";
    if (!root.is_object()) {
        return makeError(where + ": must be a JSON object with figures and tables");
    }
    for (const auto& [key, value] : root.items()) {
        if (key != "store" && key != "provenance" && key != "figures" && key != "tables" && key != "comment") {
            return makeError(where + ": unknown field '" + key + "'; use store, provenance, figures, tables, comment");
        }
    }
    PaperManifest manifest;
    manifest.folder = info.absolutePath();
    for (auto [key, target] : {std::pair{"store", &manifest.store}, std::pair{"provenance", &manifest.provenance}}) {
        Result<QString> value = stringField(root, key, where);
        if (!value) {
            return makeError(value.error().message);
        }
        *target = value->isEmpty() ? QString() : absoluteIn(manifest.folder, *value);
    }
    if (manifest.provenance.isEmpty()) {
        manifest.provenance = absoluteIn(manifest.folder, QStringLiteral("provenance.json"));
    }
    for (const char* list : {"figures", "tables"}) {
        if (root.contains(list) && !root[list].is_array()) {
            return makeError(where + ": '" + list + "' must be a list");
        }
    }
    if (root.contains("figures")) {
        for (std::size_t i = 0; i < root["figures"].size(); ++i) {
            Result<FigureRequest> figure = readFigure(root["figures"][i], i, manifest.folder);
            if (!figure) {
                return makeError(figure.error().message);
            }
            manifest.figures.push_back(*figure);
        }
    }
    if (root.contains("tables")) {
        for (std::size_t i = 0; i < root["tables"].size(); ++i) {
            Result<TableRequest> table = readTable(root["tables"][i], i, manifest.folder);
            if (!table) {
                return makeError(table.error().message);
            }
            manifest.tables.push_back(*table);
        }
    }
    if (manifest.figures.empty() && manifest.tables.empty()) {
        return makeError(where + ": lists no figures and no tables");
    }
    return manifest;
}

Result<PaperBuildSummary> buildPaper(const PaperManifest& manifest, const PaperBuildOptions& options) {
    const QString store =
        options.storeOverride.isEmpty() ? manifest.store : QFileInfo(options.storeOverride).absoluteFilePath();
    if (store.isEmpty()) {
        return makeError("the manifest names no store; add \"store\": \"PATH\" to it or pass --store PATH");
    }
    Result<ProjectSnapshot> project = loadProjectSnapshot(store);
    if (!project) {
        return makeError(project.error().message);
    }
    Result<std::string> storeSha = fileSha256(store);
    if (!storeSha) {
        return makeError(storeSha.error().message);
    }
    PaperBuildSummary summary;
    json tables = json::array();
    for (std::size_t i = 0; i < manifest.tables.size(); ++i) {
        const TableRequest& table = manifest.tables[i];
        const std::string where =
            "manifest " + entryName("table", i, QDir(manifest.folder).relativeFilePath(table.output));
        QDir().mkpath(QFileInfo(table.output).absolutePath());
        if (Status written = writeReportTable(table.arguments, table.format, store, table.output); !written) {
            return makeError(where + ": " + written.error().message);
        }
        Result<std::string> sha = fileSha256(table.output);
        if (!sha) {
            return makeError(where + ": " + sha.error().message);
        }
        json arguments = json::array();
        for (const QString& argument : table.arguments) {
            arguments.push_back(argument.toStdString());
        }
        tables.push_back({{"output", shown(manifest.folder, table.output)},
                          {"format", table.format.toStdString()},
                          {"report", arguments},
                          {"sha256", *sha}});
        summary.written << table.output;
    }
    json figures = json::array();
    for (std::size_t i = 0; i < manifest.figures.size(); ++i) {
        const FigureRequest& figure = manifest.figures[i];
        const std::string where =
            "manifest " + entryName("figure", i, QDir(manifest.folder).relativeFilePath(figure.output));
        QDir().mkpath(QFileInfo(figure.output).absolutePath());
        if (Status drawn = renderFigure(*project, figure); !drawn) {
            return makeError(where + ": " + drawn.error().message);
        }
        Result<std::string> sha = fileSha256(figure.output);
        if (!sha) {
            return makeError(where + ": " + sha.error().message);
        }
        figures.push_back({{"output", shown(manifest.folder, figure.output)},
                           {"chart", figure.kind.toStdString()},
                           {"model", figure.model.toStdString()},
                           {"direction", figure.direction.toStdString()},
                           {"family", figure.family.toStdString()},
                           {"width_mm", figure.preset.widthMm()},
                           {"height_mm", figure.preset.heightMm()},
                           {"font", figure.preset.fontFamily.toStdString()},
                           {"font_points", figure.preset.fontPoints},
                           {"dpi", figure.preset.pngDpi},
                           {"format", figure.format.toStdString()},
                           {"sha256", *sha}});
        summary.written << figure.output;
    }

    // Where the data came from: graders and devices of the live trials' verdicts, and those devices' calibrations.
    std::set<std::string> graders;
    std::set<std::string> devices;
    for (const TrialRecord& trial : project->trials) {
        if (!trial.graderFingerprint.empty()) {
            graders.insert(trial.graderFingerprint);
        }
        if (trial.finalVerdict && !trial.finalVerdict->deviceName.empty()) {
            devices.insert(trial.finalVerdict->deviceName);
        }
    }
    json calibrations = json::array();
    if (auto opened = Store::open(std::filesystem::path(store.toStdString()), OpenMode::ReadExisting)) {
        // The paired re-timings name their device even where a verdict does not (the CPU grader's, for one).
        if (auto retimings = (*opened)->liveRetimings()) {
            for (const RetimingRecord& retiming : *retimings) {
                const RetimingResult& result = retiming.result;
                if (!result.graderFingerprint.empty()) {
                    graders.insert(result.graderFingerprint);
                }
                if (!result.deviceName.empty() || !result.device.empty()) {
                    devices.insert(result.deviceName.empty() ? result.device : result.deviceName);
                }
            }
        }
        if (auto live = (*opened)->liveCalibrations()) {
            for (const CalibrationRecord& calibration : *live) {
                if (devices.empty() || devices.count(calibration.deviceName) || devices.count(calibration.device)) {
                    calibrations.push_back(calibrationJson(calibration));
                }
            }
        }
    }
    json command = json::array();
    for (const QString& word : options.commandLine) {
        command.push_back(word.toStdString());
    }
    const json provenance = {
        {"store", {{"path", shown(manifest.folder, store)}, {"sha256", *storeSha}}},
        {"project", {{"commit", options.projectCommit.toStdString()}, {"version", options.version.toStdString()}}},
        {"grader_fingerprints", json(std::vector<std::string>(graders.begin(), graders.end()))},
        {"devices", json(std::vector<std::string>(devices.begin(), devices.end()))},
        {"calibrations", calibrations},
        {"trials", project->trials.size()},
        {"newest_trial_finished_at", project->newestFinishedAt.toString(Qt::ISODate).toStdString()},
        {"command", command},
        {"tables", tables},
        {"figures", figures},
    };
    QDir().mkpath(QFileInfo(manifest.provenance).absolutePath());
    QSaveFile file(manifest.provenance);
    const std::string text = provenance.dump(2) + "\n";
    if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), qint64(text.size())) != qint64(text.size()) ||
        !file.commit()) {
        return makeError("cannot write the provenance file '" + manifest.provenance.toStdString() +
                         "'; check the folder is writable");
    }
    summary.provenance = manifest.provenance;
    return summary;
}

} // namespace mkb::gui::paper
