// The Runs view's run form: its widgets, and the RunRequest it stands for (request, setRequest).
#include "gui/runs/runs_view.h"

#include "core/catalog/dsl_registry.h"
#include "core/protocol/run_options.h"
#include "core/vocabulary/boundary.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace mkb::gui {
namespace {

/// The DSLs the shipped registry describes (resources/dsls/), read once.
const QStringList& knownDsls() {
    static const QStringList ids = [] {
        QStringList list;
        if (Result<DslRegistry> registry = loadDslRegistry()) {
            for (const std::string& id : registry->ids()) {
                list << QString::fromStdString(id);
            }
        }
        return list;
    }();
    return ids;
}

QString driverTemplate(const QString& driver) {
    if (driver == QLatin1String("command")) {
        return QStringLiteral("{\n  \"command\": \"my-agent --prompt-file {instruction}\"\n}");
    }
    if (driver == QLatin1String("chat")) {
        return QStringLiteral("{\n  \"base_url\": \"http://localhost:8000/v1\",\n  \"model\": \"my-model\",\n"
                              "  \"api_key_env\": \"OPENAI_API_KEY\"\n}");
    }
    return QStringLiteral("{}");
}

QStringList listField(const QLineEdit* edit) {
    QStringList items;
    for (const QString& item : edit->text().split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        if (!item.trimmed().isEmpty()) {
            items << item.trimmed();
        }
    }
    return items;
}

QComboBox* dslCombo(const QString& chosen, QWidget* parent) {
    auto* combo = new QComboBox(parent);
    combo->setEditable(true);
    combo->addItems(knownDsls());
    combo->setCurrentText(chosen);
    return combo;
}

const OptionDeclaration& runOption(const char* name) {
    return *findOption(runOptionDeclarations(), name);
}

/// A whole-number field with mkb run's range for the option, and its help as the tooltip.
void declareSpin(QSpinBox* spin, const char* option) {
    const OptionDeclaration& declaration = runOption(option);
    spin->setRange(static_cast<int>(declaration.minimum), static_cast<int>(declaration.maximum));
    spin->setToolTip(QString::fromStdString(declaration.help + " (mkb run --" + declaration.name + ")"));
}

/// A seconds field: mkb run takes any positive number; the form offers whole seconds up to `most`.
void declareSeconds(QDoubleSpinBox* spin, const char* option, double most) {
    const OptionDeclaration& declaration = runOption(option);
    spin->setRange(std::max(1.0, declaration.minimum), most);
    spin->setToolTip(QString::fromStdString(declaration.help + " (mkb run --" + declaration.name + ")"));
}

} // namespace

