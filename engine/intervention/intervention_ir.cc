#include "engine/intervention/intervention_ir.h"

#include <algorithm>
#include <array>
#include <optional>

#include "engine/json/json_reader.h"
#include "engine/json/value_type.h"
#include "engine/scenario/call_dom.h"
#include "engine/scenario/manifest_format.h"
#include "engine/scenario/names.h"

namespace aura::intervention {
namespace {

namespace strict = ::aura::json;
namespace mf = scenario::manifest_format;
namespace sj = scenario::call_reader;
using strict::Array;
using strict::Object;
using strict::Value;

// Root members, in the order they are validated (and conventionally written).
constexpr std::array<std::string_view, 9> kMembers = {
    "v",       "hypothesis",     "claim",      "evidence", "falsifier",
    "actions", "postconditions", "invariants", "rollback"};
enum Member : size_t {
  kV,
  kHypothesis,
  kClaim,
  kEvidence,
  kFalsifier,
  kActions,
  kPostconditions,
  kInvariants,
  kRollback,
};

// The whole document is checked against these before any member is read: its size and nesting
// (kMaxIrBytes, kMaxDepth), duplicates at any depth, and bounds no valid document comes near.
strict::Limits ir_limits() {
  strict::Limits limits;
  limits.max_bytes = kMaxIrBytes;
  limits.max_depth = kMaxDepth;
  // The root has 9 members, an action 2, a call's params one per parameter of its entry.
  limits.max_members = mf::kMaxParams;
  // The longest list: the evidence ids (a postcondition or invariant is named once, and a
  // manifest has at most mf::kMaxChecks checks).
  limits.max_elements = std::max({kMaxEvidence, kMaxActions, mf::kMaxChecks});
  // The longest string: a script's text, or a string parameter at its schema's largest.
  limits.max_string_bytes = std::max(kMaxScriptBytes, static_cast<size_t>(mf::kMaxStringBytes));
  limits.style = strict::PathStyle::kJsonPath;
  return limits;
}

// "$.evidence[0]": a value's path as the reader writes it in this document's messages.
std::string json_path(const Value& v) {
  return v.path().empty() ? "$" : (v.path()[0] == '[' ? "$" : "$.") + v.path();
}

std::string with_article(scenario::CheckKind kind) {
  return (kind == scenario::CheckKind::kInvariant ? "an " : "a ") +
         std::string(scenario::check_kind_name(kind));
}

// "expected <what>, found <what the value is>", at the value.
Status expected(const Value& v, std::string_view what) {
  return v.error("expected " + std::string(what) + ", found " + std::string(strict::type_name(v)));
}

Result<std::string_view> string_of(const Value& v) {
  auto text = v.as_string();
  if (!text.ok()) return expected(v, "a string");
  return *text;
}

// An array of at most `max_elements` (the reader's refusal names the bound).
Result<Array> array_of(const Value& v, size_t max_elements) {
  if (!v.as_array().ok()) return expected(v, "an array");
  return v.as_array(max_elements);
}

// Free text written by the learner: 1..kMaxTextBytes, not blank, no control characters but
// tab and line breaks.
Result<std::string> text_of(const Value& v, std::string_view if_empty) {
  std::string_view text;
  AURA_ASSIGN_OR_RETURN(text, string_of(v));
  bool blank = std::all_of(text.begin(), text.end(),
                           [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
  if (blank) return v.error("empty (" + std::string(if_empty) + ")");
  if (text.size() > kMaxTextBytes) {
    return v.error(std::to_string(text.size()) + " bytes, more than the maximum " +
                   std::to_string(kMaxTextBytes));
  }
  if (sj::has_control(text, "\t\n\r")) return v.error("contains a control character");
  return std::string(text);
}

Status check_version(const Object& root, const std::optional<Value>& v) {
  if (!v) return root.error("v", "missing (the first member must be \"v\": 1)");
  if (root.first_name() != "v") return v->error("must be the first member");
  auto version = v->as_i64();
  if (!version.ok()) return expected(*v, "the integer 1");
  if (*version != 1) {
    return v->error("unsupported version " + std::to_string(*version) +
                    " (this validator reads version 1)");
  }
  return Status::ok();
}

Result<std::string> parse_hypothesis(const Value& v, const scenario::Manifest& manifest) {
  std::string_view id;
  AURA_ASSIGN_OR_RETURN(id, string_of(v));
  bool known = std::any_of(manifest.hypotheses.begin(), manifest.hypotheses.end(),
                           [&](const scenario::Hypothesis& h) { return h.id == id; });
  if (!known) {
    return v
        .error(scenario::unknown_name(sj::quoted(id), id, "is not a hypothesis of this scenario",
                                      "its hypotheses", scenario::hypothesis_ids(manifest)))
        .with_expected(scenario::hypothesis_ids(manifest));
  }
  return std::string(id);
}

Result<std::vector<std::string>> parse_evidence(const Value& v, const IrContext& context) {
  Array array;
  AURA_ASSIGN_OR_RETURN(array, array_of(v, kMaxEvidence));
  if (array.size() == 0) {
    return v.error("empty (cite at least one piece of evidence a probe unlocked)");
  }
  std::vector<std::string> ids;
  const std::vector<Value> items = array.elements();
  for (const Value& item : items) {
    std::string_view id;
    AURA_ASSIGN_OR_RETURN(id, string_of(item));
    auto earlier = std::find(ids.begin(), ids.end(), id);
    if (earlier != ids.end()) {
      return item.error(sj::quoted(id) + " is cited twice (also " +
                        json_path(items[size_t(earlier - ids.begin())]) + ")");
    }
    if (!context.unlocked_evidence.contains(std::string(id))) {
      // Listed in the order the probes unlocked them (ev-2 before ev-10).
      std::vector<std::string> unlocked(context.unlocked_evidence.begin(),
                                        context.unlocked_evidence.end());
      std::stable_sort(unlocked.begin(), unlocked.end(),
                       [](const std::string& a, const std::string& b) {
                         return a.size() != b.size() ? a.size() < b.size() : a < b;
                       });
      return item.error(sj::quoted(id) + " is not unlocked in this attempt; unlocked so far: " +
                        scenario::name_list(unlocked));
    }
    ids.emplace_back(id);
  }
  return ids;
}

Result<std::vector<std::string>> parse_checks(const Value& v, scenario::CheckKind kind,
                                              const scenario::Manifest& manifest) {
  Array array;
  AURA_ASSIGN_OR_RETURN(array, array_of(v, mf::kMaxChecks));
  std::vector<std::string> ids;
  const std::vector<Value> items = array.elements();
  for (const Value& item : items) {
    std::string_view id;
    AURA_ASSIGN_OR_RETURN(id, string_of(item));
    const scenario::CheckSpec* check = manifest.find_check(id);
    const std::string label = "its " + std::string(scenario::check_kind_name(kind)) + "s";
    if (check == nullptr) {
      return item
          .error(scenario::unknown_name(sj::quoted(id), id, "is not a check of this scenario",
                                        label, scenario::check_ids(manifest, kind)))
          .with_expected(scenario::check_ids(manifest, kind));
    }
    if (check->kind != kind) {
      return item.error(sj::quoted(id) + " is " + with_article(check->kind) + " check, not " +
                        with_article(kind) + "; " + label + ": " +
                        scenario::name_list(scenario::check_ids(manifest, kind)));
    }
    auto earlier = std::find(ids.begin(), ids.end(), id);
    if (earlier != ids.end()) {
      return item.error(sj::quoted(id) + " is listed twice (also " +
                        json_path(items[size_t(earlier - ids.begin())]) + ")");
    }
    ids.emplace_back(id);
  }
  return ids;
}

// Where a script runs is validated like a target parameter of kind "node" with the default
// literal rules (a literal names one node in one world).
const scenario::ParamSchema& script_target_schema() {
  static const scenario::ParamSchema schema = [] {
    scenario::ParamSchema s;
    s.name = "target";
    s.type = scenario::ParamType::kTarget;
    s.target_kind = "node";
    return s;
  }();
  return schema;
}

Result<Action> parse_script(const Object& object, const scenario::Manifest& manifest) {
  if (!manifest.allow_scripts) {
    return object.error("script",
                        "scripts are not allowed in this scenario (use a catalog action)");
  }
  const std::optional<Value> script_value = object.optional_value("script");
  const std::optional<Value> target_value = object.optional_value("target");
  AURA_RETURN_IF_ERROR(object.done());
  if (!target_value) return object.error("target", "missing");

  // Its length is bounded by the reader (kMaxScriptBytes, ir_limits()).
  std::string_view script;
  AURA_ASSIGN_OR_RETURN(script, string_of(*script_value));
  if (script.empty()) return script_value->error("empty");
  if (script.find('\0') != std::string_view::npos) {
    return script_value->error("contains a NUL byte");
  }

  scenario::Target target;
  AURA_ASSIGN_OR_RETURN(target, sj::parse_target(*target_value));
  AURA_RETURN_IF_ERROR(sj::check_param_at(script_target_schema(), scenario::ParamValue(target),
                                          manifest, *target_value));
  Action action;
  action.is_script = true;
  action.script = std::string(script);
  action.script_target = std::move(target);
  action.script_sha256 = sha256(action.script);
  return action;
}

Result<Action> parse_action(const Value& v, const scenario::Manifest& manifest) {
  auto object = v.as_object();
  if (!object.ok()) return expected(v, "an action object");
  if (object->has("call")) {
    Action action;
    AURA_ASSIGN_OR_RETURN(action.call, sj::parse_call_value(v, manifest.actions, manifest));
    return action;
  }
  if (object->has("script")) return parse_script(*object, manifest);
  return v.error(
      "an action is {\"call\": name, \"params\": {...}} or "
      "{\"script\": text, \"target\": target}");
}

Result<std::vector<Action>> parse_actions(const Value& v, const scenario::Manifest& manifest,
                                          std::string_view if_empty) {
  Array array;
  AURA_ASSIGN_OR_RETURN(array, array_of(v, kMaxActions));
  if (array.size() == 0) return v.error("empty (" + std::string(if_empty) + ")");
  std::vector<Action> actions;
  for (const Value& item : array.elements()) {
    Action action;
    AURA_ASSIGN_OR_RETURN(action, parse_action(item, manifest));
    actions.push_back(std::move(action));
  }
  return actions;
}

}  // namespace

Result<Intervention> parse_intervention(std::string_view json, const IrContext& context) {
  if (context.manifest == nullptr) {
    return Status::failed_precondition("intervention: no manifest in the validation context");
  }
  const scenario::Manifest& manifest = *context.manifest;
  if (json.size() > kMaxIrBytes) {
    return Status::invalid("$: document is " + std::to_string(json.size()) +
                           " bytes, over the limit of " + std::to_string(kMaxIrBytes) +
                           " (refused before parsing)");
  }
  // Nesting is checked on the raw bytes first: no parser sees a document nested past kMaxDepth,
  // and the first container too deep is named however deep the document goes (the reader's own
  // depth bound names it only within the parser's).
  AURA_RETURN_IF_ERROR(sj::check_depth(json, kMaxDepth, "$"));
  strict::Reader reader(ir_limits());
  auto root_value = reader.parse(json);
  if (!root_value.ok()) return root_value.status();
  auto root = root_value->as_object();
  if (!root.ok()) return expected(*root_value, "an object");
  // Every member is looked up first, so an unknown one is refused before any value is read.
  std::array<std::optional<Value>, kMembers.size()> m;
  for (size_t i = 0; i < kMembers.size(); ++i) m[i] = root->optional_value(kMembers[i]);
  AURA_RETURN_IF_ERROR(root->done());
  AURA_RETURN_IF_ERROR(check_version(*root, m[kV]));
  for (Member required : {kHypothesis, kClaim, kEvidence, kFalsifier, kActions, kRollback}) {
    if (!m[required]) return root->error(kMembers[required], "missing");
  }

  Intervention ir;
  AURA_ASSIGN_OR_RETURN(ir.hypothesis, parse_hypothesis(*m[kHypothesis], manifest));
  AURA_ASSIGN_OR_RETURN(ir.claim, text_of(*m[kClaim], "say what you believe the cause is"));
  AURA_ASSIGN_OR_RETURN(ir.evidence, parse_evidence(*m[kEvidence], context));
  AURA_ASSIGN_OR_RETURN(
      ir.falsifier, text_of(*m[kFalsifier], "say what observation would prove the claim wrong"));
  AURA_ASSIGN_OR_RETURN(ir.actions, parse_actions(*m[kActions], manifest, "at least one action"));
  if (m[kPostconditions]) {
    AURA_ASSIGN_OR_RETURN(
        ir.postconditions,
        parse_checks(*m[kPostconditions], scenario::CheckKind::kPostcondition, manifest));
  }
  if (m[kInvariants]) {
    AURA_ASSIGN_OR_RETURN(ir.invariants,
                          parse_checks(*m[kInvariants], scenario::CheckKind::kInvariant, manifest));
  }
  AURA_ASSIGN_OR_RETURN(ir.rollback,
                        parse_actions(*m[kRollback], manifest, "say how to undo the actions"));
  return ir;
}

Digest intervention_digest(std::string_view json) { return sha256(json); }

std::vector<const Action*> scripts_of(const Intervention& ir) {
  std::vector<const Action*> scripts;
  for (const auto* list : {&ir.actions, &ir.rollback}) {
    for (const Action& action : *list) {
      if (action.is_script) scripts.push_back(&action);
    }
  }
  return scripts;
}

}  // namespace aura::intervention
