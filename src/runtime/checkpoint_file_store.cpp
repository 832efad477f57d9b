#include "runtime/checkpoint_file_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "protocols/check.h"

namespace hapair {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "chk-";
constexpr const char* kManifestHeader = "hapair checkpoint manifest 1";

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error("checkpoint store: " + what + " " + path + ": " + std::strerror(errno));
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) fail("cannot open", path);
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("cannot fsync", path);
  }
  ::close(fd);
}

// Fragment names are topology names (letters, digits, '_' and '-': protocols/plan.cpp), so they
// are safe file names; anything else here is a caller's bug.
bool topology_name(const std::string& s) {
  return !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == std::string::npos;
}
std::string snapshot_file(const std::string& fragment) {
  HAPAIR_CHECK_MSG(topology_name(fragment), "fragment name '" << fragment << "' is not a topology name");
  return fragment + ".snapshot";
}

// The id of a directory named chk-<id>; nullopt for anything else.
std::optional<CheckpointId> id_of(const fs::path& p) {
  const std::string name = p.filename().string();
  if (name.rfind(kPrefix, 0) != 0 || name.size() == 4) return std::nullopt;
  CheckpointId id = 0;
  for (char c : name.substr(4)) {
    if (c < '0' || c > '9' || id > (~CheckpointId{0} - 9) / 10) return std::nullopt;
    id = id * 10 + static_cast<CheckpointId>(c - '0');
  }
  return id;
}

std::vector<CheckpointId> ids_in(const std::string& dir) {
  std::vector<CheckpointId> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (auto id = id_of(e.path()); id && e.is_directory()) out.push_back(*id);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

FileCheckpointStore::FileCheckpointStore(std::string dir, BeforeRename before_rename, Durability durability)
    : dir_(std::move(dir)), before_rename_(std::move(before_rename)), durable_(durability == Durability::fsync) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) throw std::runtime_error("checkpoint store: cannot create directory " + dir_ + ": " + ec.message());
  const std::vector<CheckpointId> ids = ids_in(dir_);
  if (!ids.empty()) highest_started_ = ids.back();
}

std::string FileCheckpointStore::checkpoint_dir(CheckpointId id) const {
  return (fs::path(dir_) / (kPrefix + std::to_string(id))).string();
}

void FileCheckpointStore::write_durably(const std::string& path, const Bytes& data) const {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", tmp);
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      fail("cannot write", tmp);
    }
    done += static_cast<std::size_t>(n);
  }
  if (durable_ && ::fsync(fd) != 0) {
    ::close(fd);
    fail("cannot fsync", tmp);
  }
  if (::close(fd) != 0) fail("cannot close", tmp);
  if (before_rename_) before_rename_(path);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename into", path);
  if (durable_) fsync_path(fs::path(path).parent_path().string(), O_RDONLY | O_DIRECTORY);
}

void FileCheckpointStore::put_snapshot(CheckpointId id, const std::string& fragment, const Bytes& snapshot) {
  HAPAIR_CHECK_MSG(id > 0, "checkpoint ids start at 1");
  HAPAIR_CHECK_MSG(!manifest(id), "checkpoint " << id << " is complete: its snapshot of " << fragment << " cannot change");
  const std::string d = checkpoint_dir(id);
  std::error_code ec;
  if (!fs::is_directory(d)) {
    if (!fs::create_directory(d, ec) && !fs::is_directory(d)) fail("cannot create directory", d);
    if (durable_) fsync_path(dir_, O_RDONLY | O_DIRECTORY);
  }
  write_durably((fs::path(d) / snapshot_file(fragment)).string(), snapshot);
  if (id > highest_started_) highest_started_ = id;
}