QWidget* RunsView::buildForm() {
    auto* form = new QWidget(this);
    auto* layout = new QVBoxLayout(form);
    layout->setContentsMargins(0, 0, 6, 0);

    auto* what = new QGroupBox(tr("Run"), form);
    auto* whatForm = new QFormLayout(what);
    modelEdit_ = new QLineEdit(what);
    modelEdit_->setObjectName(QStringLiteral("runModelEdit"));
    modelEdit_->setPlaceholderText(tr("the model's name in the store"));
    driverCombo_ = new QComboBox(what);
    driverCombo_->setObjectName(QStringLiteral("runDriverCombo"));
    driverCombo_->addItems({QStringLiteral("reference"), QStringLiteral("command"), QStringLiteral("chat")});
    driverSettings_ = new QPlainTextEdit(what);
    driverSettings_->setObjectName(QStringLiteral("runDriverSettings"));
    driverSettings_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    driverSettings_->setPlainText(driverTemplate(QStringLiteral("reference")));
    driverSettings_->setFixedHeight(driverSettings_->fontMetrics().lineSpacing() * 5 + 12);
    driverSettings_->setToolTip(tr("The driver's settings as a JSON object (mkb run --driver-config). Never put a "
                                   "secret here: name the environment variable that holds it."));
    problemsEdit_ = new QLineEdit(QStringLiteral("*"), what);
    problemsEdit_->setObjectName(QStringLiteral("runProblemsEdit"));
    problemsEdit_->setToolTip(tr("A glob over problem names: *, p0[1-3], attention/*"));
    dslACombo_ = dslCombo(QStringLiteral("triton"), what);
    dslACombo_->setObjectName(QStringLiteral("runDslACombo"));
    dslBCombo_ = dslCombo(QStringLiteral("cuda"), what);
    dslBCombo_->setObjectName(QStringLiteral("runDslBCombo"));
    auto* pair = new QHBoxLayout;
    pair->addWidget(dslACombo_, 1);
    pair->addWidget(new QLabel(QStringLiteral("⇄"), what));
    pair->addWidget(dslBCombo_, 1);
    replicatesSpin_ = new QSpinBox(what);
    replicatesSpin_->setObjectName(QStringLiteral("runReplicatesSpin"));
    declareSpin(replicatesSpin_, "replicates");
    whatForm->addRow(tr("&Model:"), modelEdit_);
    whatForm->addRow(tr("&Driver:"), driverCombo_);
    whatForm->addRow(tr("Driver &settings:"), driverSettings_);
    whatForm->addRow(tr("&Problems:"), problemsEdit_);
    whatForm->addRow(tr("DSL pair:"), pair);
    whatForm->addRow(tr("Re&plicates:"), replicatesSpin_);

    const RunRequest defaults; // the form starts at mkb run's declared defaults (the grading ones GradeSettings')
    auto* budget = new QGroupBox(tr("Budget per attempt"), form);
    auto* budgetForm = new QFormLayout(budget);
    wallClockSpin_ = new QDoubleSpinBox(budget);
    wallClockSpin_->setObjectName(QStringLiteral("runWallClockSpin"));
    declareSeconds(wallClockSpin_, "wall-clock", 7 * 24 * 3600);
    wallClockSpin_->setDecimals(0);
    wallClockSpin_->setSuffix(tr(" s"));
    wallClockSpin_->setValue(defaults.wallClockSeconds);
    submissionsSpin_ = new QSpinBox(budget);
    submissionsSpin_->setObjectName(QStringLiteral("runSubmissionsSpin"));
    declareSpin(submissionsSpin_, "submissions");
    submissionsSpin_->setValue(defaults.submissions);
    maxBytesSpin_ = new QSpinBox(budget);
    declareSpin(maxBytesSpin_, "max-kernel-bytes");
    maxBytesSpin_->setValue(defaults.maxKernelBytes);
    maxBytesSpin_->setSuffix(tr(" bytes"));
    budgetForm->addRow(tr("&Wall clock:"), wallClockSpin_);
    budgetForm->addRow(tr("Su&bmissions:"), submissionsSpin_);
    budgetForm->addRow(tr("&Kernel size:"), maxBytesSpin_);

    auto* where = new QGroupBox(tr("Grading"), form);
    auto* whereForm = new QFormLayout(where);
    deviceEdit_ = new QLineEdit(where);
    deviceEdit_->setObjectName(QStringLiteral("runDeviceEdit"));
    deviceEdit_->setPlaceholderText(QStringLiteral("cuda:0"));
    devicesEdit_ = new QLineEdit(where);
    devicesEdit_->setObjectName(QStringLiteral("runDevicesEdit"));
    devicesEdit_->setPlaceholderText(tr("one device (above); all; or cuda:0,cuda:2"));
    devicesEdit_->setToolTip(tr("Grade on several devices at once (mkb run --devices): all = every visible GPU, or a "
                                "comma list. One grader server per device; a device that fails leaves the rotation "
                                "and its gradings run on the others. Empty: the one device above."));
    allDevicesButton_ = new QPushButton(tr("All GPUs"), where);
    allDevicesButton_->setObjectName(QStringLiteral("runAllDevicesButton"));
    allDevicesButton_->setToolTip(tr("Every GPU this host shows (mkb run --devices all)"));
    auto* devicesRow = new QHBoxLayout;
    devicesRow->addWidget(devicesEdit_, 1);
    devicesRow->addWidget(allDevicesButton_);
    devicesNote_ = new QLabel(where);
    devicesNote_->setObjectName(QStringLiteral("runDevicesNote"));
    devicesNote_->setWordWrap(true);
    devicesNote_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    pythonEdit_ = new QLineEdit(where);
    pythonEdit_->setObjectName(QStringLiteral("runPythonEdit"));
    pythonEdit_->setPlaceholderText(tr("$MKB_PYTHON, else python3"));
    concurrencySpin_ = new QSpinBox(where);
    declareSpin(concurrencySpin_, "concurrency");
    concurrencySpin_->setValue(defaults.concurrency);
    gradeTimeoutSpin_ = new QDoubleSpinBox(where);
    declareSeconds(gradeTimeoutSpin_, "grade-timeout", 24 * 3600);
    gradeTimeoutSpin_->setDecimals(0);
    gradeTimeoutSpin_->setSuffix(tr(" s"));
    gradeTimeoutSpin_->setValue(defaults.gradeTimeoutSeconds);
    timingDrawsSpin_ = new QSpinBox(where);
    timingDrawsSpin_->setObjectName(QStringLiteral("runTimingDrawsSpin"));
    declareSpin(timingDrawsSpin_, "timing-draws");
    timingDrawsSpin_->setValue(defaults.timingDraws);
    suitesEdit_ = new QLineEdit(where);
    suitesEdit_->setObjectName(QStringLiteral("runSuitesEdit"));
    suitesEdit_->setPlaceholderText(tr("the shipped suite; folders separated by ;"));
    dslDirsEdit_ = new QLineEdit(where);
    dslDirsEdit_->setObjectName(QStringLiteral("runDslDirsEdit"));
    dslDirsEdit_->setPlaceholderText(tr("extra DSL descriptor folders, separated by ;"));
    rerunStaleCheck_ = new QCheckBox(tr("Archive stale trials and run them again"), where);
    rerunStaleCheck_->setObjectName(QStringLiteral("runRerunStaleCheck"));
    boundaryCombo_ = new QComboBox(where);
    boundaryCombo_->setObjectName(QStringLiteral("runBoundaryCombo"));
    boundaryCombo_->addItems({QString::fromLatin1(mkb::kBoundaryMkb.data(), mkb::kBoundaryMkb.size()),
                              QString::fromLatin1(mkb::kBoundaryStrict.data(), mkb::kBoundaryStrict.size())});
    boundaryCombo_->setToolTip(tr("The implementation boundary graded and stated in the prompt (mkb run --boundary). "
                                  "mkb: MetaKernelBench's rule, eager PyTorch may do part of the work as long as a DSL "
                                  "kernel contributes to the outputs. strict: all arithmetic in the DSL."));
    whereForm->addRow(tr("&Boundary:"), boundaryCombo_);
    whereForm->addRow(tr("De&vice:"), deviceEdit_);
    whereForm->addRow(tr("Devic&es:"), devicesRow);
    whereForm->addRow(devicesNote_);
    whereForm->addRow(tr("P&ython:"), pythonEdit_);
    whereForm->addRow(tr("C&oncurrency:"), concurrencySpin_);
    whereForm->addRow(tr("Grade &timeout:"), gradeTimeoutSpin_);
    whereForm->addRow(tr("Timing dra&ws:"), timingDrawsSpin_);
    whereForm->addRow(tr("S&uites:"), suitesEdit_);
    whereForm->addRow(tr("DSL &folders:"), dslDirsEdit_);
    whereForm->addRow(rerunStaleCheck_);

    auto* executor = new QGroupBox(tr("Executor"), form);
    auto* executorForm = new QFormLayout(executor);
    executorCombo_ = new QComboBox(executor);
    executorCombo_->setObjectName(QStringLiteral("runExecutorCombo"));
    executorCombo_->addItems({QStringLiteral("local"), QStringLiteral("slurm")});
    executorCombo_->setToolTip(tr("local: attempts and gradings run on this host. slurm: each trial is a Slurm job "
                                  "holding one GPU on a node (mkb run --executor slurm)."));
    partitionEdit_ = new QLineEdit(executor);
    partitionEdit_->setObjectName(QStringLiteral("runPartitionEdit"));
    partitionEdit_->setPlaceholderText(tr("the cluster's default"));
    sharedEdit_ = new QLineEdit(executor);
    sharedEdit_->setObjectName(QStringLiteral("runSharedEdit"));
    sharedEdit_->setPlaceholderText(tr("a folder this host and every node see at the same path"));
    sharedEdit_->setToolTip(tr("Batches, shards and job logs go here (mkb run --shared); the store stays on this "
                               "host."));
    executorForm->addRow(tr("E&xecutor:"), executorCombo_);
    executorForm->addRow(tr("P&artition:"), partitionEdit_);
    executorForm->addRow(tr("S&hared folder:"), sharedEdit_);

    layout->addWidget(what);
    layout->addWidget(budget);
    layout->addWidget(where);
    layout->addWidget(executor);
    layout->addStretch(1);

    connect(driverCombo_, &QComboBox::currentTextChanged, this, &RunsView::driverChosen);
    connect(executorCombo_, &QComboBox::currentTextChanged, this, &RunsView::executorChosen);
    connect(devicesEdit_, &QLineEdit::textChanged, this, &RunsView::devicesChanged);
    connect(allDevicesButton_, &QPushButton::clicked, this, [this] { devicesEdit_->setText(QStringLiteral("all")); });
    executorChosen();
    return form;
}

