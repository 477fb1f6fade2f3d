#include "app/qt/qt_messages.h"

#include <QString>
#include <QtGlobal>

#include <cstdio>
#include <cstdlib>

namespace attn {

void quietQtMessages() {
  qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
    if (type == QtFatalMsg || std::getenv("ATTNLAB_QT_DEBUG")) std::fprintf(stderr, "qt: %s\n", qPrintable(msg));
  });
}

}  // namespace attn
