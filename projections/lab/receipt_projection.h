// The receipt of each attempt (receipt.issued): the envelope's digest, the stored blob, the seq
// range it covers and the checkpoint it cites. A newer receipt for an attempt replaces an older.
#pragma once

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

class ReceiptProjection : public Projection {
 public:
  std::string_view name() const override { return "receipts"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"receipts"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

 private:
  ev::PayloadReader reader_;
};

}  // namespace aura::lab
