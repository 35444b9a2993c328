// Tests of paper output: mkb-workbench --export-chart for every chart kind and format, --build-paper on the shipped
// manifest (byte-identical rebuilds, provenance, errors naming the entry), embedded PDF fonts, valid SVG, LaTeX
// tables that compile, the palette's lightness spread and category labels that never overlap at the paper presets.
#include "analysis/analysis_fixtures.h"
#include "support/testpaths.h"

#include "core/util/sha256.h"
#include "gui/charts/chart.h"
#include "gui/charts/chart_export.h"
#include "gui/paper/headless_export.h"
#include "gui/paper/paper_build.h"

#include <qcustomplot.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QXmlStreamReader>

#include <cmath>

using namespace mkb;
using namespace mkb::gui;

namespace {

QString workbench() {
    return QString::fromStdString((mkbtest::binaryDir() / "app" / "mkb-workbench").string());
}
QString sourcePath(const QString& relative) {
    return QDir(QString::fromStdString(mkbtest::sourceDir().string())).absoluteFilePath(relative);
}

struct Ran {
    int code = -1;
    QString output;
};

/// Runs mkb-workbench with no display at all (DISPLAY and WAYLAND_DISPLAY unset, no platform chosen).
Ran runWorkbench(const QStringList& arguments) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) {
        environment.remove(QString::fromLatin1(name));
    }
    process.setProcessEnvironment(environment);
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(workbench(), arguments);
    if (!process.waitForFinished(120000)) {
        process.kill();
        return {};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAll())};
}

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

/// CIE L* of a colour (sRGB, D65).
double lightness(const QColor& colour) {
    auto linear = [](double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
    const double y =
        0.2126 * linear(colour.redF()) + 0.7152 * linear(colour.greenF()) + 0.0722 * linear(colour.blueF());
    return y > 0.008856 ? 116 * std::cbrt(y) - 16 : 903.3 * y;
}

/// Six families with long names, as MetaKernelBench's suite has them.
std::vector<analysis::Comparison> sixFamilies() {
    const char* families[] = {"linear_attention",   "mlp_norm",      "convolution",
                              "elementwise_fusion", "gemm_epilogue", "reduction"};
    std::vector<analysis::Comparison> comparisons;
    int problem = 1;
    for (const char* family : families) {
        mkbtest::CellPlace place;
        place.family = family;
        place.problem = problem;
        comparisons.push_back(
            mkbtest::cell(mkbtest::passing(2.0), mkbtest::passing(1.0 + problem * 0.1), mkbtest::passing(1.5), place));
        comparisons.back().problemSlug = std::string(family) + "_p" + std::to_string(problem);
        ++problem;
    }
    return comparisons;
}

bool anyOverlap(const std::vector<QPolygonF>& boxes) {
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        for (std::size_t j = i + 1; j < boxes.size(); ++j) {
            if (boxes[i].intersects(boxes[j])) {
                return true;
            }
        }
    }
    return false;
}

} // namespace

class PaperExportTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY2(QFileInfo(workbench()).isExecutable(), qPrintable(workbench()));
        QVERIFY(QFileInfo(sourcePath("resources/example/reference-cpusim.sqlite")).isFile());
        QVERIFY(dir_.isValid());
        store_ = dir_.filePath("example.sqlite");
        QVERIFY(QFile::copy(sourcePath("resources/example/reference-cpusim.sqlite"), store_));
        QFile::setPermissions(store_, QFile::ReadOwner | QFile::WriteOwner);
        // Read-only opens refuse an older schema: the copy is brought to this build's (a no-op when it is current).
        QProcess migrate;
        migrate.start(QString::fromStdString(mkbtest::cliPath()), {"db", "migrate", "--store", store_});
        QVERIFY(migrate.waitForFinished(60000));
        QVERIFY2(migrate.exitCode() == 0, migrate.readAllStandardError().constData());
    }

    void helpListsEveryChartKindWithoutADisplay() {
        const Ran ran = runWorkbench({"--help"});
        QCOMPARE(ran.code, 0);
        for (const QString& kind : paper::chartKindIds()) {
            QVERIFY2(ran.output.contains(kind), qPrintable(kind));
        }
        QVERIFY(ran.output.contains("--build-paper"));
    }

    void everyChartKindExportsInEveryFormatAtTheRequestedSize() {
        const QStringList kinds = paper::chartKindIds();
        // Six charts, the direction matrix in each of its three measures, the two category charts, the events chart.
        QCOMPARE(kinds.size(), 12);
        for (const QString& kind : kinds) {
            for (const QString& format : {QStringLiteral("pdf"), QStringLiteral("svg"), QStringLiteral("png")}) {
                const QString out = dir_.filePath(kind + "." + format);
                const Ran ran = runWorkbench({"--export-chart", kind, "--size", "90x55mm", "--font", "DejaVu Sans:7",
                                              "--dpi", "200", "--format", format, "--output", out, store_});
                QVERIFY2(ran.code == 0, qPrintable(kind + " " + format + ": " + ran.output));
                const QByteArray bytes = readAll(out);
                QVERIFY2(!bytes.isEmpty(), qPrintable(out));
                if (format == QLatin1String("png")) {
                    const QImage image(out);
                    QCOMPARE(image.size(), QSize(qRound(90 / 25.4 * 200), qRound(55 / 25.4 * 200)));
                    QCOMPARE(image.dotsPerMeterX(), qRound(200 / 0.0254));
                } else if (format == QLatin1String("pdf")) {
                    // 90 x 55 mm is 255.1 x 155.9 pt.
                    const QRegularExpression box(QStringLiteral("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]"));
                    const QRegularExpressionMatch match = box.match(QString::fromLatin1(bytes));
                    QVERIFY2(match.hasMatch(), qPrintable(out));
                    QVERIFY(std::abs(match.captured(1).toDouble() - 255.1) < 1.5);
                    QVERIFY(std::abs(match.captured(2).toDouble() - 155.9) < 1.5);
                    QVERIFY2(bytes.contains("/FontFile2"), "the PDF embeds its font program");
                    QVERIFY2(bytes.contains("DejaVuSans"), "the PDF uses the requested font");
                } else {
                    QXmlStreamReader xml(bytes);
                    QString width;
                    while (!xml.atEnd()) {
                        xml.readNext();
                        if (xml.isStartElement() && xml.name() == QLatin1String("svg")) {
                            width = xml.attributes().value("width").toString();
                        }
                    }
                    QVERIFY2(!xml.hasError(), qPrintable(out + ": " + xml.errorString()));
                    QVERIFY2(width.startsWith("90") || width.startsWith("89.9"), qPrintable(width));
                }
            }
        }
    }

    void pdfFontsAreEmbeddedAsPdffontsReports() {
        const QString pdffonts = QStandardPaths::findExecutable("pdffonts");
        if (pdffonts.isEmpty()) {
            QSKIP("pdffonts (poppler-utils) is not installed; packaging/install-deps.sh installs it");
        }
        const QString out = dir_.filePath("fonts.pdf");
        QCOMPARE(
            runWorkbench({"--export-chart", "family-lift", "--preset", "single-column", "--output", out, store_}).code,
            0);
        QProcess process;
        process.start(pdffonts, {out});
        QVERIFY(process.waitForFinished(30000));
        const QStringList lines = QString::fromUtf8(process.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
        QVERIFY2(lines.size() >= 3, "pdffonts lists at least one font");
        for (const QString& line : lines.mid(2)) {
            // name type encoding emb sub uni object ID: "emb" is the fourth column from the right end's "yes/no".
            const QStringList columns = line.split(' ', Qt::SkipEmptyParts);
            QVERIFY2(columns.size() >= 7, qPrintable(line));
            QVERIFY2(columns[columns.size() - 5] == QLatin1String("yes"), qPrintable("not embedded: " + line));
        }
    }

    void badArgumentsSayWhatIsWrong() {
        Ran ran =
            runWorkbench({"--export-chart", "pie", "--preset", "slide", "--output", dir_.filePath("x.pdf"), store_});
        QCOMPARE(ran.code, 2);
        QVERIFY2(ran.output.contains("unknown chart kind 'pie'") && ran.output.contains("family-lift"),
                 qPrintable(ran.output));
        ran = runWorkbench({"--export-chart", "ladder", "--output", dir_.filePath("x.pdf"), store_});
        QCOMPARE(ran.code, 2);
        QVERIFY2(ran.output.contains("--preset"), qPrintable(ran.output));
        ran = runWorkbench(
            {"--export-chart", "ladder", "--size", "85 by 60", "--output", dir_.filePath("x.pdf"), store_});
        QCOMPARE(ran.code, 2);
        QVERIFY2(ran.output.contains("85 by 60"), qPrintable(ran.output));
        ran = runWorkbench({"--export-chart", "ladder", "--preset", "slide", "--output", dir_.filePath("x.pdf"),
                            dir_.filePath("missing.sqlite")});
        QCOMPARE(ran.code, 4);
        QVERIFY2(ran.output.contains("missing.sqlite"), qPrintable(ran.output));
    }

    void pdfAndSvgCarryTheNewestTrialsDateNotTheClock() {
        const QString first = dir_.filePath("date1.pdf");
        const QString second = dir_.filePath("date2.pdf");
        QCOMPARE(
            runWorkbench({"--export-chart", "ladder", "--preset", "single-column", "--output", first, store_}).code, 0);
        QThread::msleep(1100);
        QCOMPARE(
            runWorkbench({"--export-chart", "ladder", "--preset", "single-column", "--output", second, store_}).code,
            0);
        QCOMPARE(readAll(first), readAll(second));
        Result<paper::ProjectSnapshot> snapshot = paper::loadProjectSnapshot(store_);
        QVERIFY(snapshot);
        const QByteArray expected =
            "/CreationDate (D:" + snapshot->newestFinishedAt.toString("yyyyMMddhhmmss").toLatin1();
        QVERIFY2(readAll(first).contains(expected), expected.constData());
    }

    void theShippedManifestRebuildsByteIdenticallyWithProvenance() {
        // The shipped manifest, copied with its store path pointing at the test's copy.
        QDir().mkpath(dir_.filePath("paper"));
        QJsonObject manifest = QJsonDocument::fromJson(readAll(sourcePath("docs/paper/manifest.json"))).object();
        QVERIFY(!manifest.isEmpty());
        manifest["store"] = store_;
        const QString path = dir_.filePath("paper/manifest.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QJsonDocument(manifest).toJson());
        file.close();

        const QStringList kinds = paper::chartKindIds();
        QStringList outputs;
        for (const QJsonValue figure : manifest["figures"].toArray()) {
            outputs << figure["output"].toString();
        }
        for (const QString& kind : kinds) {
            QVERIFY2(std::any_of(manifest["figures"].toArray().begin(), manifest["figures"].toArray().end(),
                                 [&](const QJsonValue& figure) { return figure["chart"].toString() == kind; }),
                     qPrintable("the manifest rebuilds " + kind));
        }
        for (const QJsonValue table : manifest["tables"].toArray()) {
            outputs << table["output"].toString();
        }
        const Ran first = runWorkbench({"--build-paper", path});
        QVERIFY2(first.code == 0, qPrintable(first.output));
        std::map<QString, QByteArray> before;
        for (const QString& output : outputs) {
            before[output] = readAll(dir_.filePath("paper/" + output));
            QVERIFY2(!before[output].isEmpty(), qPrintable(output));
        }
        QThread::msleep(1100);
        const Ran second = runWorkbench({"--build-paper", path});
        QVERIFY2(second.code == 0, qPrintable(second.output));
        for (const QString& output : outputs) {
            QVERIFY2(readAll(dir_.filePath("paper/" + output)) == before[output], qPrintable(output + " changed"));
        }

        const QJsonObject provenance =
            QJsonDocument::fromJson(readAll(dir_.filePath("paper/" + manifest["provenance"].toString()))).object();
        const QByteArray storeBytes = readAll(store_);
        QCOMPARE(provenance["store"]["sha256"].toString(),
                 QString::fromStdString(sha256Hex(std::string_view(storeBytes.constData(), storeBytes.size()))));
        QVERIFY(!provenance["project"]["commit"].toString().isEmpty());
        QVERIFY(!provenance["grader_fingerprints"].toArray().isEmpty());
        const QJsonArray devices = provenance["devices"].toArray();
        QVERIFY2(!devices.isEmpty(), "the devices the data came from are named");
        QVERIFY(provenance["command"].toArray().contains(QJsonValue("--build-paper")));
        QCOMPARE(provenance["figures"].toArray().size(), manifest["figures"].toArray().size());
        QCOMPARE(provenance["tables"].toArray().size(), manifest["tables"].toArray().size());
        // The example project holds mkb calibrate's calibration of its device.
        const QJsonArray calibrations = provenance["calibrations"].toArray();
        QVERIFY(!calibrations.isEmpty());
        QVERIFY2(devices.contains(calibrations.first()["device_name"]) ||
                     devices.contains(calibrations.first()["device"]),
                 "the calibration is of a device the data came from");
        QCOMPARE(calibrations.first()["methods"].toArray().size(), 2);
    }

    void manifestTablesAreExactlyTheCliReport() {
        const QString out = dir_.filePath("cli.tex");
        QProcess mkb;
        mkb.start(QString::fromStdString(mkbtest::cliPath()),
                  {"report", "--store", store_, "--format", "latex", "--metrics", "ladder,coverage,transfer",
                   "--output", out});
        QVERIFY(mkb.waitForFinished(60000));
        QCOMPARE(mkb.exitCode(), 0);
        QCOMPARE(readAll(dir_.filePath("paper/out/tables/main.tex")), readAll(out));
    }

    void manifestErrorsNameTheEntry() {
        const QString path = dir_.filePath("bad.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"store": "example.sqlite", "figures": [
            {"chart": "ladder", "preset": "slide", "output": "a.pdf"},
            {"chart": "pie", "preset": "slide", "output": "b.pdf"}]})");
        file.close();
        Ran ran = runWorkbench({"--build-paper", path});
        QCOMPARE(ran.code, 2);
        QVERIFY2(ran.output.contains("figure 2 (b.pdf)") && ran.output.contains("unknown chart 'pie'"),
                 qPrintable(ran.output));
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(R"({"store": "example.sqlite", "tables": [{"report": ["--output", "x"], "output": "t.tex"}]})");
        file.close();
        ran = runWorkbench({"--build-paper", path});
        QCOMPARE(ran.code, 2);
        QVERIFY2(ran.output.contains("table 1 (t.tex)") && ran.output.contains("--output"), qPrintable(ran.output));
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(
            R"({"store": "example.sqlite", "tables": [{"report": ["--metrics", "nonsense"], "output": "t.tex"}]})");
        file.close();
        ran = runWorkbench({"--build-paper", path});
        QVERIFY(ran.code != 0);
        QVERIFY2(ran.output.contains("table 1 (t.tex)") && ran.output.contains("nonsense"), qPrintable(ran.output));
    }

    void latexTablesCompileWithBooktabs() {
        const QString pdflatex = QStandardPaths::findExecutable("pdflatex");
        if (pdflatex.isEmpty()) {
            QSKIP("pdflatex is not installed; packaging/install-deps.sh installs texlive-latex-base and "
                  "texlive-latex-recommended");
        }
        const QStringList tables = QDir(dir_.filePath("paper/out/tables")).entryList({"*.tex"});
        QVERIFY(!tables.isEmpty());
        for (const QString& table : tables) {
            const QString document = dir_.filePath("doc-" + table);
            QFile file(document);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[T1]{fontenc}\n"
                       "\\usepackage[utf8]{inputenc}\n\\begin{document}\n\\input{" +
                       dir_.filePath("paper/out/tables/" + table).toUtf8() + "}\n\\end{document}\n");
            file.close();
            QProcess latex;
            latex.setWorkingDirectory(dir_.path());
            latex.start(pdflatex, {"-interaction=nonstopmode", "-halt-on-error", document});
            QVERIFY(latex.waitForFinished(120000));
            QVERIFY2(latex.exitCode() == 0,
                     qPrintable(table + ": " + QString::fromUtf8(latex.readAllStandardOutput()).right(1500)));
        }
    }

    void theExportingGuideShowsTheManifestWorkflow() {
        const QString page = QString::fromUtf8(readAll(sourcePath("docs/guide/exporting.md")));
        QVERIFY(page.contains("mkb-workbench --build-paper docs/paper/manifest.json"));
        QVERIFY(page.contains("provenance.json"));
        for (const QString& kind : paper::chartKindIds()) {
            QVERIFY2(page.contains("`" + kind + "`"), qPrintable(kind));
        }
        // The page's example manifest is one the workbench reads.
        const qsizetype start = page.indexOf("```json\n");
        QVERIFY(start >= 0);
        const qsizetype end = page.indexOf("```", start + 8);
        const QString example = page.mid(start + 8, end - start - 8);
        QDir().mkpath(dir_.filePath("guide"));
        QFile file(dir_.filePath("guide/manifest.json"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(example.toUtf8());
        file.close();
        Result<paper::PaperManifest> manifest = paper::readPaperManifest(file.fileName());
        QVERIFY2(manifest, manifest ? "" : manifest.error().message.c_str());
        QCOMPARE(manifest->figures.size(), std::size_t(2));
        QCOMPARE(manifest->tables.size(), std::size_t(1));
        QCOMPARE(manifest->figures[1].format, QStringLiteral("svg"));
        QCOMPARE(manifest->tables[0].output, dir_.filePath("guide/out/tables/main.tex"));
    }

    void paletteIsOkabeItoAndApartInGrayscale() {
        const QStringList okabeIto = {"#000000", "#e69f00", "#56b4e9", "#009e73",
                                      "#f0e442", "#0072b2", "#d55e00", "#cc79a7"};
        for (const QColor& colour :
             {chartcolors::helped(), chartcolors::harmed(), chartcolors::base(), chartcolors::skill()}) {
            QVERIFY2(okabeIto.contains(colour.name()), qPrintable(colour.name()));
        }
        QCOMPARE(chartcolors::neutral().saturation(), 0); // a grey
        const std::vector<std::vector<QColor>> groups = {
            {chartcolors::helped(), chartcolors::neutral(), chartcolors::harmed()},
            {chartcolors::base(), chartcolors::skill()}};
        for (const auto& group : groups) {
            for (std::size_t i = 0; i < group.size(); ++i) {
                for (std::size_t j = i + 1; j < group.size(); ++j) {
                    const double apart = std::abs(lightness(group[i]) - lightness(group[j]));
                    QVERIFY2(apart >= 15, qPrintable(QString("%1 and %2 differ by L* %3 only")
                                                         .arg(group[i].name(), group[j].name())
                                                         .arg(apart)));
                }
            }
        }
    }

    void neutralMarksAreLightOnADarkScreenAndDarkOnPaper() {
        std::unique_ptr<Chart> chart = paper::makeChart(QStringLiteral("paired-ratio"));
        chart->setComparisons(sixFamilies(), {}); // problem 5: base 1.5, skill 1.5, neutral
        auto neutralColour = [&] {
            for (int i = 0; i < chart->plot()->graphCount(); ++i) {
                if (chart->plot()->graph(i)->name().startsWith(QLatin1String("neutral"))) {
                    return chart->plot()->graph(i)->scatterStyle().brush().color();
                }
            }
            return QColor();
        };
        ChartStyle dark;
        dark.background = QColor(0x20, 0x20, 0x20);
        dark.foreground = QColor(0xee, 0xee, 0xee);
        chart->applyStyle(dark);
        QCOMPARE(neutralColour(), QColor(0xbb, 0xbb, 0xbb));
        chart->applyStyle(paperChartStyle(QStringLiteral("DejaVu Sans"), 8, false));
        QCOMPARE(neutralColour(), chartcolors::neutral());
    }

    void sixFamilyChartsKeepTickLabelsApartAtEveryPaperPreset() {
        const std::vector<analysis::Comparison> comparisons = sixFamilies();
        for (const QString& kind :
             {QStringLiteral("family-lift"), QStringLiteral("family-harm"), QStringLiteral("paired-ratio")}) {
            for (const PaperPreset& preset : builtInPaperPresets()) {
                std::unique_ptr<Chart> chart = paper::makeChart(kind);
                chart->resize(800, 500);
                chart->setComparisons(comparisons, {});
                chart->applyStyle(paperChartStyle(preset.fontFamily, preset.fontPoints, false));
                const QSize page(qRound(preset.sizePoints().width()), qRound(preset.sizePoints().height()));
                // Level labels at this size do collide (so the check below can fail) …
                chart->plot()->xAxis->setTickLabelRotation(0);
                chart->plot()->setViewport(QRect(QPoint(0, 0), page));
                for (const auto phase :
                     {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout}) {
                    chart->plot()->plotLayout()->update(phase); // laid out as a replot would, without refitting
                }
                const bool collideLevel = anyOverlap(chart->categoryLabelBoxes());
                chart->plot()->setViewport(chart->plot()->rect());
                // … and after fitting, laid out at the page size, none does.
                chart->fitCategoryLabels(page);
                chart->plot()->setViewport(QRect(QPoint(0, 0), page));
                chart->plot()->replot(QCustomPlot::rpImmediateRefresh);
                const std::vector<QPolygonF> boxes = chart->categoryLabelBoxes();
                QCOMPARE(boxes.size(), std::size_t(6));
                QVERIFY2(!anyOverlap(boxes), qPrintable(kind + " at " + preset.name));
                // The legend wraps into rows rather than cutting its entries short.
                QVERIFY2(chart->plot()->legend->minimumOuterSizeHint().width() <= page.width(),
                         qPrintable(kind + "'s legend at " + preset.name));
                if (preset.name == QLatin1String("Single column")) {
                    QVERIFY2(collideLevel, qPrintable(kind + ": the fixture's labels should collide when level"));
                }
            }
        }
    }

private:
    QTemporaryDir dir_;
    QString store_;
};

QTEST_MAIN(PaperExportTest)
#include "tst_paper_export.moc"
