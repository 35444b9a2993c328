// The mkb-workbench entry point: opens the project named on the command line, or the default one, in a window.
#include "core/util/paths.h"
#include "gui/common/palettes.h"
#include "gui/inspector/inspector_view.h"
#include "gui/paper/headless_export.h"
#include "gui/paper/paper_command.h"
#include "gui/project/project_data.h"
#include "gui/shell/main_window.h"
#include "mkb/commit.h"
#include "mkb/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <optional>

namespace {

constexpr int kExitNoProject = 4;             // as the CLI's kExitStore: no project could be opened
constexpr int kScreenshotDelayMs = 400;       // after the background work finished: layouts settle, charts replot
constexpr int kScreenshotIdleWaitMs = 120000; // the longest a screenshot waits for the project to load

std::optional<mkb::gui::MainWindow::View> viewNamed(const QString& name) {
    const QStringList names = {QStringLiteral("overview"), QStringLiteral("transfers"), QStringLiteral("comparisons"),
                               QStringLiteral("charts"),   QStringLiteral("runs"),      QStringLiteral("problems")};
    const auto index = names.indexOf(name.toLower());
    if (index < 0) {
        return std::nullopt;
    }
    return mkb::gui::MainWindow::View(index);
}

/// Whether the command line asks only for the help text or the version (before any "--").
bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (std::strcmp(arg, "--") == 0) {
            return false;
        }
        for (const char* word : {"--help", "-h", "--help-all", "-?", "--version", "-v"}) {
            if (std::strcmp(arg, word) == 0) {
                return true;
            }
        }
    }
    return false;
}

/// Whether the command line asks for a headless paper verb (--export-chart, --build-paper; before any "--"): those
/// draw offscreen and never need a display.
bool asksForPaper(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (std::strcmp(arg, "--") == 0) {
            return false;
        }
        for (const char* word : {"--export-chart", "--build-paper"}) {
            const std::size_t length = std::strlen(word);
            if (std::strncmp(arg, word, length) == 0 && (arg[length] == '\0' || arg[length] == '=')) {
                return true;
            }
        }
    }
    return false;
}

void setIdentity() {
    QCoreApplication::setOrganizationName(QStringLiteral("MetaKernelBench"));
    QCoreApplication::setApplicationName(QStringLiteral("mkb-workbench"));
    QCoreApplication::setApplicationVersion(
        QStringLiteral("%1 (commit %2)").arg(QString::fromLatin1(mkb::kVersion), QString::fromLatin1(mkb::kGitCommit)));
}

} // namespace

