// InspectorView's KernelBench-X transition: one corpus step's two rounds as a diff, with theirs and our verdicts.
#include "core/report/report_model.h"
#include "gui/common/diff_view.h"
#include "gui/comparisons/transitions_model.h"
#include "gui/inspector/inspector_view.h"

#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <set>

namespace mkb::gui {

QString InspectorView::transitionHeader(const io::KbxTransition& transition) {
    const analysis::TransitionEvent& event = transition.event;
    const auto esc = [](const std::string& value) { return QString::fromStdString(value).toHtmlEscaped(); };
    const QString before = QString::fromStdString(io::submissionName(transition.theirsBefore, event.beforeIndex));
    const QString after = QString::fromStdString(io::submissionName(transition.theirsAfter, event.afterIndex));
    QString header = tr("<b>%1</b> · %2 · %3 · %4 → %5 · %6")
                         .arg(esc(event.task), esc(event.category.empty() ? "uncategorised" : event.category),
                              esc(transition.model), before, after, esc(event.kinds));
    const auto verdictOf = [](const Verdict& verdict) {
        return TransitionsModel::verdictText(verdict, true).toHtmlEscaped();
    };
    header += tr("<br>Theirs (KernelBench-X): %1 %2 · %3 %4")
                  .arg(before, verdictOf(transition.theirsBefore), after, verdictOf(transition.theirsAfter));
    std::set<std::string> boundaries;
    for (const auto& side : {transition.oursBefore, transition.oursAfter}) {
        for (const auto& [boundary, verdict] : side) {
            boundaries.insert(boundary);
        }
    }
    for (const std::string& boundary : boundaries) {
        const auto ours = [&](const std::map<std::string, Verdict>& side) {
            const auto found = side.find(boundary);
            return found == side.end() ? tr("not regraded") : verdictOf(found->second);
        };
        header += tr("<br>Ours (%1): %2 %3 · %4 %5")
                      .arg(esc(boundary), before, ours(transition.oursBefore), after, ours(transition.oursAfter));
    }
    if (boundaries.empty()) {
        header += tr("<br>Ours: not regraded (mkb regrade)");
    }
    const QString claimed =
        event.claimedRatio ? tr("claimed after/before %1").arg(*event.claimedRatio, 0, 'f', 3) : tr("no claimed ratio");
    const QString paired = event.paired ? tr("paired after/before %1, 95% CI [%2, %3] (%4 rounds)")
                                              .arg(event.paired->ratio, 0, 'f', 3)
                                              .arg(event.paired->ciLow, 0, 'f', 3)
                                              .arg(event.paired->ciHigh, 0, 'f', 3)
                                              .arg(event.paired->n)
                                        : tr("not paired-timed");
    header += tr("<br>%1 · %2 · standing: <b>%3</b>").arg(claimed, paired, esc(io::standingText(event)));
    return header;
}

void InspectorView::showTransition(const io::KbxTransition& transition) {
    clear();
    headline_->setText(transitionHeader(transition));
    kernelPairCombo_->setVisible(false);
    const analysis::TransitionEvent& event = transition.event;
    diff_->setTexts(QString::fromStdString(io::submissionName(transition.theirsBefore, event.beforeIndex)),
                    QString::fromStdString(transition.beforeKernel),
                    QString::fromStdString(io::submissionName(transition.theirsAfter, event.afterIndex)),
                    QString::fromStdString(transition.afterKernel));
    QString reports;
    const auto section = [&reports](const QString& title, const Verdict& verdict) {
        reports += QStringLiteral("== %1 ==\n%2\n\n").arg(title, QString::fromStdString(verdict.json));
    };
    section(tr("theirs, before"), transition.theirsBefore);
    section(tr("theirs, after"), transition.theirsAfter);
    for (const auto& [boundary, verdict] : transition.oursBefore) {
        section(tr("ours (%1), before").arg(QString::fromStdString(boundary)), verdict);
    }
    for (const auto& [boundary, verdict] : transition.oursAfter) {
        section(tr("ours (%1), after").arg(QString::fromStdString(boundary)), verdict);
    }
    reports_->setPlainText(reports);
    tabs_->setCurrentIndex(1);
}

} // namespace mkb::gui
