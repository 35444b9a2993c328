// Small problem suites written by the tests into temporary folders, so GUI suites know exactly what to expect.
#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>

namespace mkbguitest {

inline bool writeFile(const QString& path, const QByteArray& content) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        return false;
    }
    return file.write(content) == content.size();
}

inline QByteArray problemSource(const QByteArray& title, const QByteArray& tags) {
    return "\"\"\"" + title +
           "\"\"\"\n"
           "import torch\n\n"
           "MKB_META = {\"tags\": [" +
           tags +
           "]}\n\n"
           "def make_inputs(device=\"cuda\"):\n"
           "    return [torch.randn(64, 64, device=device)]\n\n"
           "def reference(x):\n"
           "    # a comment with \"quotes\"\n"
           "    return torch.relu(x) * 2.0\n";
}

/// Writes a suite of four problems in three families under root, plus one malformed file and solutions:
/// 01 attention (triton, cuda), 02 attention (none), 03 moe (cuda), 04 mlp_norm (none); bad: moe/05_broken.py.
inline bool writeFixtureSuite(const QString& root) {
    return writeFile(root + "/attention/01_gqa_decode.py",
                     problemSource("Grouped-query attention decode", "\"gather\"")) &&
           writeFile(root + "/attention/02_sliding_window.py",
                     problemSource("Sliding-window attention prefill", "\"reduction\", \"mask\"")) &&
           writeFile(root + "/moe/03_topk_router.py", problemSource("Top-2 router with softmax", "\"scan\"")) &&
           writeFile(root + "/mlp_norm/04_rms_norm.py", problemSource("Fused residual RMSNorm", "\"reduction\"")) &&
           writeFile(root + "/moe/05_broken.py", "def reference(x):\n    return x\n") &&
           writeFile(root + "/attention/_solutions/01_gqa_decode.triton.py", "# solution\n") &&
           writeFile(root + "/attention/_solutions/01_gqa_decode.cuda.py", "# solution\n") &&
           writeFile(root + "/moe/_solutions/03_topk_router.cuda.py", "# solution\n");
}

} // namespace mkbguitest
