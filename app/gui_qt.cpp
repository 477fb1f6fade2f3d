#include "app/gui_qt.h"

#include "app/qt_messages.h"
#include "engine/error.h"
#include "engine/files.h"

#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QMessageBox>
#include <QTimer>

#include <clocale>
#include <cstdlib>

namespace attn {

struct QtSession::Impl {
  int argc = 1;
  char arg0[8] = "attnlab";
  char* argv[2] = {arg0, nullptr};
  std::unique_ptr<QApplication> app;
};

QtSession::QtSession() : impl_(std::make_unique<Impl>()) {
  // `offscreen` would make a modal never return; the GUI needs real X11.
  setenv("QT_QPA_PLATFORM", "xcb", 1);
  quietQtMessages();
  impl_->app = std::make_unique<QApplication>(impl_->argc, impl_->argv);
  // QApplication calls setlocale(LC_ALL, ""): keep '.' as the decimal point.
  std::setlocale(LC_NUMERIC, "C");
}

QtSession::~QtSession() = default;

void QtSession::processEvents() { QCoreApplication::processEvents(QEventLoop::AllEvents, 1); }

void QtSession::withRepaint(const std::function<void()>& body) {
  QTimer timer;
  timer.setInterval(33);
  QObject::connect(&timer, &QTimer::timeout, [this] {
    if (repaint_) repaint_();
  });
  timer.start();
  body();
  timer.stop();
}

std::optional<std::string> QtSession::openFile(const std::string& title, const std::string& filter) {
  std::optional<std::string> out;
  withRepaint([&] {
    QFileDialog dlg(nullptr, QString::fromStdString(title), QString::fromStdString(last_dir_),
                    QString::fromStdString(filter));
    dlg.setOption(QFileDialog::DontUseNativeDialog);
    dlg.setFileMode(QFileDialog::ExistingFile);
    dlg.setAcceptMode(QFileDialog::AcceptOpen);
    if (dlg.exec() == QDialog::Accepted && !dlg.selectedFiles().isEmpty())
      out = dlg.selectedFiles().front().toStdString();
  });
  if (out) last_dir_ = QFileInfo(QString::fromStdString(*out)).absolutePath().toStdString();
  return out;
}

std::optional<std::string> QtSession::saveFigure(const std::string& suggested_name) {
  std::optional<std::string> out;
  withRepaint([&] {
    QFileDialog dlg(nullptr, "Export figure", QString::fromStdString(last_dir_));
    dlg.setOption(QFileDialog::DontUseNativeDialog);
    dlg.setAcceptMode(QFileDialog::AcceptSave);
    dlg.setFileMode(QFileDialog::AnyFile);
    const QStringList filters = {"PNG image (*.png)", "SVG vector image (*.svg)", "PDF document (*.pdf)"};
    dlg.setNameFilters(filters);
    dlg.selectFile(QString::fromStdString(suggested_name));
    if (dlg.exec() != QDialog::Accepted || dlg.selectedFiles().isEmpty()) return;
    QString path = dlg.selectedFiles().front();
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != "png" && suffix != "svg" && suffix != "pdf") {
      const int i = filters.indexOf(dlg.selectedNameFilter());
      path += i == 1 ? ".svg" : i == 2 ? ".pdf" : ".png";
    }
    out = path.toStdString();
  });
  if (out) last_dir_ = QFileInfo(QString::fromStdString(*out)).absolutePath().toStdString();
  return out;
}

void QtSession::showError(const std::string& title, const std::string& text) {
  withRepaint([&] {
    QMessageBox box(QMessageBox::Warning, QString::fromStdString(title), QString::fromStdString(text), QMessageBox::Ok);
    box.exec();
  });
}

bool savePng(const std::vector<uint8_t>& rgba, int width, int height, const std::string& path, std::string& error) {
  const QImage view(rgba.data(), width, height, width * 4, QImage::Format_RGBA8888);
  TempFile file(path);  // a failure leaves neither a half-written PNG nor the temp file
  // Drop alpha: the default framebuffer's alpha is not meaningful in a file.
  if (!view.convertToFormat(QImage::Format_RGB32).save(QString::fromStdString(file.path().string()), "PNG")) {
    error = "cannot write PNG " + path;
    return false;
  }
  try {
    file.commit();
  } catch (const InputError& e) {
    error = e.what();
    return false;
  }
  return true;
}

}  // namespace attn
