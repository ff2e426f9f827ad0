// TensorFileWriter: writes rows of a [rows, d] tensor to a file as they
// arrive, so a stream of any length is written in constant memory.
//
// The format follows the file's extension:
//   .npy  NumPy format 1.0, little-endian; bfloat16 is stored as '<u2' bits
//         (NumPy has no bfloat16)
//   .csv  one row per line, shortest decimal that round-trips the value
//   .bin  the raw little-endian bytes, exactly as received
// An empty path or "-" writes CSV to stdout.
//
// Not thread-safe.
#ifndef POSENC_CLIENT_TENSOR_FILE_WRITER_H_
#define POSENC_CLIENT_TENSOR_FILE_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/tensor.h"

namespace posenc {

class TensorFileWriter {
 public:
  enum class Format { kNpy, kCsv, kBin };

  // INVALID_ARGUMENT for an unknown extension; the errno text when the file
  // cannot be created.
  static absl::StatusOr<std::unique_ptr<TensorFileWriter>> Open(
      const std::string& path, DType dtype, uint32_t rows, uint32_t d);
  ~TensorFileWriter();

  // Appends whole rows. Precondition: rows.dtype is the opened dtype and its
  // size is a multiple of d elements.
  absl::Status Append(const Tensor& rows);

  // Flushes and closes; FAILED_PRECONDITION if fewer or more rows than
  // announced were written (the .npy header would lie).
  absl::Status Close();

 private:
  TensorFileWriter(std::FILE* file, bool owned, Format format, DType dtype,
                   uint32_t rows, uint32_t d)
      : file_(file),
        owned_(owned),
        format_(format),
        dtype_(dtype),
        rows_(rows),
        d_(d) {}
  absl::Status WriteNpyHeader();

  std::FILE* file_;
  bool owned_;
  Format format_;
  DType dtype_;
  uint32_t rows_;
  uint32_t d_;
  uint64_t rows_written_ = 0;
};

}  // namespace posenc

#endif  // POSENC_CLIENT_TENSOR_FILE_WRITER_H_
