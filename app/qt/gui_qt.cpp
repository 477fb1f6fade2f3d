#include "app/qt/gui_qt.h"

#include "app/qt/qt_messages.h"
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/files.h"

#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
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

namespace {

// A save dialog offering `filters` ({"PNG image", "png"}, …): a name without
// one of their suffixes gets the chosen filter's.
std::optional<std::string> saveDialog(const std::string& title, const std::string& dir, const std::string& suggested_name,
                                      const std::vector<std::pair<QString, QString>>& filters) {
  QFileDialog dlg(nullptr, QString::fromStdString(title), QString::fromStdString(dir));
  dlg.setOption(QFileDialog::DontUseNativeDialog);
  dlg.setAcceptMode(QFileDialog::AcceptSave);
  dlg.setFileMode(QFileDialog::AnyFile);
  QStringList names;
  for (const auto& [label, suffix] : filters) names << label + " (*." + suffix + ")";
  dlg.setNameFilters(names);
  dlg.selectFile(QString::fromStdString(suggested_name));
  if (dlg.exec() != QDialog::Accepted || dlg.selectedFiles().isEmpty()) return std::nullopt;
  QString path = dlg.selectedFiles().front();
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (std::none_of(filters.begin(), filters.end(), [&](const auto& f) { return f.second == suffix; }))
    path += "." + filters[static_cast<size_t>(std::max<qsizetype>(0, names.indexOf(dlg.selectedNameFilter())))].second;
  return path.toStdString();
}

}  // namespace

std::optional<std::string> QtSession::saveFigure(const std::string& suggested_name) {
  std::optional<std::string> out;
  withRepaint([&] {
    out = saveDialog("Export figure", last_dir_, suggested_name,
                     {{"PNG image", "png"}, {"SVG vector image", "svg"}, {"PDF document", "pdf"}});
  });
  if (out) last_dir_ = QFileInfo(QString::fromStdString(*out)).absolutePath().toStdString();
  return out;
}

std::optional<std::string> QtSession::savePage(const std::string& suggested_name) {
  std::optional<std::string> out;
  withRepaint([&] { out = saveDialog("Export page", last_dir_, suggested_name, {{"Web page, every head", "html"}}); });
  if (out) last_dir_ = QFileInfo(QString::fromStdString(*out)).absolutePath().toStdString();
  return out;
}

void QtSession::showError(const std::string& title, const std::string& text) {
  withRepaint([&] {
    QMessageBox box(QMessageBox::Warning, QString::fromStdString(title), QString::fromStdString(text), QMessageBox::Ok);
    box.exec();
  });
}

std::optional<std::string> QtSession::openModel() {
  std::optional<std::string> out;
  withRepaint([&] {
    QFileDialog dlg(nullptr, "Open Model or Attention", QString::fromStdString(last_dir_),
                    "Model weights or attention maps (*.safetensors *.gguf *.npy *.npz);;GGUF models (*.gguf);;All files (*)");
    dlg.setOption(QFileDialog::DontUseNativeDialog);
    dlg.setFileMode(QFileDialog::ExistingFile);
    dlg.setAcceptMode(QFileDialog::AcceptOpen);
    dlg.setLabelText(QFileDialog::Accept, "Open file");
    // A Hugging Face model is a folder: one more button accepts the folder shown.
    auto* folder = new QPushButton("Open this folder");
    folder->setToolTip("a model's folder (config.json, model.safetensors or shards, the tokenizer files), or a folder of "
                       "attention maps (attention.npy, tokens.json: what `attnlab model run` or attnlab.save writes)");
    QObject::connect(folder, &QPushButton::clicked, &dlg, [&] {
      out = dlg.directory().absolutePath().toStdString();
      dlg.reject();
    });
    if (auto* grid = qobject_cast<QGridLayout*>(dlg.layout())) grid->addWidget(folder, grid->rowCount(), 0, 1, -1);
    if (dlg.exec() == QDialog::Accepted && !dlg.selectedFiles().isEmpty()) out = dlg.selectedFiles().front().toStdString();
  });
  if (out) {
    const QFileInfo info(QString::fromStdString(*out));
    last_dir_ = (info.isDir() ? info.absoluteFilePath() : info.absolutePath()).toStdString();
  }
  return out;
}

