// PaperPresetDialog: fields bound to a PaperPreset; switching units converts the size; presets live in QSettings.
#include "gui/charts/paper_preset_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFontComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace mkb::gui {

namespace {
constexpr double kMmPerInch = 25.4;
}

PaperPresetDialog::PaperPresetDialog(const PaperPreset& current, std::vector<PaperPreset> presets, QWidget* parent)
    : QDialog(parent), presets_(std::move(presets)) {
    setWindowTitle(tr("Paper preset"));
    presetCombo_ = new QComboBox(this);
    auto* saveButton = new QPushButton(tr("Save as preset…"), this);
    width_ = new QDoubleSpinBox(this);
    height_ = new QDoubleSpinBox(this);
    for (QDoubleSpinBox* box : {width_, height_}) {
        box->setDecimals(2);
        box->setRange(0.4, 1000);
    }
    unitCombo_ = new QComboBox(this);
    unitCombo_->addItem(tr("mm"));
    unitCombo_->addItem(tr("inches"));
    font_ = new QFontComboBox(this);
    fontPoints_ = new QSpinBox(this);
    fontPoints_->setRange(1, 72);
    fontPoints_->setSuffix(tr(" pt"));
    dpi_ = new QSpinBox(this);
    dpi_->setRange(30, 2400);
    dpi_->setSuffix(tr(" DPI"));
    light_ = new QCheckBox(tr("Force the light palette"), this);
    transparent_ = new QCheckBox(tr("Transparent background"), this);
    summary_ = new QLabel(this);

    auto* presetRow = new QHBoxLayout;
    presetRow->addWidget(presetCombo_, 1);
    presetRow->addWidget(saveButton);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(width_);
    sizeRow->addWidget(new QLabel(QStringLiteral("×"), this));
    sizeRow->addWidget(height_);
    sizeRow->addWidget(unitCombo_);
    auto* form = new QFormLayout;
    form->addRow(tr("Preset"), presetRow);
    form->addRow(tr("Size"), sizeRow);
    form->addRow(tr("Font"), font_);
    form->addRow(tr("Font size"), fontPoints_);
    form->addRow(tr("PNG resolution"), dpi_);
    form->addRow(QString(), light_);
    form->addRow(QString(), transparent_);
    form->addRow(QString(), summary_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    okButton_ = buttons->button(QDialogButtonBox::Ok);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);

    for (const PaperPreset& preset : presets_) {
        presetCombo_->addItem(preset.name);
    }
    setPreset(current);

    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(presetCombo_, &QComboBox::activated, this, &PaperPresetDialog::choosePreset);
    connect(saveButton, &QPushButton::clicked, this, &PaperPresetDialog::askNameAndSave);
    connect(unitCombo_, &QComboBox::currentIndexChanged, this, &PaperPresetDialog::changeUnit);
    for (QDoubleSpinBox* box : {width_, height_}) {
        connect(box, &QDoubleSpinBox::valueChanged, this, &PaperPresetDialog::updateSummary);
    }
    connect(dpi_, &QSpinBox::valueChanged, this, &PaperPresetDialog::updateSummary);
    connect(fontPoints_, &QSpinBox::valueChanged, this, &PaperPresetDialog::updateSummary);
}

PaperPreset PaperPresetDialog::preset() const {
    PaperPreset preset;
    preset.name = name_;
    preset.unit = unit_;
    preset.width = width_->value();
    preset.height = height_->value();
    preset.fontFamily = font_->currentFont().family();
    preset.fontPoints = fontPoints_->value();
    preset.pngDpi = dpi_->value();
    preset.forceLightPalette = light_->isChecked();
    preset.transparentBackground = transparent_->isChecked();
    return preset;
}

void PaperPresetDialog::setPreset(const PaperPreset& preset) {
    name_ = preset.name;
    unit_ = preset.unit;
    const QSignalBlocker blockUnit(unitCombo_);
    unitCombo_->setCurrentIndex(preset.unit == PaperUnit::Inches ? 1 : 0);
    width_->setValue(preset.width);
    height_->setValue(preset.height);
    font_->setCurrentFont(QFont(preset.fontFamily));
    fontPoints_->setValue(preset.fontPoints);
    dpi_->setValue(preset.pngDpi);
    light_->setChecked(preset.forceLightPalette);
    transparent_->setChecked(preset.transparentBackground);
    const int index = presetCombo_->findText(preset.name);
    if (index >= 0) {
        presetCombo_->setCurrentIndex(index);
    }
    updateSummary();
}

void PaperPresetDialog::choosePreset(int index) {
    if (index >= 0 && index < int(presets_.size())) {
        setPreset(presets_[std::size_t(index)]);
    }
}

void PaperPresetDialog::changeUnit() {
    const PaperUnit unit = unitCombo_->currentIndex() == 1 ? PaperUnit::Inches : PaperUnit::Millimetres;
    if (unit == unit_) {
        return;
    }
    const double factor = unit == PaperUnit::Inches ? 1 / kMmPerInch : kMmPerInch;
    unit_ = unit;
    width_->setValue(width_->value() * factor);
    height_->setValue(height_->value() * factor);
    updateSummary();
}

void PaperPresetDialog::updateSummary() {
    const PaperPreset current = preset();
    const QString problem = current.problem();
    if (!problem.isEmpty()) {
        summary_->setText(tr("Cannot export: %1").arg(problem));
    } else {
        summary_->setText(tr("%1 × %2 mm; PNG %3 × %4 px")
                              .arg(current.widthMm(), 0, 'f', 1)
                              .arg(current.heightMm(), 0, 'f', 1)
                              .arg(current.pngPixels().width())
                              .arg(current.pngPixels().height()));
    }
    if (okButton_) {
        okButton_->setEnabled(problem.isEmpty());
    }
}

void PaperPresetDialog::saveAsPreset(const QString& name) {
    PaperPreset current = preset();
    current.name = name;
    auto same =
        std::find_if(presets_.begin(), presets_.end(), [&](const PaperPreset& known) { return known.name == name; });
    if (same != presets_.end()) {
        *same = current;
    } else {
        presets_.push_back(current);
        presetCombo_->addItem(name);
    }
    name_ = name;
    presetCombo_->setCurrentIndex(presetCombo_->findText(name));
}

void PaperPresetDialog::askNameAndSave() {
    bool ok = false;
    const QString name =
        QInputDialog::getText(this, tr("Save preset"), tr("Preset name"), QLineEdit::Normal, name_, &ok).trimmed();
    if (ok && !name.isEmpty()) {
        saveAsPreset(name);
    }
}

bool PaperPresetDialog::edit(QWidget* parent, QSettings& settings, PaperPreset& preset) {
    PaperPresetDialog dialog(preset, loadPaperPresets(settings), parent);
    if (dialog.exec() != QDialog::Accepted) {
        return false;
    }
    preset = dialog.preset();
    savePaperPresets(settings, dialog.presets());
    saveLastPaperPreset(settings, preset);
    return true;
}

} // namespace mkb::gui
