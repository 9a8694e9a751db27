#include "core/services/recording_meta_store.hpp"

namespace sluice {

void RecordingMetaStore::emit(proto::MetaRecordKind kind, std::string_view path, std::string_view name,
                              const proto::InodeDesc* inode, std::uint64_t value) {
  if (!sink_) return;
  proto::MetaRecordDesc r;
  r.kind = kind;
  r.path = std::string(path);
  r.name = std::string(name);
  if (inode != nullptr) r.inode = *inode;
  r.value = value;
  sink_(std::move(r));
}

Status RecordingMetaStore::put_dir(std::string_view dir_path, const proto::InodeDesc& inode) {
  Status s = inner_->put_dir(dir_path, inode);
  if (s.ok()) emit(proto::MetaRecordKind::put_dir, dir_path, {}, &inode, 0);
  return s;
}

Status RecordingMetaStore::remove_dir(std::string_view dir_path) {
  Status s = inner_->remove_dir(dir_path);
  if (s.ok()) emit(proto::MetaRecordKind::remove_dir, dir_path, {}, nullptr, 0);
  return s;
}

Status RecordingMetaStore::put_entry(std::string_view dir_path, std::string_view name, const proto::InodeDesc& inode) {
  Status s = inner_->put_entry(dir_path, name, inode);
  if (s.ok()) emit(proto::MetaRecordKind::put_entry, dir_path, name, &inode, 0);
  return s;
}

Status RecordingMetaStore::remove_entry(std::string_view dir_path, std::string_view name) {
  Status s = inner_->remove_entry(dir_path, name);
  if (s.ok()) emit(proto::MetaRecordKind::remove_entry, dir_path, name, nullptr, 0);
  return s;
}

Status RecordingMetaStore::store_counter(std::uint64_t value) {
  Status s = inner_->store_counter(value);
  if (s.ok()) emit(proto::MetaRecordKind::counter, {}, {}, nullptr, value);
  return s;
}

}  // namespace sluice
