// Paper export checked on the files: PDF page size, SVG size in mm, PNG pixels and DPI, transparency; presets kept
// in QSettings; the preset dialog converts units.
#include "gui/charts/chart_export.h"
#include "gui/charts/chart_kinds.h"
#include "gui/charts/paper_preset_dialog.h"

#include "tst_charts_fixtures.h"

#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QMimeData>
#include <QRegularExpression>
#include <QSettings>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <memory>

using namespace mkb::gui;

namespace {

constexpr double kPointsPerMm = 72 / 25.4;

PaperPreset preset(double width, double height, PaperUnit unit = PaperUnit::Millimetres) {
    PaperPreset paper;
    paper.name = QStringLiteral("test");
    paper.width = width;
    paper.height = height;
    paper.unit = unit;
    paper.fontPoints = 8;
    paper.pngDpi = 300;
    return paper;
}

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

/// The MediaBox of the PDF's (only) page as width and height in points; {-1, -1} when absent.
QSizeF mediaBox(const QByteArray& pdf) {
    static const QRegularExpression box(
        QStringLiteral(R"(/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\])"));
    const QRegularExpressionMatch match = box.match(QString::fromLatin1(pdf));
    if (!match.hasMatch()) {
        return {-1, -1};
    }
    return {match.captured(3).toDouble() - match.captured(1).toDouble(),
            match.captured(4).toDouble() - match.captured(2).toDouble()};
}

/// The width and height attributes of the SVG root, in mm; {-1, -1} when not given in mm.
QSizeF svgSizeMm(const QByteArray& svg) {
    QXmlStreamReader reader(svg);
    while (reader.readNextStartElement()) {
        if (reader.name() == QLatin1String("svg")) {
            const QString width = reader.attributes().value(QStringLiteral("width")).toString();
            const QString height = reader.attributes().value(QStringLiteral("height")).toString();
            if (!width.endsWith(QLatin1String("mm")) || !height.endsWith(QLatin1String("mm"))) {
                return {-1, -1};
            }
            return {width.chopped(2).toDouble(), height.chopped(2).toDouble()};
        }
    }
    return {-1, -1};
}

} // namespace

class ChartsExportTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        chart_.resize(640, 400);
        chart_.setComparisons(mkbchartstest::chartComparisons(), {});
    }

    void pdfHasThePageSizeInPoints_data() {
        QTest::addColumn<double>("width");
        QTest::addColumn<double>("height");
        QTest::addColumn<int>("unit");
        QTest::addColumn<double>("expectedWidthPt");
        QTest::addColumn<double>("expectedHeightPt");
        QTest::newRow("85 x 60 mm, landscape") << 85.0 << 60.0 << 0 << 85 * kPointsPerMm << 60 * kPointsPerMm;
        QTest::newRow("60 x 85 mm, portrait") << 60.0 << 85.0 << 0 << 60 * kPointsPerMm << 85 * kPointsPerMm;
        QTest::newRow("3.5 x 2.5 in") << 3.5 << 2.5 << 1 << 252.0 << 180.0;
    }

    void pdfHasThePageSizeInPoints() {
        QFETCH(double, width);
        QFETCH(double, height);
        QFETCH(int, unit);
        QFETCH(double, expectedWidthPt);
        QFETCH(double, expectedHeightPt);
        const QString path = dir_.filePath(QStringLiteral("chart.pdf"));
        const mkb::Status status =
            exportChartPdf(chart_, path, preset(width, height, unit ? PaperUnit::Inches : PaperUnit::Millimetres));
        QVERIFY2(status.ok(), status.ok() ? "" : status.error().message.c_str());
        const QByteArray pdf = readAll(path);
        QVERIFY(pdf.startsWith("%PDF"));
        const QSizeF box = mediaBox(pdf);
        qInfo("PDF MediaBox %.2f x %.2f pt (requested %.2f x %.2f)", box.width(), box.height(), expectedWidthPt,
              expectedHeightPt);
        QVERIFY2(std::abs(box.width() - expectedWidthPt) < 1 && std::abs(box.height() - expectedHeightPt) < 1,
                 qPrintable(QStringLiteral("MediaBox %1 x %2 pt, expected %3 x %4")
                                .arg(box.width())
                                .arg(box.height())
                                .arg(expectedWidthPt)
                                .arg(expectedHeightPt)));
    }

    void svgParsesWithTheRequestedSizeInMm() {
        const QString path = dir_.filePath(QStringLiteral("chart.svg"));
        const mkb::Status status = exportChartSvg(chart_, path, preset(85, 60));
        QVERIFY(status.ok());
        QSvgRenderer renderer(path);
        QVERIFY(renderer.isValid());
        const QSizeF size = svgSizeMm(readAll(path));
        qInfo("SVG %.3f x %.3f mm (requested 85 x 60)", size.width(), size.height());
        QVERIFY2(std::abs(size.width() - 85) < 0.2 && std::abs(size.height() - 60) < 0.2,
                 qPrintable(QStringLiteral("SVG %1 x %2 mm").arg(size.width()).arg(size.height())));
        QVERIFY(readAll(path).contains("S lift by family")); // the title text is in the drawing
    }

    void pngHasThePixelsAndDpiOfThePreset() {
        const QString path = dir_.filePath(QStringLiteral("chart.png"));
        QVERIFY(exportChartPng(chart_, path, preset(85, 60)).ok());
        const QImage image(path);
        // 85 mm / 25.4 × 300 = 1003.9 → 1004; 60 mm → 708.7 → 709.
        QCOMPARE(image.size(), QSize(1004, 709));
        QCOMPARE(image.dotsPerMeterX(), 11811); // 300 / 0.0254
        QCOMPARE(image.dotsPerMeterY(), 11811);
        QCOMPARE(qAlpha(image.pixel(0, 0)), 255); // opaque white by default
        QCOMPARE(QColor(image.pixel(0, 0)), QColor(Qt::white));
        int helpedPixels = 0;
        for (int y = 0; y < image.height(); ++y) {
            for (int x = 0; x < image.width(); ++x) {
                helpedPixels += QColor(image.pixel(x, y)).rgb() == chartcolors::helped().rgb();
            }
        }
        QVERIFY(helpedPixels > 1000); // the +60 bar of moe is drawn at print size
    }

    void pngInInchesAtAnotherDpi() {
        const QString path = dir_.filePath(QStringLiteral("slide.png"));
        PaperPreset slide = preset(4, 3, PaperUnit::Inches);
        slide.pngDpi = 150;
        QVERIFY(exportChartPng(chart_, path, slide).ok());
        const QImage image(path);
        QCOMPARE(image.size(), QSize(600, 450));
        QCOMPARE(image.dotsPerMeterX(), 5906); // 150 / 0.0254 = 5905.5
    }

    void transparentBackgroundLeavesCornersClear() {
        const QString path = dir_.filePath(QStringLiteral("clear.png"));
        PaperPreset clear = preset(85, 60);
        clear.transparentBackground = true;
        QVERIFY(exportChartPng(chart_, path, clear).ok());
        const QImage image(path);
        QVERIFY(image.hasAlphaChannel());
        QCOMPARE(qAlpha(image.pixel(0, 0)), 0);
        QCOMPARE(qAlpha(image.pixel(image.width() - 1, image.height() - 1)), 0);
    }

    /// With MKB_CHART_EXPORT_DIR set, writes every chart in every format there, for looking at by eye.
    void everyChartExportsInEveryFormat() {
        const QString keep = qEnvironmentVariable("MKB_CHART_EXPORT_DIR");
        const QString folder = keep.isEmpty() ? dir_.filePath(QStringLiteral("all")) : keep;
        QVERIFY(QDir().mkpath(folder));
        std::vector<std::unique_ptr<Chart>> charts;
        charts.push_back(std::make_unique<FamilyLiftChart>());
        charts.push_back(std::make_unique<FamilyHarmChart>());
        charts.push_back(std::make_unique<PairedRatioChart>());
        charts.push_back(std::make_unique<StandingOutcomesChart>());
        charts.push_back(std::make_unique<LadderChart>());
        charts.push_back(std::make_unique<SpeedupScatterChart>());
        for (std::size_t i = 0; i < charts.size(); ++i) {
            charts[i]->setComparisons(mkbchartstest::chartComparisons(), {});
            for (const char* suffix : {"pdf", "svg", "png"}) {
                const QString path = folder + QStringLiteral("/chart%1.%2").arg(i).arg(QLatin1String(suffix));
                const mkb::Status status = exportChart(*charts[i], path, preset(85, 60));
                QVERIFY2(status.ok(), status.ok() ? "" : status.error().message.c_str());
                QVERIFY(QFileInfo(path).size() > 1000);
            }
        }
    }

    void exportLeavesTheScreenStyleInPlace() {
        ChartStyle dark;
        dark.background = QColor(30, 30, 30);
        dark.foreground = Qt::white;
        chart_.applyStyle(dark);
        QVERIFY(exportChartPng(chart_, dir_.filePath(QStringLiteral("light.png")), preset(85, 60)).ok());
        QCOMPARE(QImage(dir_.filePath(QStringLiteral("light.png"))).pixelColor(0, 0), QColor(Qt::white));
        QCOMPARE(chart_.style().background, QColor(30, 30, 30));
        chart_.applyStyle(ChartStyle{});
    }

    void badPresetsAndSuffixesAreRefusedWithAReason() {
        const mkb::Status tiny = exportChartPdf(chart_, dir_.filePath(QStringLiteral("tiny.pdf")), preset(0, 60));
        QVERIFY(!tiny.ok());
        QVERIFY(QString::fromStdString(tiny.error().message).contains(QStringLiteral("between 10 mm and 1000 mm")));
        QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("tiny.pdf"))));
        const mkb::Status gif = exportChart(chart_, dir_.filePath(QStringLiteral("chart.gif")), preset(85, 60));
        QVERIFY(!gif.ok());
        QVERIFY(QString::fromStdString(gif.error().message).contains(QStringLiteral(".pdf, .svg or .png")));
        QVERIFY(exportChart(chart_, dir_.filePath(QStringLiteral("by-suffix.SVG")), preset(85, 60)).ok());
    }

    void copyPutsImageAndSvgOnTheClipboard() {
        QVERIFY(copyChartToClipboard(chart_, preset(85, 60)).ok());
        const QMimeData* mime = QGuiApplication::clipboard()->mimeData();
        QVERIFY(mime);
        QVERIFY(mime->hasImage());
        QCOMPARE(qvariant_cast<QImage>(mime->imageData()).size(), QSize(1004, 709));
        QVERIFY(mime->data(QStringLiteral("image/svg+xml")).contains("<svg"));
    }

    void presetsAreRememberedInSettings() {
        QSettings settings(dir_.filePath(QStringLiteral("presets.ini")), QSettings::IniFormat);
        QCOMPARE(loadLastPaperPreset(settings).name, builtInPaperPresets().front().name);
        std::vector<PaperPreset> presets = builtInPaperPresets();
        PaperPreset poster = preset(12, 8, PaperUnit::Inches);
        poster.name = QStringLiteral("Poster");
        poster.fontFamily = QStringLiteral("Serif");
        poster.fontPoints = 20;
        poster.pngDpi = 200;
        poster.transparentBackground = true;
        poster.forceLightPalette = false;
        presets.push_back(poster);
        savePaperPresets(settings, presets);
        saveLastPaperPreset(settings, poster);
        settings.sync();

        QSettings reread(dir_.filePath(QStringLiteral("presets.ini")), QSettings::IniFormat);
        const std::vector<PaperPreset> loaded = loadPaperPresets(reread);
        QCOMPARE(int(loaded.size()), 4);
        const PaperPreset& back = loaded.back();
        QCOMPARE(back.name, QStringLiteral("Poster"));
        QVERIFY(back.unit == PaperUnit::Inches);
        QCOMPARE(back.width, 12.0);
        QCOMPARE(back.fontFamily, QStringLiteral("Serif"));
        QCOMPARE(back.fontPoints, 20);
        QCOMPARE(back.pngDpi, 200);
        QVERIFY(back.transparentBackground);
        QVERIFY(!back.forceLightPalette);
        QCOMPARE(loadLastPaperPreset(reread).name, QStringLiteral("Poster"));
    }

    void dialogConvertsUnitsAndSavesPresets() {
        PaperPresetDialog dialog(preset(85, 60), builtInPaperPresets());
        auto* unit = dialog.findChildren<QComboBox*>().at(1);
        unit->setCurrentIndex(1); // inches
        PaperPreset inches = dialog.preset();
        QVERIFY(inches.unit == PaperUnit::Inches);
        QVERIFY(std::abs(inches.width - 85 / 25.4) < 0.01);
        QVERIFY(std::abs(inches.widthMm() - 85) < 0.3);
        dialog.saveAsPreset(QStringLiteral("Mine"));
        QCOMPARE(int(dialog.presets().size()), 4);
        QCOMPARE(dialog.preset().name, QStringLiteral("Mine"));
        dialog.setPreset(builtInPaperPresets()[1]);
        QCOMPARE(dialog.preset().width, 178.0);
    }

private:
    QTemporaryDir dir_;
    FamilyLiftChart chart_;
};

QTEST_MAIN(ChartsExportTest)
#include "tst_charts_export.moc"