void QtSession::progressWhile(const std::string& label, const std::function<bool()>& busy,
                              const std::function<float()>& progress, const std::function<void()>& cancel) {
  withRepaint([&] {
    QProgressDialog dlg(QString::fromStdString(label), "Cancel", 0, 1000);
    dlg.setWindowTitle("AttnLab");
    dlg.setWindowModality(Qt::ApplicationModal);
    dlg.setMinimumDuration(0);
    dlg.setAutoClose(false);
    dlg.setAutoReset(false);
    bool cancelled = false;
    QObject::connect(&dlg, &QProgressDialog::canceled, [&] {
      if (!cancelled) cancel();
      cancelled = true;
      dlg.setLabelText("Cancelling\u2026");
    });
    QTimer poll;
    poll.setInterval(30);
    QObject::connect(&poll, &QTimer::timeout, [&] {
      if (!busy()) {
        dlg.done(QDialog::Accepted);
        return;
      }
      dlg.setValue(static_cast<int>(std::clamp(progress(), 0.0f, 1.0f) * 999));
    });
    poll.start();
    if (busy()) dlg.exec();
    poll.stop();
  });
}

void QtSession::showModelInfo(const ModelInfo& info) {
  withRepaint([&] {
    QDialog dlg;
    dlg.setWindowTitle("Model: " + QString::fromStdString(info.label));
    auto* layout = new QVBoxLayout(&dlg);
    auto* form = new QFormLayout;
    const ModelConfig& c = info.config;
    auto row = [&](const char* name, const std::string& value) {
      auto* v = new QLabel(QString::fromStdString(value));
      v->setTextInteractionFlags(Qt::TextSelectableByMouse);
      form->addRow(name, v);
    };
    row("Location", info.label);
    row("Architecture", c.arch_name + " (" + c.label + ", " + attentionKind(c.causal, c.encoderDecoder()) + ")");
    row("Layers", std::to_string(c.layers));
    row("Heads", std::to_string(c.heads) + " per layer, d_head " + std::to_string(c.head_dim));
    row("d_model", std::to_string(c.d_model));
    row("Vocabulary", std::to_string(c.vocab) + " tokens");
    row("Positions", std::to_string(c.positions));
    row("Parameters", QLocale(QLocale::English).toString(static_cast<qlonglong>(info.parameters)).toStdString());
    row("dtype", info.dtype);
    row("Size on disk", formatBytes(static_cast<double>(info.bytes_on_disk)));
    layout->addLayout(form);
    auto* table = new QTableWidget(static_cast<int>(info.tensors.size()), 3);
    table->setHorizontalHeaderLabels({"tensor", "shape", "dtype"});
    table->verticalHeader()->setVisible(false);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (size_t i = 0; i < info.tensors.size(); ++i) {
      const TensorSummary& t = info.tensors[i];
      std::string shape = "[";
      for (size_t k = 0; k < t.shape.size(); ++k) shape += (k ? ", " : "") + std::to_string(t.shape[k]);
      shape += "]";
      const int r = static_cast<int>(i);
      table->setItem(r, 0, new QTableWidgetItem(QString::fromStdString(t.name)));
      table->setItem(r, 1, new QTableWidgetItem(QString::fromStdString(shape)));
      table->setItem(r, 2, new QTableWidgetItem(QString::fromStdString(t.dtype)));
    }
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    table->resizeColumnsToContents();
    table->setMinimumSize(640, 320);
    layout->addWidget(table);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dlg, &QDialog::reject);
    layout->addWidget(buttons);
    dlg.exec();
  });
}

bool QtSession::askTruncate(int64_t tokens, int64_t limit) {
  bool yes = false;
  withRepaint([&] {
    const QString text =
        QString("The text has %1 tokens, but this model has learned positions for only %2: it cannot attend beyond "
                "token %2.\n\nTruncate the text to its first %2 tokens?")
            .arg(tokens)
            .arg(limit);
    QMessageBox box(QMessageBox::Question, "Text too long for the model", text, QMessageBox::Yes | QMessageBox::No);
    box.setDefaultButton(QMessageBox::Yes);
    yes = box.exec() == QMessageBox::Yes;
  });
  return yes;
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
