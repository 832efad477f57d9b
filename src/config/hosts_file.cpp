// The hosts file format (docs/HOSTS.md): an optional [defaults] table with the keys every
// [[host]] takes unless it sets its own, and one [[host]] table per machine.
#include "config/hosts_file.h"

#include <functional>

#include "config/input_checks.h"
#include "config/toml_file.h"

namespace hapair {
namespace {

// A key of [defaults] or [[host]]: how to read it into a HostSpec; nullopt when accepted, else
// what was expected.
struct HostKey {
  const char* key;
  bool in_defaults;  // [defaults] may set it (name, address and labels are a host's own)
  std::function<std::optional<std::string>(const toml::node&, HostSpec&)> set;
};

std::optional<std::string> read_text(const toml::node& n, std::string& field) {
  const auto* s = n.as_string();
  if (s == nullptr || s->get().empty()) return std::string("expected a non-empty string in quotes, like \"text\"");
  field = s->get();
  return std::nullopt;
}

std::optional<std::string> read_whole(const toml::node& n, std::int64_t& field) {
  const auto* i = n.as_integer();
  if (i == nullptr) return std::string("expected a whole number, like 22");
  field = i->get();
  return std::nullopt;
}

std::optional<std::string> read_labels(const toml::node& n, HostSpec& h) {
  const std::string expected = "expected a table of strings, like labels = { rack = \"r1\" }";
  const toml::table* t = n.as_table();
  if (t == nullptr) return expected;
  std::map<std::string, std::string> labels;
  for (auto&& [key, value] : *t) {
    const auto* s = value.as_string();
    if (s == nullptr) return expected + " (label '" + std::string(key.str()) + "' is " + toml_text(value) + ")";
    labels[std::string(key.str())] = s->get();
  }
  h.labels = std::move(labels);
  return std::nullopt;
}

const std::vector<HostKey>& host_keys() {
  static const std::vector<HostKey> keys{
      {"name", false, [](const toml::node& n, HostSpec& h) { return read_text(n, h.name); }},
      {"address", false, [](const toml::node& n, HostSpec& h) { return read_text(n, h.address); }},
      {"user", true, [](const toml::node& n, HostSpec& h) { return read_text(n, h.ssh_user); }},
      {"port", true, [](const toml::node& n, HostSpec& h) { return read_whole(n, h.ssh_port); }},
      {"identity_file", true, [](const toml::node& n, HostSpec& h) { return read_text(n, h.identity_file); }},
      {"known_hosts_file", true, [](const toml::node& n, HostSpec& h) { return read_text(n, h.known_hosts_file); }},
      {"work_dir", true, [](const toml::node& n, HostSpec& h) { return read_text(n, h.work_dir); }},
      {"data_port_base", true, [](const toml::node& n, HostSpec& h) { return read_whole(n, h.data_port_base); }},
      {"labels", false, [](const toml::node& n, HostSpec& h) { return read_labels(n, h); }},
  };
  return keys;
}

std::vector<std::string> key_names(bool defaults) {
  std::vector<std::string> out;
  for (const HostKey& k : host_keys())
    if (k.in_defaults || !defaults) out.push_back(k.key);
  return out;
}

class HostsReader {
 public:
  explicit HostsReader(ConfigProblems& problems) : problems_(problems) {}

  HostList read(const toml::table& doc) {
    HostList list;
    list.source_file = problems_.file();
    HostSpec defaults;
    if (const toml::node* d = doc.get("defaults")) {
      if (const toml::table* t = d->as_table()) apply(*t, "[defaults]", true, defaults);
      else problems_.add(line_of(doc.find("defaults")->first), "'defaults' must be a table: write [defaults] and its keys below it");
    }
    for (auto&& [key, node] : doc) {
      const std::string k(key.str());
      if (k == "defaults") continue;
      if (k != "host") {
        std::string what = "unknown " + std::string(node.is_table() || node.is_array_of_tables() ? "table" : "key") + " '" + k +
                           "' at the top of the file";
        if (const auto m = close_match(k, {"host", "defaults"})) what += " (did you mean '" + *m + "'?)";
        problems_.add(line_of(key), what + "; allowed: [defaults] and one [[host]] table per host");
        continue;
      }
      const toml::array* hosts = node.as_array();
      if (hosts == nullptr || !node.is_array_of_tables()) {
        problems_.add(line_of(key), "'host' must be an array of tables: write each host as [[host]] and its keys below it");
        continue;
      }
      for (const toml::node& item : *hosts) list.hosts.push_back(host(*item.as_table(), defaults));
    }
    if (!doc.contains("host")) problems_.add(0, "names no host; write one [[host]] table per host (docs/HOSTS.md)");
    return list;
  }

 private:
  HostSpec host(const toml::table& table, const HostSpec& defaults) {
    HostSpec h = defaults;
    h.where = problems_.at(table);
    const toml::node* name = table.get("name");
    const std::string label =
        name != nullptr && name->is_string() ? "host '" + name->as_string()->get() + "'" : std::string("[[host]]");
    apply(table, label, false, h);
    for (const char* k : {"name", "address"})
      if (!table.contains(k)) problems_.add(table, label + " is missing the key '" + k + "'");
    for (auto [k, value] : {std::pair<const char*, const std::string*>{"user", &h.ssh_user}, {"work_dir", &h.work_dir}})
      if (value->empty())
        problems_.add(table, label + " is missing the key '" + k + "' (give it here or in [defaults])");
    return h;
  }

  void apply(const toml::table& table, const std::string& label, bool defaults, HostSpec& h) {
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      const HostKey* found = nullptr;
      for (const HostKey& candidate : host_keys())
        if (k == candidate.key && (candidate.in_defaults || !defaults)) found = &candidate;
      if (found == nullptr) {
        const std::vector<std::string> allowed = key_names(defaults);
        std::string what = "unknown key '" + k + "' in " + label;
        if (defaults && (k == "name" || k == "address" || k == "labels"))
          what = "key '" + k + "' in [defaults]: each [[host]] gives its own " + k;
        else if (const auto m = close_match(k, allowed))
          what += " (did you mean '" + *m + "'?)";
        problems_.add(line_of(key), what + "; allowed keys: " + join_names(allowed));
        continue;
      }
      if (auto error = found->set(node, h)) problems_.add(line_of(key), label + " " + k + " = " + toml_text(node) + ": " + *error);
    }
  }

  ConfigProblems& problems_;
};

}  // namespace

HostsLoad parse_hosts(const std::string& text, const std::string& file_name) {
  TomlText doc = parse_toml(text, file_name);
  if (!doc.table) return HostsLoad{std::nullopt, doc.problems};
  ConfigProblems problems(file_name);
  HostList list = HostsReader(problems).read(*doc.table);
  HostsLoad load;
  load.problems = problems.take();
  // Field checks only once the file reads: a missing key is not reported twice.
  if (load.problems.empty()) load.problems = validate_hosts(list);
  if (load.problems.empty()) load.hosts = std::move(list);
  return load;
}

HostsLoad load_hosts_file(const std::string& path) {
  std::string problem;
  const auto text = read_config_file(path, problem);
  if (!text) return HostsLoad{std::nullopt, {problem}};
  return parse_hosts(*text, path);
}

}  // namespace hapair
