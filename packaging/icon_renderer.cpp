// Renders the application icon's SVG into the PNG sizes of the hicolor icon theme (run at build time).
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <cstdio>

int main(int argc, char** argv) {
    // No display is needed to paint into an image.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    const QStringList args = QGuiApplication::arguments();
    if (args.size() < 4) {
        std::fprintf(stderr, "usage: mkb-icon-renderer ICON.svg OUTPUT_DIR SIZE...\n"
                             "writes OUTPUT_DIR/SIZExSIZE/apps/<icon name>.png for each SIZE\n");
        return 2;
    }
    QSvgRenderer renderer(args.at(1));
    if (!renderer.isValid()) {
        std::fprintf(stderr, "mkb-icon-renderer: %s is not a readable SVG; check the file\n", qPrintable(args.at(1)));
        return 3;
    }
    const QString name = QFileInfo(args.at(1)).completeBaseName();
    for (qsizetype index = 3; index < args.size(); ++index) {
        bool ok = false;
        const int size = args.at(index).toInt(&ok);
        if (!ok || size <= 0 || size > 1024) {
            std::fprintf(stderr, "mkb-icon-renderer: size '%s' is not a pixel count from 1 to 1024\n",
                         qPrintable(args.at(index)));
            return 2;
        }
        QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        renderer.render(&painter);
        painter.end();
        const QString folder = QStringLiteral("%1/%2x%2/apps").arg(args.at(2)).arg(size);
        const QString file = QStringLiteral("%1/%2.png").arg(folder, name);
        if (!QDir().mkpath(folder) || !image.save(file, "PNG")) {
            std::fprintf(stderr, "mkb-icon-renderer: could not write %s; check the folder is writable\n",
                         qPrintable(file));
            return 1;
        }
    }
    return 0;
}
