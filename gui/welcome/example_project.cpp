// Example project: finds the shipped store and copies it once into the user's data folder.
#include "gui/welcome/example_project.h"

#include "core/util/paths.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace mkb::gui {

namespace {

QString fileOf(ExampleProject example) {
    return example == ExampleProject::KbxCorpusH200 ? QStringLiteral("kbx-corpus-h200.sqlite")
                                                    : QStringLiteral("reference-cpusim.sqlite");
}

} // namespace

QString shippedExampleProject(ExampleProject example) {
    return QDir(QString::fromStdString((resourcesDir() / "example").string())).absoluteFilePath(fileOf(example));
}

Result<QString> userExampleProject(ExampleProject example) {
    const QString copy =
        QDir(QString::fromStdString((userDataDir() / "example").string())).absoluteFilePath(fileOf(example));
    if (QFileInfo(copy).isFile()) {
        return copy;
    }
    const QString shipped = shippedExampleProject(example);
    if (!QFileInfo(shipped).isFile()) {
        return makeError("the example project '" + shipped.toStdString() +
                         "' is missing; reinstall mkb-workbench or set MKB_DATA_DIR to the source tree");
    }
    if (!QDir().mkpath(QFileInfo(copy).absolutePath()) || !QFile::copy(shipped, copy)) {
        return makeError("cannot copy the example project to '" + copy.toStdString() +
                         "'; check that the folder is writable");
    }
    QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup | QFile::ReadOther);
    return copy;
}

} // namespace mkb::gui
