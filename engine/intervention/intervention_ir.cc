#include "engine/intervention/intervention_ir.h"

#include <algorithm>
#include <array>
#include <optional>

#include "engine/scenario/call_dom.h"

namespace aura::intervention {
namespace {

namespace sj = scenario::json;
using sj::Element;

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

constexpr std::array<std::string_view, 2> kScriptMembers = {"script", "target"};

Status invalid_at(std::string_view path, std::string_view what) {
  return Status::invalid(std::string(path) + ": " + std::string(what));
}

std::string with_article(scenario::CheckKind kind) {
  return (kind == scenario::CheckKind::kInvariant ? "an " : "a ") +
         std::string(scenario::check_kind_name(kind));
}

std::string root_path(Member member) { return sj::member_path("$", kMembers[member]); }

Result<simdjson::dom::array> array_of(Element value, std::string_view path) {
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return invalid_at(path, "expected an array, found " + std::string(sj::type_name(value)));
  }
  return array;
}

// Free text written by the learner: 1..kMaxTextBytes, not blank, no control characters but
// tab and line breaks.
Result<std::string> text_of(Element value, std::string_view path, std::string_view if_empty) {
  auto text = sj::string_of(value, path);
  if (!text.ok()) return text.status();
  bool blank = std::all_of(text->begin(), text->end(),
                           [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
  if (blank) return invalid_at(path, "empty (" + std::string(if_empty) + ")");
  if (text->size() > kMaxTextBytes) {
    return invalid_at(path, std::to_string(text->size()) + " bytes, more than the maximum " +
                                std::to_string(kMaxTextBytes));
  }
  if (sj::has_control(*text, "\t\n\r")) return invalid_at(path, "contains a control character");
  return std::string(*text);
}

Status check_version(simdjson::dom::object root, const std::optional<Element>& v) {
  std::string path = root_path(kV);
  if (!v) return invalid_at(path, "missing (the first member must be \"v\": 1)");
  if ((*root.begin()).key != "v") return invalid_at(path, "must be the first member");
  int64_t version = 0;
  if (v->type() != simdjson::dom::element_type::INT64 ||
      v->get_int64().get(version) != simdjson::SUCCESS) {
    return invalid_at(path, "expected the integer 1, found " + std::string(sj::type_name(*v)));
  }
  if (version != 1) {
    return invalid_at(path, "unsupported version " + std::to_string(version) +
                                " (this validator reads version 1)");
  }
  return Status::ok();
}

Result<std::string> parse_hypothesis(Element value, const scenario::Manifest& manifest) {
  std::string path = root_path(kHypothesis);
  auto id = sj::string_of(value, path);
  if (!id.ok()) return id.status();
  bool known = std::any_of(manifest.hypotheses.begin(), manifest.hypotheses.end(),
                           [&](const scenario::Hypothesis& h) { return h.id == *id; });
  if (!known) return invalid_at(path, sj::quoted(*id) + " is not a hypothesis of this scenario");
  return std::string(*id);
}

Result<std::vector<std::string>> parse_evidence(Element value, const IrContext& context) {
  std::string path = root_path(kEvidence);
  auto array = array_of(value, path);
  if (!array.ok()) return array.status();
  if (array->size() == 0) {
    return invalid_at(path, "empty (cite at least one piece of evidence a probe unlocked)");
  }
  if (array->size() > kMaxEvidence) {
    return invalid_at(path, "more than " + std::to_string(kMaxEvidence) + " ids");
  }
  std::vector<std::string> ids;
  for (Element item : *array) {
    std::string item_path = sj::index_path(path, ids.size());
    auto id = sj::string_of(item, item_path);
    if (!id.ok()) return id.status();
    auto earlier = std::find(ids.begin(), ids.end(), *id);
    if (earlier != ids.end()) {
      return invalid_at(item_path, sj::quoted(*id) + " is cited twice (also " +
                                       sj::index_path(path, size_t(earlier - ids.begin())) + ")");
    }
    if (!context.unlocked_evidence.contains(std::string(*id))) {
      return invalid_at(item_path, sj::quoted(*id) + " is not unlocked in this attempt");
    }
    ids.emplace_back(*id);
  }
  return ids;
}

Result<std::vector<std::string>> parse_checks(Element value, Member member,
                                              scenario::CheckKind kind,
                                              const scenario::Manifest& manifest) {
  std::string path = root_path(member);
  auto array = array_of(value, path);
  if (!array.ok()) return array.status();
  std::vector<std::string> ids;
  for (Element item : *array) {
    std::string item_path = sj::index_path(path, ids.size());
    auto id = sj::string_of(item, item_path);
    if (!id.ok()) return id.status();
    const scenario::CheckSpec* check = manifest.find_check(*id);
    if (check == nullptr) {
      return invalid_at(item_path, sj::quoted(*id) + " is not a check of this scenario");
    }
    if (check->kind != kind) {
      return invalid_at(item_path, sj::quoted(*id) + " is " + with_article(check->kind) +
                                       " check, not " + with_article(kind));
    }
    auto earlier = std::find(ids.begin(), ids.end(), *id);
    if (earlier != ids.end()) {
      return invalid_at(item_path, sj::quoted(*id) + " is listed twice (also " +
                                       sj::index_path(path, size_t(earlier - ids.begin())) + ")");
    }
    ids.emplace_back(*id);
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

Result<Action> parse_script(Element value, std::string_view path,
                            const scenario::Manifest& manifest) {
  std::string script_path = sj::member_path(path, "script");
  if (!manifest.allow_scripts) {
    return invalid_at(script_path,
                      "scripts are not allowed in this scenario (use a catalog action)");
  }
  auto members = sj::members_of(value, path, kScriptMembers);
  if (!members.ok()) return members.status();
  std::string target_path = sj::member_path(path, "target");
  if (!(*members)[1]) return invalid_at(target_path, "missing");

  auto script = sj::string_of(*(*members)[0], script_path);
  if (!script.ok()) return script.status();
  if (script->empty()) return invalid_at(script_path, "empty");
  if (script->size() > kMaxScriptBytes) {
    return invalid_at(script_path, std::to_string(script->size()) +
                                       " bytes, more than the maximum " +
                                       std::to_string(kMaxScriptBytes));
  }
  if (script->find('\0') != std::string_view::npos) {
    return invalid_at(script_path, "contains a NUL byte");
  }

  auto target = sj::parse_target(*(*members)[1], target_path);
  if (!target.ok()) return target.status();
  AURA_RETURN_IF_ERROR(scenario::check_param(script_target_schema(), scenario::ParamValue(*target),
                                             manifest, target_path));
  Action action;
  action.is_script = true;
  action.script = std::string(*script);
  action.script_target = std::move(target).value();
  action.script_sha256 = sha256(action.script);
  return action;
}

Result<Action> parse_action(Element value, std::string_view path,
                            const scenario::Manifest& manifest) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return invalid_at(path,
                      "expected an action object, found " + std::string(sj::type_name(value)));
  }
  Element ignored;
  if (object["call"].get(ignored) == simdjson::SUCCESS) {
    auto call = sj::parse_call_value(value, manifest.actions, manifest, path);
    if (!call.ok()) return call.status();
    Action action;
    action.call = std::move(call).value();
    return action;
  }
  if (object["script"].get(ignored) == simdjson::SUCCESS)
    return parse_script(value, path, manifest);
  return invalid_at(path,
                    "an action is {\"call\": name, \"params\": {...}} or "
                    "{\"script\": text, \"target\": target}");
}

Result<std::vector<Action>> parse_actions(Element value, Member member,
                                          const scenario::Manifest& manifest,
                                          std::string_view if_empty) {
  std::string path = root_path(member);
  auto array = array_of(value, path);
  if (!array.ok()) return array.status();
  if (array->size() == 0) return invalid_at(path, "empty (" + std::string(if_empty) + ")");
  if (array->size() > kMaxActions) {
    return invalid_at(path, "more than " + std::to_string(kMaxActions) + " actions");
  }
  std::vector<Action> actions;
  for (Element item : *array) {
    auto action = parse_action(item, sj::index_path(path, actions.size()), manifest);
    if (!action.ok()) return action.status();
    actions.push_back(std::move(action).value());
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
  simdjson::dom::parser parser;
  auto root = sj::parse_strict(parser, json, kMaxDepth, "$");
  if (!root.ok()) return root.status();
  simdjson::dom::object object;
  if (root->get_object().get(object) != simdjson::SUCCESS) {
    return Status::invalid("$: expected an object, found " + std::string(sj::type_name(*root)));
  }
  auto members = sj::members_of(*root, "$", kMembers);
  if (!members.ok()) return members.status();
  const auto& m = *members;
  AURA_RETURN_IF_ERROR(check_version(object, m[kV]));
  for (Member required : {kHypothesis, kClaim, kEvidence, kFalsifier, kActions, kRollback}) {
    if (!m[required]) return invalid_at(root_path(required), "missing");
  }

  Intervention ir;
  auto hypothesis = parse_hypothesis(*m[kHypothesis], manifest);
  if (!hypothesis.ok()) return hypothesis.status();
  ir.hypothesis = std::move(hypothesis).value();

  auto claim = text_of(*m[kClaim], root_path(kClaim), "say what you believe the cause is");
  if (!claim.ok()) return claim.status();
  ir.claim = std::move(claim).value();

  auto evidence = parse_evidence(*m[kEvidence], context);
  if (!evidence.ok()) return evidence.status();
  ir.evidence = std::move(evidence).value();

  auto falsifier = text_of(*m[kFalsifier], root_path(kFalsifier),
                           "say what observation would prove the claim wrong");
  if (!falsifier.ok()) return falsifier.status();
  ir.falsifier = std::move(falsifier).value();

  auto actions = parse_actions(*m[kActions], kActions, manifest, "at least one action");
  if (!actions.ok()) return actions.status();
  ir.actions = std::move(actions).value();

  if (m[kPostconditions]) {
    auto ids = parse_checks(*m[kPostconditions], kPostconditions,
                            scenario::CheckKind::kPostcondition, manifest);
    if (!ids.ok()) return ids.status();
    ir.postconditions = std::move(ids).value();
  }
  if (m[kInvariants]) {
    auto ids =
        parse_checks(*m[kInvariants], kInvariants, scenario::CheckKind::kInvariant, manifest);
    if (!ids.ok()) return ids.status();
    ir.invariants = std::move(ids).value();
  }

  auto rollback = parse_actions(*m[kRollback], kRollback, manifest, "say how to undo the actions");
  if (!rollback.ok()) return rollback.status();
  ir.rollback = std::move(rollback).value();
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
