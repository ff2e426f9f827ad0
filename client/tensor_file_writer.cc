#include "client/tensor_file_writer.h"

#include <cerrno>
#include <charconv>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace posenc {
namespace {

const char* NpyDescr(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kFloat16:
      return "<f2";
    case DType::kBFloat16:
      return "<u2";  // raw bfloat16 bits
  }
  return "";
}

// Shortest decimal that reads back as the same value of the dtype.
void AppendShortest(std::string& out, const Tensor& t, size_t k) {
  char buf[32];
  std::to_chars_result r;
  if (t.dtype == DType::kFloat64) {
    r = std::to_chars(buf, buf + sizeof buf, t.values<double>()[k]);
  } else {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(t.ValueAt(k)));
  }
  out.append(buf, r.ptr);
}

}  // namespace

absl::StatusOr<std::unique_ptr<TensorFileWriter>> TensorFileWriter::Open(
    const std::string& path, DType dtype, uint32_t rows, uint32_t d) {
  Format format;
  if (path.empty() || path == "-") {
    return std::unique_ptr<TensorFileWriter>(
        new TensorFileWriter(stdout, false, Format::kCsv, dtype, rows, d));
  } else if (absl::EndsWith(path, ".npy")) {
    format = Format::kNpy;
  } else if (absl::EndsWith(path, ".csv")) {
    format = Format::kCsv;
  } else if (absl::EndsWith(path, ".bin")) {
    format = Format::kBin;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "output file '", path, "' must end in .npy, .csv or .bin"));
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot create '", path, "': ", std::strerror(errno)));
  }
  std::unique_ptr<TensorFileWriter> writer(
      new TensorFileWriter(file, true, format, dtype, rows, d));
  if (format == Format::kNpy) {
    if (absl::Status s = writer->WriteNpyHeader(); !s.ok()) return s;
  }
  return writer;
}

TensorFileWriter::~TensorFileWriter() {
  if (owned_ && file_ != nullptr) std::fclose(file_);
}

absl::Status TensorFileWriter::WriteNpyHeader() {
  std::string dict = absl::StrCat("{'descr': '", NpyDescr(dtype_),
                                  "', 'fortran_order': False, 'shape': (",
                                  rows_, ", ", d_, "), }");
  // magic(6) + version(2) + header length(2) + dict + padding + '\n' is a
  // multiple of 64 bytes.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  const uint16_t len = static_cast<uint16_t>(dict.size());
  std::string header("\x93NUMPY\x01\x00", 8);
  header.push_back(static_cast<char>(len & 0xff));
  header.push_back(static_cast<char>(len >> 8));
  header += dict;
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size()) {
    return absl::DataLossError("cannot write the .npy header");
  }
  return absl::OkStatus();
}

absl::Status TensorFileWriter::Append(const Tensor& rows) {
  const size_t elements = rows.size();
  rows_written_ += elements / d_;
  if (format_ != Format::kCsv) {
    if (std::fwrite(rows.bytes().data(), 1, rows.bytes().size(), file_) !=
        rows.bytes().size()) {
      return absl::DataLossError(
          absl::StrCat("write failed: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  std::string text;
  for (size_t k = 0; k < elements; ++k) {
    AppendShortest(text, rows, k);
    text.push_back((k + 1) % d_ == 0 ? '\n' : ',');
  }
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    return absl::DataLossError(
        absl::StrCat("write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status TensorFileWriter::Close() {
  if (std::fflush(file_) != 0) {
    return absl::DataLossError(
        absl::StrCat("flush failed: ", std::strerror(errno)));
  }
  if (owned_) {
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) {
      return absl::DataLossError(
          absl::StrCat("close failed: ", std::strerror(errno)));
    }
  }
  if (rows_written_ != rows_) {
    return absl::FailedPreconditionError(
        absl::StrCat("wrote ", rows_written_, " rows, expected ", rows_));
  }
  return absl::OkStatus();
}

}  // namespace posenc