void RunsView::executorChosen() {
    const bool slurm = executorCombo_->currentText() == QLatin1String("slurm");
    partitionEdit_->setEnabled(slurm);
    sharedEdit_->setEnabled(slurm);
    devicesChanged();
}

void RunsView::devicesChanged() {
    // As mkb run refuses --devices with --executor slurm, the form offers it for a local run only.
    const bool slurm = executorCombo_->currentText() == QLatin1String("slurm");
    const QString devices = devicesEdit_->text().trimmed();
    devicesEdit_->setEnabled(!slurm);
    allDevicesButton_->setEnabled(!slurm);
    deviceEdit_->setEnabled(slurm || devices.isEmpty());
    devicesProblem_ = slurm ? QString() : runDevicesProblem(devices, executorCombo_->currentText());
    if (slurm) {
        devicesNote_->setText(tr("A Slurm run grades each trial on the one GPU its job holds; Devices applies to the "
                                 "local executor."));
    } else if (!devicesProblem_.isEmpty()) {
        devicesNote_->setText(tr("Devices: %1").arg(devicesProblem_));
    } else if (!devices.isEmpty()) {
        devicesNote_->setText(tr("One grader server per device; the Device field is not used."));
    } else {
        devicesNote_->clear();
    }
    devicesNote_->setVisible(!devicesNote_->text().isEmpty());
    if (startButton_) {
        updateButtons();
    }
}

