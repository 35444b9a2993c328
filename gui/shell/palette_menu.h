// The View menu's palette choice: system, light or dark, ticked as applied and remembered across sessions.
#pragma once

#include "gui/common/palettes.h"

#include <QObject>

class QActionGroup;
class QMenu;

namespace mkb::gui {

class PaletteMenu : public QObject {
    Q_OBJECT
public:
    /// Adds the "Palette" submenu to menu.
    PaletteMenu(QMenu* menu, QObject* parent);

    /// Applies a palette to the application, ticks it and remembers it.
    void choose(PaletteChoice choice);
    /// Applies the remembered palette (the system one when none was chosen).
    void restore();

private:
    void tick(PaletteChoice choice);

    QActionGroup* actions_ = nullptr;
};

} // namespace mkb::gui
