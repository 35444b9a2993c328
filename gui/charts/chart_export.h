// Paper export of a chart: the preset (size, font, DPI, palette, background), PDF / SVG / PNG files and the
// clipboard, and the presets remembered in QSettings.
#pragma once

#include "core/util/result.h"

#include <QSize>
#include <QSizeF>
#include <QString>
#include <vector>

class QSettings;

namespace mkb::gui {

class Chart;

enum class PaperUnit { Millimetres, Inches };

/// How a figure goes onto paper. Sizes are in `unit`; the font size is in points on paper.
struct PaperPreset {
    QString name = QStringLiteral("Single column");
    double width = 85;
    double height = 60;
    PaperUnit unit = PaperUnit::Millimetres;
    QString fontFamily = QStringLiteral("DejaVu Sans");
    int fontPoints = 8;
    int pngDpi = 300;
    bool forceLightPalette = true;
    bool transparentBackground = false;

    double widthMm() const;
    double heightMm() const;
    /// The page in typographic points (1/72 in), the unit of the vector exports' layout.
    QSizeF sizePoints() const;
    /// The PNG in pixels: size in inches × DPI, rounded.
    QSize pngPixels() const;
    /// An empty string when the preset can be used, else what is wrong with it.
    QString problem() const;
};

/// The presets offered before the user saves any: single column, double column, slide.
std::vector<PaperPreset> builtInPaperPresets();

/// Presets kept under "charts/paperPresets" (user presets replace built-ins of the same name).
std::vector<PaperPreset> loadPaperPresets(QSettings& settings);
void savePaperPresets(QSettings& settings, const std::vector<PaperPreset>& presets);
/// The preset last used for an export, or the first built-in.
PaperPreset loadLastPaperPreset(QSettings& settings);
void saveLastPaperPreset(QSettings& settings, const PaperPreset& preset);

/// Vector PDF with a page of exactly the preset's size.
Status exportChartPdf(Chart& chart, const QString& path, const PaperPreset& preset);
/// SVG whose width and height attributes are the preset's size in mm.
Status exportChartSvg(Chart& chart, const QString& path, const PaperPreset& preset);
/// PNG of preset.pngPixels() pixels carrying the preset's DPI.
Status exportChartPng(Chart& chart, const QString& path, const PaperPreset& preset);
/// By the file's suffix (.pdf, .svg, .png).
Status exportChart(Chart& chart, const QString& path, const PaperPreset& preset);
/// Puts the PNG rendering (with its DPI) and the SVG text on the clipboard.
Status copyChartToClipboard(Chart& chart, const PaperPreset& preset);

} // namespace mkb::gui