void RunsView::driverChosen() {
    // Replace the settings only while they are still some driver's untouched template.
    const QString current = driverSettings_->toPlainText().trimmed();
    for (const QString& driver : {QStringLiteral("reference"), QStringLiteral("command"), QStringLiteral("chat")}) {
        if (current == driverTemplate(driver) || current.isEmpty()) {
            driverSettings_->setPlainText(driverTemplate(driverCombo_->currentText()));
            return;
        }
    }
}

RunRequest RunsView::request() const {
    RunRequest request;
    request.model = modelEdit_->text();
    request.driver = driverCombo_->currentText();
    request.driverSettingsJson = driverSettings_->toPlainText();
    request.problems = problemsEdit_->text();
    request.dslA = dslACombo_->currentText();
    request.dslB = dslBCombo_->currentText();
    request.replicates = replicatesSpin_->value();
    request.suites = listField(suitesEdit_);
    request.dslDirs = listField(dslDirsEdit_);
    const bool slurm = executorCombo_->currentText() == QLatin1String("slurm");
    request.devices = slurm ? QString() : devicesEdit_->text().trimmed();
    request.device = request.devices.isEmpty() ? deviceEdit_->text() : QString();
    request.python = pythonEdit_->text();
    request.wallClockSeconds = wallClockSpin_->value();
    request.submissions = submissionsSpin_->value();
    request.maxKernelBytes = maxBytesSpin_->value();
    request.concurrency = concurrencySpin_->value();
    request.gradeTimeoutSeconds = gradeTimeoutSpin_->value();
    request.timingDraws = timingDrawsSpin_->value();
    request.rerunStale = rerunStaleCheck_->isChecked();
    request.boundary = boundaryCombo_->currentText();
    request.executor = executorCombo_->currentText();
    request.partition = partitionEdit_->text();
    request.sharedFolder = sharedEdit_->text();
    return request;
}

void RunsView::setRequest(const RunRequest& request) {
    modelEdit_->setText(request.model);
    driverCombo_->setCurrentText(request.driver);
    driverSettings_->setPlainText(request.driverSettingsJson);
    problemsEdit_->setText(request.problems);
    dslACombo_->setCurrentText(request.dslA);
    dslBCombo_->setCurrentText(request.dslB);
    replicatesSpin_->setValue(request.replicates);
    suitesEdit_->setText(request.suites.join(QLatin1Char(';')));
    dslDirsEdit_->setText(request.dslDirs.join(QLatin1Char(';')));
    deviceEdit_->setText(request.device);
    devicesEdit_->setText(request.devices);
    pythonEdit_->setText(request.python);
    wallClockSpin_->setValue(request.wallClockSeconds);
    submissionsSpin_->setValue(request.submissions);
    maxBytesSpin_->setValue(request.maxKernelBytes);
    concurrencySpin_->setValue(request.concurrency);
    gradeTimeoutSpin_->setValue(request.gradeTimeoutSeconds);
    timingDrawsSpin_->setValue(request.timingDraws);
    rerunStaleCheck_->setChecked(request.rerunStale);
    const RunRequest defaults;
    boundaryCombo_->setCurrentText(request.boundary.isEmpty() ? defaults.boundary : request.boundary);
    executorCombo_->setCurrentText(request.executor.isEmpty() ? defaults.executor : request.executor);
    partitionEdit_->setText(request.partition);
    sharedEdit_->setText(request.sharedFolder);
}

} // namespace mkb::gui
