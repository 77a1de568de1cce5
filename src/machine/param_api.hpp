// The machine layer's parameter API: one cost, tunable, noise or [[background]] value read and
// written by its key, for code outside the layer that computes parameters (host calibrate).
// params() in machine.hpp lists the keys with their units and bounds.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "machine/machine.hpp"

namespace schedlab::machine {

// Reading and writing one cost, tunable or noise parameter by its key, for code outside the
// machine layer that computes parameters (host calibrate): find_param() gives its unit and
// bounds (nullopt for a key params() does not list); param_value() its value in m (a bool as
// 0 or 1); set_param() sets it, rounded to the nearest integer for an integer field. Both throw
// ProfileError for an unknown key; set_param() also for a value outside [min, max].
std::optional<ParamInfo> find_param(const std::string& key);
double param_value(const Machine& m, const std::string& key);
void set_param(Machine& m, const std::string& key, double value);
// The Recorded values of a [[background]] table, `key` written as "background.<field>" (e.g.
// "background.rate_hz"), and the value of one of them in an activity (field without the
// prefix; throws ProfileError for an unknown one).
std::vector<ParamInfo> background_params();
Recorded& background_value(BackgroundActivity& a, const std::string& field);

}  // namespace schedlab::machine