int main(int argc, char** argv) {
    // --help and --version print and exit 0 like `mkb --help` / `mkb --version`, on a machine without a display too:
    // a QApplication would need one, so they are answered before it exists, from the same parser.
    std::optional<QCoreApplication> headless;
    std::optional<QApplication> gui;
    if (asksForHelpOrVersion(argc, argv)) {
        headless.emplace(argc, argv);
    } else {
        if (asksForPaper(argc, argv)) {
            qputenv("QT_QPA_PLATFORM", "offscreen"); // figures are drawn offscreen: no display needed
        }
        gui.emplace(argc, argv);
        QApplication::setApplicationDisplayName(QStringLiteral("MetaKernelBench Workbench"));
    }
    setIdentity();

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("MetaKernelBench Workbench: GPU-kernel knowledge transfer between "
                                                    "kernel DSLs."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("PROJECT"),
                                 QStringLiteral("The project store to open (default: %1, created on first start).")
                                     .arg(QString::fromStdString(mkb::defaultStorePath().string())),
                                 QStringLiteral("[PROJECT]"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"),
        QStringLiteral("Save a PNG of the window (1280x800) to FILE once it shows, then exit; a project that "
                       "cannot be opened is then reported on stderr instead of in a dialog."),
        QStringLiteral("FILE"));
    const QCommandLineOption viewOption(
        QStringLiteral("view"),
        QStringLiteral("Start on this view: overview, transfers, comparisons, charts, runs or problems."),
        QStringLiteral("NAME"));
    const QCommandLineOption paletteOption(
        QStringLiteral("palette"),
        QStringLiteral("Use this palette for this start: system, light or dark (default: the one chosen in the View "
                       "menu last time)."),
        QStringLiteral("NAME"));
    parser.addOption(screenshotOption);
    parser.addOption(viewOption);
    parser.addOption(paletteOption);
    const QCommandLineOption exportChartOption(
        QStringLiteral("export-chart"),
        QStringLiteral("Without a window or display: draw the chart KIND of PROJECT and write it to --output, then "
                       "exit. KIND is one of %1. Needs --preset or --size.")
            .arg(mkb::gui::paper::chartKindIds().join(QStringLiteral(", "))),
        QStringLiteral("KIND"));
    const QCommandLineOption modelOption(QStringLiteral("model"), QStringLiteral("Chart only this model."),
                                         QStringLiteral("M"));
    const QCommandLineOption directionOption(QStringLiteral("direction"),
                                             QStringLiteral("Chart only this direction (e.g. triton2cuda)."),
                                             QStringLiteral("D"));
    const QCommandLineOption familyOption(QStringLiteral("family"), QStringLiteral("Chart only this problem family."),
                                          QStringLiteral("F"));
    const QCommandLineOption presetOption(QStringLiteral("preset"),
                                          QStringLiteral("Paper preset: single-column, double-column or slide."),
                                          QStringLiteral("NAME"));
    const QCommandLineOption sizeOption(QStringLiteral("size"),
                                        QStringLiteral("Figure size instead of a preset, e.g. 85x60mm or 3.3x2.4in."),
                                        QStringLiteral("WxH"));
    const QCommandLineOption fontOption(QStringLiteral("font"),
                                        QStringLiteral("Font family and size in points, e.g. 'DejaVu Sans:8'."),
                                        QStringLiteral("FAMILY[:PT]"));
    const QCommandLineOption dpiOption(QStringLiteral("dpi"), QStringLiteral("PNG resolution (default: the preset's)."),
                                       QStringLiteral("N"));
    const QCommandLineOption formatOption(QStringLiteral("format"),
                                          QStringLiteral("pdf, svg or png (default: the output's suffix)."),
                                          QStringLiteral("FMT"));
    const QCommandLineOption outputOption(QStringLiteral("output"), QStringLiteral("The figure file to write."),
                                          QStringLiteral("FILE"));
    const QCommandLineOption buildPaperOption(
        QStringLiteral("build-paper"),
        QStringLiteral("Without a window or display: regenerate every figure and table the paper manifest lists "
                       "(docs/guide/exporting.md), with a provenance file beside them, then exit."),
        QStringLiteral("MANIFEST"));
    const QCommandLineOption storeOption(QStringLiteral("store"),
                                         QStringLiteral("With --build-paper: the store to read instead of the "
                                                        "manifest's."),
                                         QStringLiteral("PATH"));
    parser.addOptions({exportChartOption, modelOption, directionOption, familyOption, presetOption, sizeOption,
                       fontOption, dpiOption, formatOption, outputOption, buildPaperOption, storeOption});
    if (headless) {
        parser.process(*headless); // prints the help or the version and exits 0
        return 0;
    }
    parser.process(*gui);

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        std::fprintf(stderr, "mkb-workbench: give at most one project file; see mkb-workbench --help\n");
        return 2;
    }
    if (parser.isSet(exportChartOption) || parser.isSet(buildPaperOption)) {
        if (parser.isSet(exportChartOption) && parser.isSet(buildPaperOption)) {
            std::fprintf(stderr, "mkb-workbench: give --export-chart or --build-paper, not both\n");
            return 2;
        }
        mkb::gui::paper::PaperCommandLine command;
        command.chartKind = parser.value(exportChartOption);
        command.model = parser.value(modelOption);
        command.direction = parser.value(directionOption);
        command.family = parser.value(familyOption);
        command.preset = parser.value(presetOption);
        command.size = parser.value(sizeOption);
        command.font = parser.value(fontOption);
        if (parser.isSet(dpiOption)) {
            bool ok = false;
            command.dpi = parser.value(dpiOption).toInt(&ok);
            if (!ok || command.dpi <= 0) {
                std::fprintf(stderr, "mkb-workbench: --dpi must be a positive whole number\n");
                return 2;
            }
        }
        command.format = parser.value(formatOption);
        command.output = parser.value(outputOption);
        command.project = positional.isEmpty() ? QString() : positional.first();
        command.manifest = parser.value(buildPaperOption);
        command.store = parser.value(storeOption);
        command.commandLine = QCoreApplication::arguments();
        command.commit = QString::fromLatin1(mkb::kGitCommit);
        command.version = QString::fromLatin1(mkb::kVersion);
        return parser.isSet(exportChartOption) ? mkb::gui::paper::runExportChart(command)
                                               : mkb::gui::paper::runBuildPaper(command);
    }
    std::optional<mkb::gui::MainWindow::View> startView;
    if (parser.isSet(viewOption)) {
        startView = viewNamed(parser.value(viewOption));
        if (!startView) {
            std::fprintf(stderr,
                         "mkb-workbench: unknown view '%s'; use overview, transfers, comparisons, charts, "
                         "runs or problems\n",
                         qPrintable(parser.value(viewOption)));
            return 2;
        }
    }
    const bool screenshot = parser.isSet(screenshotOption);
    std::optional<mkb::gui::PaletteChoice> palette;
    if (parser.isSet(paletteOption)) {
        palette = mkb::gui::paletteNamed(parser.value(paletteOption).toLower());
        if (!palette) {
            std::fprintf(stderr, "mkb-workbench: unknown palette '%s'; use system, light or dark\n",
                         qPrintable(parser.value(paletteOption)));
            return 2;
        }
    }

    mkb::gui::MainWindow window;
    if (screenshot) {
        // Screenshots are reproducible: a fixed size, no saved layout read or written.
        window.setSavesLayoutOnClose(false);
        window.resize(1280, 800);
    } else {
        window.restoreLayout();
    }
    if (palette) {
        mkb::gui::applyPalette(*palette); // this start only: the remembered choice stays
    } else if (!screenshot) {
        window.restorePalette();
    }
    if (startView) {
        window.setShowsWelcome(false); // a view asked for is shown, even for an empty project
        window.showView(*startView);
    }

    // A named project must exist; the default one is created on first start.
    const bool named = !positional.isEmpty();
    const QString path = named ? positional.first() : QString::fromStdString(mkb::defaultStorePath().string());
    const mkb::OpenMode mode = named ? mkb::OpenMode::MustExist : mkb::OpenMode::CreateIfMissing;
    if (screenshot) {
        // Unattended: no dialog, one line on stderr.
        if (const mkb::Status opened = window.loadProject(path, mode); !opened) {
            std::fprintf(stderr, "mkb-workbench: %s\n", opened.error().message.c_str());
            return kExitNoProject;
        }
    } else if (!window.openProject(path, mode)) {
        return kExitNoProject;
    }
    window.show();

    if (screenshot) {
        const QString file = QFileInfo(parser.value(screenshotOption)).absoluteFilePath();
        QTimer::singleShot(0, &window, [&window, file] {
            // Loading runs in the background: wait for it, so the picture shows the data, not a loading view.
            window.waitUntilIdle(kScreenshotIdleWaitMs);
            if (window.currentView() == mkb::gui::MainWindow::View::Transfers) {
                // The inspector shows one comparison: the first where the handed-over skill helped (base failed,
                // skill passed), else the first whose source handed a skill over.
                const mkb::analysis::Comparison* shown = nullptr;
                for (const auto& comparison : window.projectData()->comparisons()) {
                    if (!comparison.resolved() || !comparison.sourceWroteSkill()) {
                        continue;
                    }
                    if (!shown) {
                        shown = &comparison;
                    }
                    if (comparison.skill->passed && !comparison.base->passed) {
                        shown = &comparison;
                        break;
                    }
                }
                if (shown) {
                    window.inspectorView()->setSettings(window.projectData()->settings());
                    window.inspectorView()->showComparison(*shown);
                }
            }
            QTimer::singleShot(kScreenshotDelayMs, &window, [&window, file] {
                QDir().mkpath(QFileInfo(file).absolutePath());
                const bool saved = window.grab().save(file, "PNG");
                if (!saved) {
                    std::fprintf(stderr,
                                 "mkb-workbench: could not write the screenshot %s; check the folder is writable\n",
                                 qPrintable(file));
                }
                QApplication::exit(saved ? 0 : 1);
            });
        });
    }
    return QApplication::exec();
}