void FileCheckpointStore::complete(CheckpointId id, const std::vector<std::string>& fragments, std::size_t retained) {
  HAPAIR_CHECK_MSG(retained >= 1, "retained=" << retained);
  std::ostringstream m;
  m << kManifestHeader << "\nid " << id << "\n";
  for (const std::string& f : fragments) {
    const fs::path p = fs::path(checkpoint_dir(id)) / snapshot_file(f);
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(p, ec);
    HAPAIR_CHECK_MSG(!ec, "checkpoint " << id << " completed without a snapshot of " << f << " (" << p.string() << ")");
    m << "fragment " << f << " " << size << "\n";
  }
  m << "end\n";
  const std::string text = m.str();
  write_durably((fs::path(checkpoint_dir(id)) / kManifest).string(), Bytes(text.begin(), text.end()));
  // The manifest is in place: older unfinished checkpoints and all but the newest `retained`
  // complete ones go (a crash here only leaves more than needed, which the next completion removes).
  std::vector<CheckpointId> done = completed();
  std::vector<CheckpointId> drop;
  for (CheckpointId other : ids_in(dir_))
    if (other < id && std::find(done.begin(), done.end(), other) == done.end()) drop.push_back(other);
  for (std::size_t i = 0; i + retained < done.size(); ++i) drop.push_back(done[i]);
  for (CheckpointId other : drop) {
    std::error_code ec;
    fs::remove_all(checkpoint_dir(other), ec);
  }
  if (durable_) fsync_path(dir_, O_RDONLY | O_DIRECTORY);
}

std::optional<std::vector<std::pair<std::string, std::uint64_t>>> FileCheckpointStore::manifest(CheckpointId id) const {
  std::ifstream in(fs::path(checkpoint_dir(id)) / kManifest);
  if (!in) return std::nullopt;
  std::string line;
  if (!std::getline(in, line) || line != kManifestHeader) return std::nullopt;
  if (!std::getline(in, line) || line != "id " + std::to_string(id)) return std::nullopt;
  std::vector<std::pair<std::string, std::uint64_t>> out;
  while (std::getline(in, line)) {
    if (line == "end") {
      // Every file it names is there, whole.
      for (const auto& [f, size] : out) {
        std::error_code ec;
        if (fs::file_size(fs::path(checkpoint_dir(id)) / snapshot_file(f), ec) != size || ec) return std::nullopt;
      }
      return out;
    }
    std::istringstream words(line);
    std::string word, fragment;
    std::uint64_t size = 0;
    // A damaged manifest (a name no topology has) makes the checkpoint unusable, not the reader crash.
    if (!(words >> word >> fragment >> size) || word != "fragment" || !topology_name(fragment)) return std::nullopt;
    out.emplace_back(fragment, size);
  }
  return std::nullopt;  // no "end": not the whole manifest
}

std::vector<CheckpointId> FileCheckpointStore::completed() const {
  std::vector<CheckpointId> out;
  for (CheckpointId id : ids_in(dir_))
    if (manifest(id)) out.push_back(id);
  return out;
}

std::optional<Bytes> FileCheckpointStore::snapshot(CheckpointId id, const std::string& fragment) const {
  const auto m = manifest(id);
  if (!m) return std::nullopt;
  for (const auto& [f, size] : *m) {
    if (f != fragment) continue;
    std::ifstream in(fs::path(checkpoint_dir(id)) / snapshot_file(f), std::ios::binary);
    Bytes data(size);
    if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size)))
      throw std::runtime_error("checkpoint store: cannot read " + snapshot_file(f) + " of checkpoint " + std::to_string(id));
    return data;
  }
  return std::nullopt;
}

CheckpointId FileCheckpointStore::highest_started() const {
  const std::vector<CheckpointId> ids = ids_in(dir_);
  return std::max(highest_started_, ids.empty() ? CheckpointId{0} : ids.back());
}

FileLocalSnapshots::FileLocalSnapshots(std::string dir) : dir_(std::move(dir)) {}

CheckpointStore& FileLocalSnapshots::of(const std::string& host, const std::string& fragment) {
  auto it = stores_.find({host, fragment});
  if (it == stores_.end()) {
    const fs::path d = fs::path(dir_) / (host.empty() ? std::string(kThisHost) : host) / fragment;
    it = stores_.emplace(std::make_pair(host, fragment),
                         std::make_unique<FileCheckpointStore>(d.string(), FileCheckpointStore::BeforeRename{},
                                                               FileCheckpointStore::Durability::page_cache))
             .first;
  }
  return *it->second;
}

}  // namespace hapair
