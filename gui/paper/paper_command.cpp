// --export-chart and --build-paper: checks the arguments, loads the store, renders or builds, and reports.
#include "gui/paper/paper_command.h"

#include "core/util/paths.h"
#include "gui/paper/headless_export.h"
#include "gui/paper/paper_build.h"

#include <QFileInfo>
#include <cstdio>

namespace mkb::gui::paper {

namespace {

int fail(int code, const std::string& message) {
    std::fprintf(stderr, "mkb-workbench: %s\n", message.c_str());
    return code;
}

} // namespace

int runExportChart(const PaperCommandLine& command) {
    if (!chartKindIds().contains(command.chartKind)) {
        return fail(kExitUsage, "unknown chart kind '" + command.chartKind.toStdString() + "'; use one of " +
                                    chartKindIds().join(QStringLiteral(", ")).toStdString());
    }
    if (command.output.isEmpty()) {
        return fail(kExitUsage, "--export-chart needs --output FILE");
    }
    if (command.preset.isEmpty() && command.size.isEmpty()) {
        return fail(kExitUsage, "--export-chart needs --preset NAME (single-column, double-column, slide) or "
                                "--size WxHmm");
    }
    Result<PaperPreset> preset = presetFromWords(command.preset, command.size, command.font, command.dpi);
    if (!preset) {
        return fail(kExitUsage, preset.error().message);
    }
    const QString format =
        command.format.isEmpty() ? QFileInfo(command.output).suffix().toLower() : command.format.toLower();
    if (format != QLatin1String("pdf") && format != QLatin1String("svg") && format != QLatin1String("png")) {
        return fail(kExitUsage, "--format must be pdf, svg or png (got '" + format.toStdString() + "')");
    }
    const QString store =
        command.project.isEmpty() ? QString::fromStdString(defaultStorePath().string()) : command.project;
    Result<ProjectSnapshot> project = loadProjectSnapshot(store);
    if (!project) {
        return fail(kExitStore, project.error().message);
    }
    FigureRequest request{command.chartKind, command.model, command.direction, command.family,
                          *preset,           format,        command.output};
    if (Status drawn = renderFigure(*project, request); !drawn) {
        return fail(kExitOutput, drawn.error().message);
    }
    return 0;
}

int runBuildPaper(const PaperCommandLine& command) {
    Result<PaperManifest> manifest = readPaperManifest(command.manifest);
    if (!manifest) {
        return fail(kExitUsage, manifest.error().message);
    }
    PaperBuildOptions options;
    options.storeOverride = command.store;
    options.projectCommit = command.commit;
    options.version = command.version;
    options.commandLine = command.commandLine;
    Result<PaperBuildSummary> built = buildPaper(*manifest, options);
    if (!built) {
        return fail(kExitOutput, built.error().message);
    }
    for (const QString& path : built->written) {
        std::printf("wrote %s\n", qPrintable(path));
    }
    std::printf("wrote %s (provenance)\n", qPrintable(built->provenance));
    return 0;
}

} // namespace mkb::gui::paper
