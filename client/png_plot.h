// PNG heat maps of tables, for `posenc plot`.
//
// One value is one scale x scale square of pixels; image rows are positions
// (the first row at the top), image columns are channels, in the table's
// layout. Colours: a diverging blue-white-red map over [-1, 1], linear in
// each of R, G and B between three stops,
//
//   -1 -> (0, 0, 255) blue     0 -> (255, 255, 255) white     +1 -> (255, 0, 0)
//
// so v in [-1, 0] is (c, c, 255) and v in [0, 1] is (255, c, c) with
// c = round(255 * (1 - |v|)) (round half away from zero). Values outside
// [-1, 1] (a RoPE table times an attention factor reaches 2) take the end
// colour; NaN is black. The PNG is 8-bit RGB, not interlaced, written row by
// row with libpng, so a table of any length is drawn in constant memory.
//
// DivergingColor and ColorRow are pure functions; PngPlotWriter is not
// thread-safe.
#ifndef POSENC_CLIENT_PNG_PLOT_H_
#define POSENC_CLIENT_PNG_PLOT_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/tensor.h"

namespace posenc {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const {
    return r == o.r && g == o.g && b == o.b;
  }
};

// The colour of a value (see the file comment).
Rgb DivergingColor(double v);

// Writes the RGB bytes of one image row: element `row` * width + k of
// `rows` for k = 0..width-1, each `scale` pixels wide, to `out` (3 * width *
// scale bytes). Precondition: rows holds at least (row + 1) * width values.
void ColorRow(const Tensor& rows, size_t row, uint32_t width, uint32_t scale,
              uint8_t* out);

class PngPlotWriter {
 public:
  // Largest side of one value's square, in pixels.
  static constexpr uint32_t kMaxScale = 64;

  // Opens `path` ("-" for stdout) for a plot of `rows` rows of `width`
  // values, each value scale x scale pixels. INVALID_ARGUMENT for a scale
  // outside 1..kMaxScale, an empty image or one over PNG's 2^31 - 1 pixels
  // a side; the errno text when the file cannot be created.
  static absl::StatusOr<std::unique_ptr<PngPlotWriter>> Open(
      const std::string& path, uint32_t rows, uint32_t width, uint32_t scale);
  ~PngPlotWriter();
  PngPlotWriter(const PngPlotWriter&) = delete;
  PngPlotWriter& operator=(const PngPlotWriter&) = delete;

  // Draws whole rows, in order. Precondition: rows.size() is a multiple of
  // width. INTERNAL with libpng's message, or the errno text, on a failure.
  absl::Status Append(const Tensor& rows);

  // Ends the image and closes the file; FAILED_PRECONDITION if fewer or
  // more rows than announced were drawn.
  absl::Status Close();

 private:
  struct Png;  // libpng's write and info structs
  PngPlotWriter(std::FILE* file, bool owned, std::string path, uint32_t rows,
                uint32_t width, uint32_t scale);
  absl::Status Start();

  std::FILE* file_;
  bool owned_;
  const std::string path_;
  const uint32_t rows_, width_, scale_;
  std::unique_ptr<Png> png_;
  std::vector<uint8_t> line_;  // one image row, 3 * width * scale bytes
  uint64_t rows_written_ = 0;
};

}  // namespace posenc

#endif  // POSENC_CLIENT_PNG_PLOT_H_
