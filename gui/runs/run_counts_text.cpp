// Wording of a run's totals; the clock format is core's formatDuration, as the terminal display shows it.
#include "gui/runs/run_counts_text.h"

#include <QCoreApplication>

namespace mkb::gui {

QString describeCounts(const ProgressCounts& counts) {
    QString text = QCoreApplication::translate("RunProgress", "%1/%2 done · %3 running · %4 failed · %5 passed")
                       .arg(counts.done)
                       .arg(counts.total)
                       .arg(counts.running)
                       .arg(counts.failed)
                       .arg(counts.passed);
    if (counts.interrupted > 0) {
        text += QCoreApplication::translate("RunProgress", " · %1 interrupted").arg(counts.interrupted);
    }
    text += QCoreApplication::translate("RunProgress", " · %1 elapsed")
                .arg(QString::fromStdString(formatDuration(counts.elapsedSeconds)));
    if (counts.etaSeconds) {
        text += QCoreApplication::translate("RunProgress", " · ETA %1")
                    .arg(QString::fromStdString(formatDuration(*counts.etaSeconds)));
    }
    return text;
}

} // namespace mkb::gui
