// PaletteMenu: one checkable action per palette; the choice is stored under appearance/palette.
#include "gui/shell/palette_menu.h"

#include <QAction>
#include <QActionGroup>
#include <QMenu>
#include <QSettings>
#include <utility>

namespace mkb::gui {
namespace {

const QString kPaletteKey = QStringLiteral("appearance/palette");

} // namespace

PaletteMenu::PaletteMenu(QMenu* menu, QObject* parent) : QObject(parent) {
    QMenu* paletteMenu = menu->addMenu(tr("&Palette"));
    paletteMenu->setObjectName(QStringLiteral("paletteMenu"));
    actions_ = new QActionGroup(this);
    actions_->setExclusive(true);
    const std::pair<PaletteChoice, QString> palettes[] = {{PaletteChoice::System, tr("&System")},
                                                          {PaletteChoice::Light, tr("&Light")},
                                                          {PaletteChoice::Dark, tr("&Dark")}};
    for (const auto& [choice, label] : palettes) {
        QAction* action = paletteMenu->addAction(label);
        action->setCheckable(true);
        action->setData(paletteName(choice));
        action->setChecked(choice == currentPalette());
        actions_->addAction(action);
        connect(action, &QAction::triggered, this, [this, choice = choice] { choose(choice); });
    }
}

void PaletteMenu::choose(PaletteChoice choice) {
    applyPalette(choice);
    tick(choice);
    QSettings().setValue(kPaletteKey, paletteName(choice));
}

void PaletteMenu::restore() {
    const auto remembered = paletteNamed(QSettings().value(kPaletteKey, paletteName(PaletteChoice::System)).toString());
    const PaletteChoice choice = remembered.value_or(PaletteChoice::System);
    if (choice != PaletteChoice::System || currentPalette() != PaletteChoice::System) {
        applyPalette(choice);
    }
    tick(choice);
}

void PaletteMenu::tick(PaletteChoice choice) {
    for (QAction* action : actions_->actions()) {
        action->setChecked(action->data().toString() == paletteName(choice));
    }
}

} // namespace mkb::gui
