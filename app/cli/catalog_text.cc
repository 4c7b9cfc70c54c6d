#include "app/cli/catalog_text.h"

#include <functional>
#include <initializer_list>
#include <sstream>
#include <utility>
#include <vector>

#include "engine/json/json_reader.h"

namespace aura::cli {
namespace {

using json::Object;

// Catalogs are small; these bounds only keep a broken document from being read at length.
json::Limits catalog_limits() {
  json::Limits limits;
  limits.max_bytes = 4 << 20;
  limits.max_members = 64;
  limits.max_elements = 256;
  limits.max_string_bytes = 64 << 10;
  limits.prefix = "catalog: ";
  return limits;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : ", ") + items[i];
  return out;
}

// Reads each named string member into its view; the first that is missing or not a string fails.
Status strings(const Object& o,
               std::initializer_list<std::pair<std::string_view, std::string_view*>> members) {
  for (const auto& [name, out] : members) AURA_ASSIGN_OR_RETURN(*out, o.required_string(name));
  return Status::ok();
}

// Calls `each` on every object of the array `member`, in order.
Status for_each(const Object& o, std::string_view member,
                const std::function<Status(const Object&)>& each) {
  auto items = o.array(member);
  if (!items.ok()) return items.status();
  for (const json::Value& v : items->elements()) {
    auto item = v.as_object();
    if (!item.ok()) return item.status();
    AURA_RETURN_IF_ERROR(each(*item));
  }
  return Status::ok();
}

Result<std::vector<std::string>> strings_of(const Object& o, std::string_view member) {
  std::vector<std::string> out;
  auto a = o.optional_array(member);
  if (!a.ok()) return a.status();
  if (!*a) return out;
  auto items = (*a)->strings();
  if (!items.ok()) return items.status();
  for (std::string_view s : *items) out.emplace_back(s);
  return out;
}

// The terms a target parameter of `kind` takes, as "role web", "selector stale-app-root".
Result<std::vector<std::string>> terms_of(const Object& catalog, std::string_view kind) {
  std::vector<std::string> out;
  AURA_RETURN_IF_ERROR(for_each(catalog, "targets", [&](const Object& t) -> Status {
    std::string_view name, type, term_kind;
    AURA_RETURN_IF_ERROR(strings(t, {{"name", &name}, {"type", &type}, {"kind", &term_kind}}));
    if (term_kind == kind) out.push_back(std::string(type) + " " + std::string(name));
    return Status::ok();
  }));
  return out;
}

// One parameter: "path: path under /etc/, /srv/ (not under /srv/ansible/), at most 256 bytes
// -- an absolute path in the world".
Result<std::string> param_text(const Object& catalog, const Object& p) {
  std::string_view name, type, description;
  bool required = true;
  AURA_RETURN_IF_ERROR(
      strings(p, {{"name", &name}, {"type", &type}, {"description", &description}}));
  AURA_ASSIGN_OR_RETURN(required, p.required_bool("required"));
  std::string out = std::string(name) + ": ";
  if (type == "string") {
    std::vector<std::string> values;
    AURA_ASSIGN_OR_RETURN(values, strings_of(p, "enum"));
    if (!values.empty()) {
      out += "one of " + joined(values);
    } else {
      uint64_t min = 0, max = 0;
      AURA_ASSIGN_OR_RETURN(min, p.required_u64("min_bytes"));
      AURA_ASSIGN_OR_RETURN(max, p.required_u64("max_bytes"));
      out += "text of " + std::to_string(min) + ".." + std::to_string(max) + " bytes";
    }
  } else if (type == "integer") {
    int64_t min = 0, max = 0;
    AURA_ASSIGN_OR_RETURN(min, p.required_i64("min"));
    AURA_ASSIGN_OR_RETURN(max, p.required_i64("max"));
    out += "integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  } else if (type == "path") {
    std::vector<std::string> prefixes, excludes;
    AURA_ASSIGN_OR_RETURN(prefixes, strings_of(p, "path_prefixes"));
    AURA_ASSIGN_OR_RETURN(excludes, strings_of(p, "path_excludes"));
    uint64_t max = 0;
    AURA_ASSIGN_OR_RETURN(max, p.required_u64("max_bytes"));
    out += "absolute path under " + joined(prefixes);
    if (!excludes.empty()) out += " (not under " + joined(excludes) + ")";
    out += ", at most " + std::to_string(max) + " bytes";
  } else if (type == "mode") {
    std::string_view mask;
    AURA_ASSIGN_OR_RETURN(mask, p.required_string("mode_mask"));
    out += "mode, 3 or 4 octal digits within " + std::string(mask) + " (\"0750\")";
  } else if (type == "target") {
    std::string_view kind;
    bool literal = false;
    AURA_ASSIGN_OR_RETURN(kind, p.required_string("target_kind"));
    AURA_ASSIGN_OR_RETURN(literal, p.required_bool("allow_literal"));
    std::vector<std::string> terms;
    AURA_ASSIGN_OR_RETURN(terms, terms_of(catalog, kind));
    out += "target of kind " + std::string(kind) + ": " +
           (terms.empty() ? std::string("no term") : joined(terms));
    if (literal) out += ", or {\"literal\":...}";
  } else {
    out += std::string(type);
  }
  if (!required) out += " (optional)";
  if (!description.empty()) out += " -- " + std::string(description);
  return out;
}

Status calls_text(std::ostream& o, const Object& catalog, std::string_view member, bool with_cost) {
  return for_each(catalog, member, [&](const Object& c) -> Status {
    std::string_view name, summary;
    AURA_RETURN_IF_ERROR(strings(c, {{"name", &name}, {"summary", &summary}}));
    o << "  " << name;
    if (with_cost) {
      uint64_t cost = 0;
      AURA_ASSIGN_OR_RETURN(cost, c.required_u64("cost"));
      o << " (cost " << cost << ")";
    }
    o << (summary.empty() ? "" : ": ") << summary << "\n";
    auto params = c.array("params");
    if (!params.ok()) return params.status();
    if (params->size() == 0) o << "      no parameters\n";
    return for_each(c, "params", [&](const Object& p) -> Status {
      std::string line;
      AURA_ASSIGN_OR_RETURN(line, param_text(catalog, p));
      o << "      " << line << "\n";
      return Status::ok();
    });
  });
}

}  // namespace

