// The paper preset dialog: figure size in mm or inches, font, PNG DPI, palette and background, named presets.
#pragma once

#include "gui/charts/chart_export.h"

#include <QDialog>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFontComboBox;
class QLabel;
class QPushButton;
class QSettings;
class QSpinBox;

namespace mkb::gui {

class PaperPresetDialog : public QDialog {
    Q_OBJECT
public:
    PaperPresetDialog(const PaperPreset& current, std::vector<PaperPreset> presets, QWidget* parent = nullptr);

    /// The preset as the fields describe it now.
    PaperPreset preset() const;
    /// The named presets, including any the user saved in this dialog.
    const std::vector<PaperPreset>& presets() const { return presets_; }
    void setPreset(const PaperPreset& preset);
    /// Stores the fields under this name (replacing a preset of the same name) and selects it.
    void saveAsPreset(const QString& name);

    /// Runs the dialog over the presets kept in settings; on OK stores presets and the chosen one, returns true.
    static bool edit(QWidget* parent, QSettings& settings, PaperPreset& preset);

private:
    void choosePreset(int index);
    void changeUnit();
    void updateSummary();
    void askNameAndSave();

    std::vector<PaperPreset> presets_;
    QString name_;
    PaperUnit unit_ = PaperUnit::Millimetres;
    QComboBox* presetCombo_ = nullptr;
    QDoubleSpinBox* width_ = nullptr;
    QDoubleSpinBox* height_ = nullptr;
    QComboBox* unitCombo_ = nullptr;
    QFontComboBox* font_ = nullptr;
    QSpinBox* fontPoints_ = nullptr;
    QSpinBox* dpi_ = nullptr;
    QCheckBox* light_ = nullptr;
    QCheckBox* transparent_ = nullptr;
    QLabel* summary_ = nullptr;
    QPushButton* okButton_ = nullptr;
};

} // namespace mkb::gui
