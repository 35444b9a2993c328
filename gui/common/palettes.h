// The workbench's colour palettes (system, light, dark): built here, applied application-wide, remembered by name.
#pragma once

#include <QPalette>
#include <QString>
#include <optional>

namespace mkb::gui {

enum class PaletteChoice { System, Light, Dark };

QPalette lightPalette();
QPalette darkPalette();
/// "system", "light" or "dark".
QString paletteName(PaletteChoice choice);
std::optional<PaletteChoice> paletteNamed(const QString& name);
/// Applies the palette to the whole application (Fusion style for light and dark, so every widget follows it).
void applyPalette(PaletteChoice choice);
/// The palette last applied with applyPalette (System before any).
PaletteChoice currentPalette();

} // namespace mkb::gui
