// What a learner is told about a property the gate failed: the check that decided it, its public
// description, and what was observed, in words the grader makes from pass or fail per check and
// world role alone. Never a world's own text, a world id, a node, a path or a check parameter:
// those would describe the hidden twin or control. Pure, like the grader (docs/GATE.md).
#pragma once

#include <string>
#include <vector>

#include "engine/gate/grader.h"

namespace aura::gate {

// The finding for property `p`, which grading `facts` against `spec` failed.
Finding learner_finding(const GateSpec& spec, const std::vector<Fact>& facts, Property p);

// "fleet-healthy: every web node serves its page -- observed: did not hold on ...".
std::string finding_text(const Finding& f);

}  // namespace aura::gate
