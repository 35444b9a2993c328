// Chart export: every format lays the plot out in typographic points (1/72 in) with the paper style, so fonts have
// their size in points on paper; PDF and SVG draw in that unit, PNG scales it to the preset's DPI.
#include "gui/charts/chart_export.h"

#include "gui/charts/chart.h"

#include <qcustomplot.h>

#include <QBuffer>
#include <QClipboard>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QMimeData>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QSettings>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace mkb::gui {

namespace {

constexpr double kMmPerInch = 25.4;
constexpr double kPointsPerInch = 72;
constexpr int kMaxPngSide = 20000;
const char* const kPresetsKey = "charts/paperPresets";
const char* const kLastPresetKey = "charts/lastPaperPreset";

std::string failure(const QString& what, const QString& path, const QString& hint) {
    return (what + QStringLiteral(" '") + path + QStringLiteral("': ") + hint).toStdString();
}

QSize layoutPoints(const PaperPreset& preset) {
    const QSizeF points = preset.sizePoints();
    return {std::max(1, qRound(points.width())), std::max(1, qRound(points.height()))};
}

/// Runs render with the chart in the preset's paper style (category labels turned to fit the page), then gives the
/// chart its screen style back.
bool withPaperStyle(Chart& chart, const PaperPreset& preset, const std::function<bool()>& render) {
    const ChartStyle screen = chart.style();
    chart.applyStyle(
        paperChartStyle(preset.fontFamily, preset.fontPoints, preset.transparentBackground, preset.forceLightPalette));
    chart.fitCategoryLabels(layoutPoints(preset));
    const bool ok = render();
    chart.applyStyle(screen); // its replot fits the labels to the screen again
    return ok;
}

bool renderSvg(Chart& chart, const PaperPreset& preset, QSvgGenerator& generator) {
    const QSize points = layoutPoints(preset);
    generator.setResolution(int(kPointsPerInch));
    generator.setSize(points);
    generator.setViewBox(QRect(QPoint(0, 0), points));
    generator.setTitle(chart.title());
    generator.setDescription(QStringLiteral("MetaKernelBench Workbench chart"));
    return withPaperStyle(chart, preset, [&] {
        QCPPainter painter;
        if (!painter.begin(&generator)) {
            return false;
        }
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNonCosmetic);
        chart.plot()->toPainter(&painter, points.width(), points.height());
        return painter.end();
    });
}

std::optional<QImage> renderPng(Chart& chart, const PaperPreset& preset) {
    const QSize pixels = preset.pngPixels();
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) {
        return std::nullopt;
    }
    const bool ok = withPaperStyle(chart, preset, [&] {
        image.fill(chart.style().background.alpha() == 0 ? QColor(Qt::transparent) : chart.style().background);
        QCPPainter painter;
        if (!painter.begin(&image)) {
            return false;
        }
        painter.setMode(QCPPainter::pmNonCosmetic);
        const double scale = preset.pngDpi / kPointsPerInch;
        painter.scale(scale, scale);
        chart.plot()->toPainter(&painter, std::max(1, qRound(pixels.width() / scale)),
                                std::max(1, qRound(pixels.height() / scale)));
        return painter.end();
    });
    if (!ok) {
        return std::nullopt;
    }
    const int dotsPerMetre = qRound(preset.pngDpi / (kMmPerInch / 1000));
    image.setDotsPerMeterX(dotsPerMetre);
    image.setDotsPerMeterY(dotsPerMetre);
    return image;
}

QString unitName(PaperUnit unit) {
    return unit == PaperUnit::Inches ? QStringLiteral("in") : QStringLiteral("mm");
}

void writePreset(QSettings& settings, const PaperPreset& preset) {
    settings.setValue("name", preset.name);
    settings.setValue("width", preset.width);
    settings.setValue("height", preset.height);
    settings.setValue("unit", unitName(preset.unit));
    settings.setValue("fontFamily", preset.fontFamily);
    settings.setValue("fontPoints", preset.fontPoints);
    settings.setValue("pngDpi", preset.pngDpi);
    settings.setValue("forceLightPalette", preset.forceLightPalette);
    settings.setValue("transparentBackground", preset.transparentBackground);
}

