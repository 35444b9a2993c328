// TimingRuleSwitch: a label and a combo whose items carry analysis::TimingRule; choosing one replaces the project's
// settings.timing, and a settings change from anywhere moves the combo without writing back.
#include "gui/project/timing_rule_switch.h"

#include "core/analysis/settings.h"
#include "gui/project/project_data.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>

namespace mkb::gui {

TimingRuleSwitch::TimingRuleSwitch(QWidget* parent) : QWidget(parent) {
    auto* label = new QLabel(tr("Timing rule:"), this);
    combo_ = new QComboBox(this);
    combo_->setObjectName(QStringLiteral("timingRule"));
    label->setBuddy(combo_);
    for (analysis::TimingRule rule : {analysis::TimingRule::Paired, analysis::TimingRule::Unpaired}) {
        combo_->addItem(QString::fromLatin1(analysis::toString(rule)), int(rule));
    }
    combo_->setToolTip(
        tr("paired: a re-timed cell whose kernels both passed is judged on its paired ratio and 95% CI "
           "(docs/metrics.md), the others on the separate gradings; unpaired: MetaKernelBench's rule on the "
           "separate gradings everywhere (mkb report --timing)"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(label);
    layout->addWidget(combo_);
    connect(combo_, &QComboBox::currentIndexChanged, this, &TimingRuleSwitch::choose);
}

void TimingRuleSwitch::setProjectData(ProjectData* data) {
    if (data_) {
        disconnect(data_, nullptr, this, nullptr);
    }
    data_ = data;
    if (data_) {
        connect(data_, &ProjectData::settingsChanged, this, &TimingRuleSwitch::syncFromSettings);
    }
    syncFromSettings();
}

void TimingRuleSwitch::syncFromSettings() {
    const analysis::TimingRule rule = data_ ? data_->settings().timing : analysis::TimingRule::Paired;
    const QSignalBlocker quiet(combo_);
    combo_->setCurrentIndex(combo_->findData(int(rule)));
}

void TimingRuleSwitch::choose(int index) {
    if (!data_ || index < 0) {
        return;
    }
    const auto rule = analysis::TimingRule(combo_->itemData(index).toInt());
    if (rule == data_->settings().timing) {
        return;
    }
    analysis::AnalysisSettings settings = data_->settings();
    settings.timing = rule;
    data_->setSettings(settings);
}

} // namespace mkb::gui
