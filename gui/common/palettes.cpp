// Light and dark palettes with enough contrast for tables and code; the system one is whatever the style offers.
#include "gui/common/palettes.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

namespace mkb::gui {
namespace {

PaletteChoice applied = PaletteChoice::System;
QString systemStyleName;

} // namespace

QPalette lightPalette() {
    QPalette palette;
    palette.setColor(QPalette::Window, QColor(0xf3, 0xf3, 0xf3));
    palette.setColor(QPalette::WindowText, QColor(0x1e, 0x1e, 0x1e));
    palette.setColor(QPalette::Base, Qt::white);
    palette.setColor(QPalette::AlternateBase, QColor(0xf0, 0xf4, 0xf8));
    palette.setColor(QPalette::ToolTipBase, QColor(0xff, 0xff, 0xe8));
    palette.setColor(QPalette::ToolTipText, QColor(0x1e, 0x1e, 0x1e));
    palette.setColor(QPalette::PlaceholderText, QColor(0x80, 0x80, 0x80));
    palette.setColor(QPalette::Text, QColor(0x1e, 0x1e, 0x1e));
    palette.setColor(QPalette::Button, QColor(0xe8, 0xe8, 0xe8));
    palette.setColor(QPalette::ButtonText, QColor(0x1e, 0x1e, 0x1e));
    palette.setColor(QPalette::BrightText, Qt::red);
    palette.setColor(QPalette::Link, QColor(0x1f, 0x6f, 0xb4));
    palette.setColor(QPalette::Highlight, QColor(0x30, 0x7b, 0xc8));
    palette.setColor(QPalette::HighlightedText, Qt::white);
    palette.setColor(QPalette::Disabled, QPalette::Text, QColor(0xa0, 0xa0, 0xa0));
    palette.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0xa0, 0xa0, 0xa0));
    palette.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0xa0, 0xa0, 0xa0));
    return palette;
}

QPalette darkPalette() {
    QPalette palette;
    palette.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x30));
    palette.setColor(QPalette::WindowText, QColor(0xdf, 0xe1, 0xe5));
    palette.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
    palette.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
    palette.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3f, 0x41));
    palette.setColor(QPalette::ToolTipText, QColor(0xdf, 0xe1, 0xe5));
    palette.setColor(QPalette::PlaceholderText, QColor(0x86, 0x8a, 0x91));
    palette.setColor(QPalette::Text, QColor(0xdf, 0xe1, 0xe5));
    palette.setColor(QPalette::Button, QColor(0x3c, 0x3f, 0x41));
    palette.setColor(QPalette::ButtonText, QColor(0xdf, 0xe1, 0xe5));
    palette.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x68));
    palette.setColor(QPalette::Link, QColor(0x58, 0x9d, 0xf6));
    palette.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    palette.setColor(QPalette::HighlightedText, Qt::white);
    palette.setColor(QPalette::Disabled, QPalette::Text, QColor(0x6f, 0x73, 0x7a));
    palette.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x6f, 0x73, 0x7a));
    palette.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x6f, 0x73, 0x7a));
    return palette;
}

QString paletteName(PaletteChoice choice) {
    switch (choice) {
    case PaletteChoice::Light:
        return QStringLiteral("light");
    case PaletteChoice::Dark:
        return QStringLiteral("dark");
    case PaletteChoice::System:
        break;
    }
    return QStringLiteral("system");
}

std::optional<PaletteChoice> paletteNamed(const QString& name) {
    for (PaletteChoice choice : {PaletteChoice::System, PaletteChoice::Light, PaletteChoice::Dark}) {
        if (paletteName(choice) == name) {
            return choice;
        }
    }
    return std::nullopt;
}

void applyPalette(PaletteChoice choice) {
    if (systemStyleName.isEmpty() && QApplication::style()) {
        systemStyleName = QApplication::style()->name();
    }
    if (choice == PaletteChoice::System) {
        if (!systemStyleName.isEmpty()) {
            QApplication::setStyle(QStyleFactory::create(systemStyleName));
        }
        QApplication::setPalette(QApplication::style()->standardPalette());
    } else {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(choice == PaletteChoice::Dark ? darkPalette() : lightPalette());
    }
    applied = choice;
}

PaletteChoice currentPalette() {
    return applied;
}

} // namespace mkb::gui