PaperPreset readPreset(const QSettings& settings) {
    PaperPreset preset;
    preset.name = settings.value("name", preset.name).toString();
    preset.width = settings.value("width", preset.width).toDouble();
    preset.height = settings.value("height", preset.height).toDouble();
    preset.unit = settings.value("unit").toString() == QLatin1String("in") ? PaperUnit::Inches : PaperUnit::Millimetres;
    preset.fontFamily = settings.value("fontFamily", preset.fontFamily).toString();
    preset.fontPoints = settings.value("fontPoints", preset.fontPoints).toInt();
    preset.pngDpi = settings.value("pngDpi", preset.pngDpi).toInt();
    preset.forceLightPalette = settings.value("forceLightPalette", preset.forceLightPalette).toBool();
    preset.transparentBackground = settings.value("transparentBackground", preset.transparentBackground).toBool();
    return preset;
}

} // namespace

double PaperPreset::widthMm() const {
    return unit == PaperUnit::Inches ? width * kMmPerInch : width;
}
double PaperPreset::heightMm() const {
    return unit == PaperUnit::Inches ? height * kMmPerInch : height;
}

QSizeF PaperPreset::sizePoints() const {
    return {widthMm() / kMmPerInch * kPointsPerInch, heightMm() / kMmPerInch * kPointsPerInch};
}

QSize PaperPreset::pngPixels() const {
    return {qRound(widthMm() / kMmPerInch * pngDpi), qRound(heightMm() / kMmPerInch * pngDpi)};
}

QString PaperPreset::problem() const {
    if (!(widthMm() >= 10 && widthMm() <= 1000 && heightMm() >= 10 && heightMm() <= 1000)) {
        return QObject::tr("width and height must lie between 10 mm and 1000 mm");
    }
    if (fontPoints < 1 || fontPoints > 72) {
        return QObject::tr("font size must lie between 1 and 72 pt");
    }
    if (pngDpi < 30 || pngDpi > 2400) {
        return QObject::tr("PNG resolution must lie between 30 and 2400 DPI");
    }
    if (pngPixels().width() > kMaxPngSide || pngPixels().height() > kMaxPngSide) {
        return QObject::tr("the PNG would exceed %1 pixels a side; lower the DPI").arg(kMaxPngSide);
    }
    return {};
}

std::vector<PaperPreset> builtInPaperPresets() {
    PaperPreset single;
    PaperPreset twoColumn;
    twoColumn.name = QStringLiteral("Double column");
    twoColumn.width = 178;
    twoColumn.height = 80;
    PaperPreset slide;
    slide.name = QStringLiteral("Slide");
    slide.unit = PaperUnit::Inches;
    slide.width = 10;
    slide.height = 5.625;
    slide.fontPoints = 14;
    slide.pngDpi = 150;
    return {single, twoColumn, slide};
}

std::vector<PaperPreset> loadPaperPresets(QSettings& settings) {
    std::vector<PaperPreset> presets = builtInPaperPresets();
    const int count = settings.beginReadArray(kPresetsKey);
    for (int i = 0; i < count; ++i) {
        settings.setArrayIndex(i);
        const PaperPreset preset = readPreset(settings);
        auto same = std::find_if(presets.begin(), presets.end(),
                                 [&](const PaperPreset& known) { return known.name == preset.name; });
        if (same != presets.end()) {
            *same = preset;
        } else {
            presets.push_back(preset);
        }
    }
    settings.endArray();
    return presets;
}

void savePaperPresets(QSettings& settings, const std::vector<PaperPreset>& presets) {
    settings.remove(kPresetsKey);
    settings.beginWriteArray(kPresetsKey, int(presets.size()));
    for (int i = 0; i < int(presets.size()); ++i) {
        settings.setArrayIndex(i);
        writePreset(settings, presets[std::size_t(i)]);
    }
    settings.endArray();
}

PaperPreset loadLastPaperPreset(QSettings& settings) {
    if (!settings.childGroups().contains(QStringLiteral("charts"))) {
        return builtInPaperPresets().front();
    }
    settings.beginGroup(kLastPresetKey);
    const bool known = settings.contains("name");
    const PaperPreset preset = known ? readPreset(settings) : builtInPaperPresets().front();
    settings.endGroup();
    return preset;
}

void saveLastPaperPreset(QSettings& settings, const PaperPreset& preset) {
    settings.beginGroup(kLastPresetKey);
    writePreset(settings, preset);
    settings.endGroup();
}

