#include "client/png_plot.h"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace posenc {
namespace {

// Where libpng's error callback leaves its message before it longjmps.
struct ErrorSink {
  char message[256] = "";
};

[[noreturn]] void OnPngError(png_structp png, png_const_charp message) {
  auto* sink = static_cast<ErrorSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof sink->message, "%s", message);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}

// Each wrapper makes libpng calls that may longjmp back to its setjmp and
// returns false if they did. Nothing with a destructor lives in them, so the
// jump skips no C++ cleanup.
bool PngWriteHeader(png_structp png, png_infop info, std::FILE* file,
                    uint32_t width, uint32_t height) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_init_io(png, file);
  // libpng refuses images over 10^6 pixels a side unless told otherwise;
  // PNG itself allows 2^31 - 1.
  png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  // Speed over size: zlib level 1 and no row filter draw a 20000 x 1024
  // table about 3x faster than libpng's defaults for a file 10% larger.
  png_set_compression_level(png, 1);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_write_info(png, info);
  return true;
}

bool PngWriteRow(png_structp png, const uint8_t* row) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_write_row(png, row);
  return true;
}

bool PngWriteEnd(png_structp png, png_infop info) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_write_end(png, info);
  return true;
}

absl::Status ErrnoStatus(const std::string& what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

struct PngPlotWriter::Png {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ErrorSink error;
  ~Png() {
    if (png != nullptr) png_destroy_write_struct(&png, &info);
  }
};

Rgb DivergingColor(double v) {
  if (std::isnan(v)) return {0, 0, 0};
  const double a = std::min(std::fabs(v), 1.0);
  const auto c = static_cast<uint8_t>(std::lround(255 * (1 - a)));
  return v < 0 ? Rgb{c, c, 255} : Rgb{255, c, c};
}

void ColorRow(const Tensor& rows, size_t row, uint32_t width, uint32_t scale,
              uint8_t* out) {
  for (uint32_t k = 0; k < width; ++k) {
    const Rgb c = DivergingColor(rows.ValueAt(row * width + k));
    for (uint32_t s = 0; s < scale; ++s) {
      *out++ = c.r;
      *out++ = c.g;
      *out++ = c.b;
    }
  }
}

absl::StatusOr<std::unique_ptr<PngPlotWriter>> PngPlotWriter::Open(
    const std::string& path, uint32_t rows, uint32_t width, uint32_t scale) {
  if (scale < 1 || scale > kMaxScale) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--scale must be 1 to ", kMaxScale, " pixels a value, got ", scale));
  }
  const uint64_t height = uint64_t{rows} * scale;
  const uint64_t pixels = uint64_t{width} * scale;
  if (height == 0 || pixels == 0) {
    return absl::InvalidArgumentError("a plot needs at least one value");
  }
  if (height > PNG_UINT_31_MAX || pixels > PNG_UINT_31_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plot would be ", pixels, " x ", height,
        " pixels; PNG allows at most 2147483647 a side (lower --scale or "
        "--max-len)"));
  }
  const bool to_stdout = path == "-";
  std::FILE* file = to_stdout ? stdout : std::fopen(path.c_str(), "wb");
  if (file == nullptr) return ErrnoStatus("cannot create", path);
  std::unique_ptr<PngPlotWriter> writer(
      new PngPlotWriter(file, !to_stdout, path, rows, width, scale));
  if (absl::Status s = writer->Start(); !s.ok()) return s;
  return writer;
}

PngPlotWriter::PngPlotWriter(std::FILE* file, bool owned, std::string path,
                             uint32_t rows, uint32_t width, uint32_t scale)
    : file_(file),
      owned_(owned),
      path_(std::move(path)),
      rows_(rows),
      width_(width),
      scale_(scale),
      png_(std::make_unique<Png>()),
      line_(size_t{3} * width * scale) {}

PngPlotWriter::~PngPlotWriter() {
  png_.reset();
  if (owned_ && file_ != nullptr) std::fclose(file_);
}

absl::Status PngPlotWriter::Start() {
  png_->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &png_->error,
                                      OnPngError, OnPngWarning);
  if (png_->png == nullptr) {
    return absl::InternalError("libpng: cannot create a write struct");
  }
  png_->info = png_create_info_struct(png_->png);
  if (png_->info == nullptr) {
    return absl::InternalError("libpng: cannot create an info struct");
  }
  if (!PngWriteHeader(png_->png, png_->info, file_, width_ * scale_,
                      rows_ * scale_)) {
    return absl::InternalError(
        absl::StrCat("libpng: ", png_->error.message, " (", path_, ")"));
  }
  return absl::OkStatus();
}

absl::Status PngPlotWriter::Append(const Tensor& rows) {
  const size_t n = rows.size() / width_;
  if (rows_written_ + n > rows_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "plot of ", rows_, " rows received ", rows_written_ + n, " rows"));
  }
  for (size_t row = 0; row < n; ++row) {
    ColorRow(rows, row, width_, scale_, line_.data());
    for (uint32_t s = 0; s < scale_; ++s) {
      if (!PngWriteRow(png_->png, line_.data())) {
        return absl::InternalError(
            absl::StrCat("libpng: ", png_->error.message, " (", path_, ")"));
      }
    }
  }
  rows_written_ += n;
  if (std::ferror(file_)) return ErrnoStatus("cannot write", path_);
  return absl::OkStatus();
}

absl::Status PngPlotWriter::Close() {
  if (rows_written_ != rows_) {
    return absl::FailedPreconditionError(
        absl::StrCat("plot of ", rows_, " rows received ", rows_written_));
  }
  if (!PngWriteEnd(png_->png, png_->info)) {
    return absl::InternalError(
        absl::StrCat("libpng: ", png_->error.message, " (", path_, ")"));
  }
  png_.reset();
  std::FILE* file = file_;
  file_ = nullptr;
  bool ok = std::fflush(file) == 0 && !std::ferror(file);
  if (owned_ && std::fclose(file) != 0) ok = false;
  if (!ok) return ErrnoStatus("cannot write", path_);
  return absl::OkStatus();
}

}  // namespace posenc
