// A centred page saying the view becomes available once runs exist, and what it will then show.
#include "gui/shell/pending_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace mkb::gui {

PendingView::PendingView(const QString& title, const QString& whatItShows, QWidget* parent) : QWidget(parent) {
    auto* heading = new QLabel(QStringLiteral("<h2>%1</h2>").arg(title.toHtmlEscaped()), this);
    heading->setAlignment(Qt::AlignCenter);
    auto* body = new QLabel(this);
    body->setObjectName(QStringLiteral("pendingViewText"));
    body->setAlignment(Qt::AlignCenter);
    body->setWordWrap(true);
    body->setTextFormat(Qt::RichText);
    body->setText(tr("<p><b>Available once runs exist.</b></p><p>%1</p>"
                     "<p>Runs are started with <code>mkb run</code> and recorded in this project's store.</p>")
                      .arg(whatItShows.toHtmlEscaped()));

    auto* layout = new QVBoxLayout(this);
    layout->addStretch(1);
    layout->addWidget(heading);
    // Stretches beside the label (not an alignment flag) keep the word-wrapped label's height-for-width honoured.
    auto* centred = new QHBoxLayout;
    centred->addStretch(1);
    centred->addWidget(body, 2);
    centred->addStretch(1);
    layout->addLayout(centred);
    layout->addStretch(2);
}

} // namespace mkb::gui