Status exportChartPdf(Chart& chart, const QString& path, const PaperPreset& preset) {
    if (const QString problem = preset.problem(); !problem.isEmpty()) {
        return makeError(failure(QObject::tr("cannot export PDF"), path, problem));
    }
    QPdfWriter writer(path);
    writer.setResolution(int(kPointsPerInch));
    writer.setCreator(QStringLiteral("MetaKernelBench Workbench"));
    writer.setTitle(chart.title());
    const bool landscape = preset.widthMm() > preset.heightMm();
    const QSizeF portrait(std::min(preset.widthMm(), preset.heightMm()), std::max(preset.widthMm(), preset.heightMm()));
    const QPageLayout layout(QPageSize(portrait, QPageSize::Millimeter, preset.name, QPageSize::ExactMatch),
                             landscape ? QPageLayout::Landscape : QPageLayout::Portrait, QMarginsF(0, 0, 0, 0));
    if (!writer.setPageLayout(layout)) {
        return makeError(failure(QObject::tr("cannot export PDF"), path, QObject::tr("the page size was refused")));
    }
    const QSize points = layoutPoints(preset);
    const bool ok = withPaperStyle(chart, preset, [&] {
        QCPPainter painter;
        if (!painter.begin(&writer)) {
            return false;
        }
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNonCosmetic);
        chart.plot()->toPainter(&painter, points.width(), points.height());
        return painter.end();
    });
    if (!ok) {
        return makeError(failure(QObject::tr("cannot write PDF"), path, QObject::tr("check the folder is writable")));
    }
    return Ok{};
}

Status exportChartSvg(Chart& chart, const QString& path, const PaperPreset& preset) {
    if (const QString problem = preset.problem(); !problem.isEmpty()) {
        return makeError(failure(QObject::tr("cannot export SVG"), path, problem));
    }
    QSvgGenerator generator;
    generator.setFileName(path);
    if (!renderSvg(chart, preset, generator) || !QFileInfo(path).isFile()) {
        return makeError(failure(QObject::tr("cannot write SVG"), path, QObject::tr("check the folder is writable")));
    }
    return Ok{};
}

Status exportChartPng(Chart& chart, const QString& path, const PaperPreset& preset) {
    if (const QString problem = preset.problem(); !problem.isEmpty()) {
        return makeError(failure(QObject::tr("cannot export PNG"), path, problem));
    }
    const std::optional<QImage> image = renderPng(chart, preset);
    if (!image || !image->save(path, "PNG")) {
        return makeError(failure(QObject::tr("cannot write PNG"), path, QObject::tr("check the folder is writable")));
    }
    return Ok{};
}

Status exportChart(Chart& chart, const QString& path, const PaperPreset& preset) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("pdf")) {
        return exportChartPdf(chart, path, preset);
    }
    if (suffix == QLatin1String("svg")) {
        return exportChartSvg(chart, path, preset);
    }
    if (suffix == QLatin1String("png")) {
        return exportChartPng(chart, path, preset);
    }
    return makeError(
        failure(QObject::tr("cannot export chart to"), path, QObject::tr("name the file .pdf, .svg or .png")));
}

Status copyChartToClipboard(Chart& chart, const PaperPreset& preset) {
    if (const QString problem = preset.problem(); !problem.isEmpty()) {
        return makeError((QObject::tr("cannot copy the chart: ") + problem).toStdString());
    }
    const std::optional<QImage> image = renderPng(chart, preset);
    QByteArray png;
    QBuffer pngBuffer(&png);
    if (!image || !pngBuffer.open(QIODevice::WriteOnly) || !image->save(&pngBuffer, "PNG")) {
        return makeError(
            QObject::tr("cannot copy the chart: rendering the image failed; try a lower DPI").toStdString());
    }
    QByteArray svg;
    QBuffer svgBuffer(&svg);
    QSvgGenerator generator;
    generator.setOutputDevice(&svgBuffer);
    renderSvg(chart, preset, generator);
    auto* mime = new QMimeData;
    mime->setImageData(*image);
    mime->setData(QStringLiteral("image/png"), png);
    if (!svg.isEmpty()) {
        mime->setData(QStringLiteral("image/svg+xml"), svg);
    }
    QGuiApplication::clipboard()->setMimeData(mime);
    return Ok{};
}

} // namespace mkb::gui
