#include "server/table_stream.h"

#include <algorithm>
#include <utility>

#include "core/plan/encoding.h"
#include "server/tensor_message.h"

namespace posenc {

TableStream::TableStream(Method method, grpc::CallbackServerContext* context,
                         const Parts& parts)
    : method_(method),
      context_(context),
      parts_(parts),
      peer_(context->peer()),
      scope_(context, parts.calls, parts.stats, method) {}

void TableStream::Start(absl::StatusOr<RangeQuery> query) {
  if (!query.ok()) return FinishWith(query.status());
  query_ = std::move(*query);
  next_ = query_.start;
  next_compute_ = query_.start;
  const TableCache::Lookup lookup =
      parts_.cache->Find(query_.spec, query_.end - query_.start);
  if (lookup.table != nullptr) {
    table_slice_ = TableSlice(lookup.table);
    return WriteNext();
  }
  // Computed mode holds up to three chunks (see the header).
  chunk_rows_ = ChunkRows(query_);
  const uint64_t chunk_bytes = uint64_t{chunk_rows_} * query_.spec.row_bytes();
  absl::StatusOr<InflightCharge> charge =
      parts_.admission->ChargeInflight(3 * chunk_bytes);
  absl::Status admitted = charge.status();
  const bool whole = lookup.compute_whole;
  if (admitted.ok()) {
    ticket_.charge = *std::move(charge);
    Ref();
    admitted = parts_.admission->AdmitComputation(
        peer_, Admission::MissCost(lookup, query_.spec, chunk_bytes), ticket_,
        [this, whole] {
          FirstComputation(whole);
          Unref();
        });
    if (!admitted.ok()) Unref();
  }
  if (!admitted.ok()) {
    if (whole) parts_.cache->CancelWhole(query_.spec);
    FinishWith(admitted);
  }
}

void TableStream::OnWriteDone(bool ok) {
  if (table_slice_.has_value()) {
    if (!ok) return FinishWith(absl::CancelledError("stream write failed"));
    return WriteNext();
  }
  std::unique_lock<std::mutex> lock(mu_);
  writing_ = false;
  if (!ok && !end_.has_value()) {
    end_ = absl::CancelledError("stream write failed");
  }
  Pump(std::move(lock));
}

void TableStream::FirstComputation(bool whole) {
  if (parts_.admission->CallEndedWhileQueued(*context_)) {
    if (whole) parts_.cache->CancelWhole(query_.spec);
    return FinishWith(absl::CancelledError("cancelled by the client"));
  }
  std::shared_ptr<const Table> table =
      whole ? parts_.cache->ComputeWhole(query_.spec) : nullptr;
  if (table != nullptr) {
    table_slice_ = TableSlice(std::move(table));
    // Served from the cache from now on.
    ticket_.charge.Reset();
    ticket_.slot.reset();
    return WriteNext();
  }
  encoding_ = std::make_unique<EncodingPlan>(query_.spec);  // once
  // The first chunk right here, without a second turn in the queue.
  std::unique_lock<std::mutex> lock(mu_);
  const uint32_t first = next_compute_;
  const uint32_t rows = std::min(chunk_rows_, query_.end - next_compute_);
  if (rows == 0) return Pump(std::move(lock));
  next_compute_ += rows;
  computing_ = true;
  lock.unlock();
  ComputeMessage(first, rows);
}

void TableStream::WriteNext() {
  if (context_->IsCancelled()) {
    return FinishWith(absl::CancelledError("cancelled by the client"));
  }
  if (next_ >= query_.end) return FinishWith(absl::OkStatus());
  const uint32_t rows = std::min(query_.rows_per_message, query_.end - next_);
  const size_t row_bytes = query_.spec.row_bytes();
  message_ = BuildRangeMessage(
      query_, method_ == Method::kStreamRows, next_, rows,
      table_slice_->sub(next_ * row_bytes, (next_ + rows) * row_bytes));
  bytes_sent_ += message_.Length();
  next_ += rows;
  StartWrite(&message_);
}

void TableStream::Pump(std::unique_lock<std::mutex> lock) {
  bool write = false;
  uint32_t compute_first = 0, compute_rows = 0;
  std::optional<absl::Status> finish;
  if (!end_.has_value() && context_->IsCancelled()) {
    end_ = absl::CancelledError("cancelled by the client");
  }
  if (end_.has_value()) {
    // Stop; finish once no computation or write is outstanding.
    if (!computing_ && !writing_ && !finished_) finish = *end_;
  } else {
    if (!writing_) {
      if (!current_.has_value() && ready_.has_value()) {
        current_ = std::move(ready_);
        ready_.reset();
      }
      if (current_.has_value()) {
        // The next message: a view of the chunk (no copy).
        const uint32_t rows = std::min(query_.rows_per_message,
                                       current_->rows - current_->written);
        const size_t row_bytes = query_.spec.row_bytes();
        message_ = BuildRangeMessage(
            query_, method_ == Method::kStreamRows,
            current_->first + current_->written, rows,
            current_->data.sub(current_->written * row_bytes,
                               (current_->written + rows) * row_bytes));
        bytes_sent_ += message_.Length();
        current_->written += rows;
        if (current_->written == current_->rows) current_.reset();
        writing_ = write = true;
      }
    }
    if (!computing_ && !ready_.has_value() && next_compute_ < query_.end) {
      compute_first = next_compute_;
      compute_rows = std::min(chunk_rows_, query_.end - next_compute_);
      next_compute_ += compute_rows;
      computing_ = true;
    }
    if (!writing_ && !computing_ && !current_.has_value() &&
        !ready_.has_value() && !finished_) {
      finish = absl::OkStatus();  // every row computed and written
    }
  }
  if (finish.has_value()) finished_ = true;
  lock.unlock();
  if (write) StartWrite(&message_);
  if (compute_rows > 0) {
    const size_t bytes = size_t{compute_rows} * query_.spec.row_bytes();
    Ref();
    // The continuation of an admitted stream: queued whatever the queue
    // holds, behind the other connections' turns.
    parts_.pool->Post(peer_, bytes, [this, compute_first, compute_rows] {
      ComputeMessage(compute_first, compute_rows);
      Unref();
    });
  }
  if (finish.has_value()) FinishWith(*finish);
}

void TableStream::ComputeMessage(uint32_t first, uint32_t rows) {
  grpc::Slice data = NewSlice(size_t{rows} * query_.spec.row_bytes());
  ComputeRows(*encoding_, first, rows, MutableData(data));
  parts_.cache->RecordRowsComputed(query_.spec, rows);
  std::unique_lock<std::mutex> lock(mu_);
  computing_ = false;
  ready_ = Computed{first, rows, 0, std::move(data)};
  Pump(std::move(lock));
}

void TableStream::FinishWith(const absl::Status& status) {
  // Free the connection's slot before the client can see the end and start
  // its next call.
  ticket_.slot.reset();
  ticket_.charge.Reset();
  Finish(scope_.End(status, bytes_sent_));
}

uint32_t TableStream::ChunkRows(const RangeQuery& query) {
  constexpr uint64_t kChunkBytes = uint64_t{256} << 10;
  const uint64_t message_bytes =
      uint64_t{query.rows_per_message} * query.spec.row_bytes();
  const uint64_t messages =
      std::max<uint64_t>(1, kChunkBytes / std::max<uint64_t>(1, message_bytes));
  const uint64_t rows = messages * query.rows_per_message;
  return static_cast<uint32_t>(
      std::min<uint64_t>(rows, std::max<uint32_t>(1, query.end - query.start)));
}

}  // namespace posenc
