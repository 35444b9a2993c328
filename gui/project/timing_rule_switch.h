// The "Timing rule: paired | unpaired" switch the overview and the comparisons browser share: it sets the project's
// AnalysisSettings::timing (so every view recomputes through the same core functions as `mkb report --timing`) and
// follows changes made elsewhere.
#pragma once

#include <QWidget>

class QComboBox;

namespace mkb::gui {

class ProjectData;

class TimingRuleSwitch : public QWidget {
    Q_OBJECT
public:
    explicit TimingRuleSwitch(QWidget* parent = nullptr);
    /// Follows data's settings and writes the chosen rule into them; data must outlive the switch.
    void setProjectData(ProjectData* data);
    QComboBox* combo() const { return combo_; }

private:
    void syncFromSettings();
    void choose(int index);

    ProjectData* data_ = nullptr;
    QComboBox* combo_ = nullptr;
};

} // namespace mkb::gui