Result<std::string> catalog_text(std::string_view catalog_json) {
  json::Reader reader(catalog_limits());
  auto parsed = reader.parse_object(catalog_json);
  if (!parsed.ok()) return parsed.status();
  const Object& c = *parsed;
  std::ostringstream o;
  std::string_view attempt, scenario, version, phase;
  uint64_t budget = 0, spent = 0, remaining = 0;
  AURA_RETURN_IF_ERROR(strings(
      c,
      {{"attempt", &attempt}, {"scenario", &scenario}, {"version", &version}, {"phase", &phase}}));
  AURA_ASSIGN_OR_RETURN(budget, c.required_u64("probe_budget"));
  AURA_ASSIGN_OR_RETURN(spent, c.required_u64("spent"));
  AURA_ASSIGN_OR_RETURN(remaining, c.required_u64("remaining"));
  o << "catalog of attempt " << attempt << " (" << scenario << " " << version << "), phase "
    << phase << "\n";
  o << "probe budget " << budget << ": " << spent << " spent, " << remaining << " left\n";

  o << "\nhypotheses (predict one with --hypothesis ID):\n";
  AURA_RETURN_IF_ERROR(for_each(c, "hypotheses", [&](const Object& h) -> Status {
    std::string_view id, text;
    AURA_RETURN_IF_ERROR(strings(h, {{"id", &id}, {"text", &text}}));
    o << "  " << id << ": " << text << "\n";
    return Status::ok();
  }));

  o << "\nprobes (aura attempt probe ATTEMPT '{\"call\":NAME,\"params\":{...}}'; each spends its "
       "cost):\n";
  AURA_RETURN_IF_ERROR(calls_text(o, c, "probes", true));
  o << "\nactions (an InterventionIR's \"actions\" and \"rollback\", each "
       "{\"call\":NAME,\"params\":{...}}):\n";
  AURA_RETURN_IF_ERROR(calls_text(o, c, "actions", false));
  bool scripts = false;
  AURA_ASSIGN_OR_RETURN(scripts, c.required_bool("allow_scripts"));
  o << (scripts ? "  scripts are allowed too: {\"script\":TEXT,\"target\":TARGET of kind node}, "
                  "run only once their SHA-256 is authorised\n"
                : "  (no scripts: this scenario takes catalog actions only)\n");

  o << "\ntarget terms (a target parameter takes {\"role\":NAME} or {\"selector\":NAME} of its "
       "kind; each is resolved in every world the fix runs on):\n";
  AURA_RETURN_IF_ERROR(for_each(c, "targets", [&](const Object& t) -> Status {
    std::string_view name, kind, type, description;
    AURA_RETURN_IF_ERROR(strings(
        t, {{"name", &name}, {"kind", &kind}, {"type", &type}, {"description", &description}}));
    uint64_t max_matches = 0;
    AURA_ASSIGN_OR_RETURN(max_matches, t.required_u64("max_matches"));
    o << "  " << type << " " << name << " (kind " << kind << ", at most " << max_matches
      << "): " << description << "\n";
    return Status::ok();
  }));

  if (c.has("policies")) {
    auto policies = c.array("policies");
    if (!policies.ok()) return policies.status();
    if (policies->size() > 0)
      o << "\npolicies (stated once; every check naming one reads it, so a fix inside a policy "
           "passes them all):\n";
    AURA_RETURN_IF_ERROR(for_each(c, "policies", [&](const Object& p) -> Status {
      std::string_view name, description;
      AURA_RETURN_IF_ERROR(strings(p, {{"name", &name}, {"description", &description}}));
      o << "  " << name << ": " << description << "\n";
      return Status::ok();
    }));
  }

  o << "\nchecks (an InterventionIR's \"postconditions\" and \"invariants\" name them by id):\n";
  AURA_RETURN_IF_ERROR(for_each(c, "checks", [&](const Object& k) -> Status {
    std::string_view id, kind, description;
    AURA_RETURN_IF_ERROR(strings(k, {{"id", &id}, {"kind", &kind}, {"description", &description}}));
    std::vector<std::string> reads;
    if (k.has("policies")) AURA_ASSIGN_OR_RETURN(reads, strings_of(k, "policies"));
    o << "  " << kind << " " << id << ": " << description
      << (reads.empty() ? std::string() : " [reads " + joined(reads) + "]") << "\n";
    return Status::ok();
  }));

  if (auto changes = c.optional_value("changes")) {
    Object ch;
    AURA_ASSIGN_OR_RETURN(ch, changes->as_object());
    o << "\nchange surface (the gate reads every path a fix changed; a change outside these "
         "fails it, runtime state aside):\n";
    for (std::string_view list : {"fix", "runtime"}) {
      AURA_RETURN_IF_ERROR(for_each(ch, list, [&](const Object& r) -> Status {
        std::string_view name, description;
        AURA_RETURN_IF_ERROR(strings(r, {{"name", &name}, {"description", &description}}));
        std::vector<std::string> paths, what;
        AURA_ASSIGN_OR_RETURN(paths, strings_of(r, "paths"));
        if (list == "fix") {
          AURA_ASSIGN_OR_RETURN(what, strings_of(r, "what"));
        }
        o << "  " << (list == "fix" ? "fix may change " : "runtime (the world writes) ")
          << joined(paths) << (list == "fix" ? " (" + joined(what) + ")" : std::string()) << ": "
          << description << " [" << name << "]\n";
        return Status::ok();
      }));
    }
  }
  return o.str();
}

}  // namespace aura::cli
