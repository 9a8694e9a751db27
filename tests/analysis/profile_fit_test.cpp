// ProfileFit with a stand-in simulator: the analytic transfer model driven by
// the profile document, so a hidden "true" profile produces the measurements
// and the fit must find it again through the PredictFn seam only.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/calibration.hpp"
#include "analysis/profile_fit.hpp"
#include "analysis/transfer_model.hpp"

namespace sluice::analysis {
namespace {

nlohmann::json base_profile() {
  return {{"format", "sluice-sim-profile"},
          {"version", 1},
          {"name", "default"},
          {"link_classes", {{"network", {{"bandwidth_factor", 0.97}, {"latency_factor", 1.0}}}}},
          {"network", {{"message_overhead_bytes", 66}}},
          {"cpu", {{"cost_ns_per_unit", {{"storage_request", 1000}, {"client_request", 500}}}}},
          {"disk", {{"read_latency_ns", 77000}, {"write_latency_ns", 18000}, {"request_occupancy_ns", 1571}}},
          {"memory", {{"memory_op_bytes_per_s", 1e10}}}};
}

struct FakePoint {
  double link_bits_per_s;
  double file_bytes;
  double stripe_count;
};

const std::vector<FakePoint> k_points = {{200e6, 4 << 20, 1},  {200e6, 16 << 20, 2}, {500e6, 4 << 20, 2},
                                         {500e6, 16 << 20, 1}, {200e6, 8 << 20, 1},  {500e6, 8 << 20, 2}};

// The stand-in simulator: throughput of each point from the profile's
// bandwidth factor and per-request cost (the disk fields have no effect).
std::vector<RunRecord> simulate(const nlohmann::json& profile, const std::vector<FakePoint>& points) {
  TransferParams p;
  p.network_bandwidth_factor = profile["link_classes"]["network"]["bandwidth_factor"].get<double>();
  p.request_service_s = profile["cpu"]["cost_ns_per_unit"]["storage_request"].get<double>() * 1e-9;
  std::vector<RunRecord> out;
  for (const FakePoint& fp : points) {
    TransferPoint t;
    t.link_bytes_per_s = fp.link_bits_per_s / 8;
    t.file_bytes = fp.file_bytes;
    t.chunk_bytes = 1 << 20;
    t.stripe_count = fp.stripe_count;
    RunRecord r;
    r.scenario = "fake";
    r.backend = "sim";
    r.ok = true;
    r.params = {{"link", std::to_string(fp.link_bits_per_s)}, {"file", std::to_string(fp.file_bytes)}};
    PhaseRecord read;
    read.phase = "read";
    read.bytes_per_s = predict_bytes_per_s(p, t);
    PhaseRecord write = read;
    write.phase = "write";
    write.bytes_per_s *= 0.9;
    r.phases = {write, read};
    out.push_back(r);
  }
  return out;
}

nlohmann::json truth_profile() {
  nlohmann::json t = base_profile();
  t["link_classes"]["network"]["bandwidth_factor"] = 0.91;
  t["cpu"]["cost_ns_per_unit"]["storage_request"] = 2'000'000;  // 2 ms per request: visible at these sizes
  return t;
}

PredictFn fake_predict(std::size_t* calls = nullptr) {
  return [calls](const nlohmann::json& profile) -> Result<std::vector<RunRecord>> {
    if (calls != nullptr) ++*calls;
    return simulate(profile, k_points);
  };
}

TEST(ProfileFit, RecoversHiddenParametersThroughTheSimulatorSeam) {
  const std::vector<RunRecord> measured = simulate(truth_profile(), k_points);
  ProfileFitOptions o;
  o.params = {"network.bandwidth_factor", "cpu.storage_request"};
  o.prior_weight = 0.001;
  o.max_iterations = 30;
  std::size_t calls = 0;
  Result<ProfileFit> fit = fit_profile(base_profile(), measured, fake_predict(&calls), o);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_NEAR(fit->values[0], 0.91, 0.005);
  EXPECT_NEAR(fit->values[1], 2'000'000, 60'000);
  EXPECT_LT(fit->rms_rel_residual, 0.005);
  // The base profile was visibly wrong on these points, so the fit did the work.
  double start_max = 0;
  for (double e : fit->start_rel_errors) start_max = std::max(start_max, std::fabs(e));
  EXPECT_GT(start_max, 0.05);
  EXPECT_EQ(fit->evaluations, calls);
  EXPECT_EQ(fit->profile["link_classes"]["network"]["bandwidth_factor"].get<double>(), fit->values[0]);
  EXPECT_TRUE(fit->profile["cpu"]["cost_ns_per_unit"]["storage_request"].is_number_integer());
  // Each fitted parameter's source now names the fit (sim_profile.hpp parameter_sources).
  EXPECT_TRUE(fit->profile["sources"]["link_classes.network.bandwidth_factor"].get<std::string>().starts_with("fit: "));
  EXPECT_TRUE(fit->profile["sources"]["cpu.cost_ns_per_unit.storage_request"].get<std::string>().starts_with("fit: "));
  EXPECT_EQ(fit->profile["sources"].size(), 2u);
  // Held-out points (other sizes, stripe count 3, 300 Mb/s) predicted with the fitted profile.
  const std::vector<FakePoint> held = {{300e6, 6 << 20, 3}, {300e6, 24 << 20, 3}};
  Result<std::vector<double>> errs = paired_rel_errors(simulate(fit->profile, held), simulate(truth_profile(), held),
                                                       {"write", "read"}, "bytes_per_s");
  ASSERT_TRUE(errs.ok());
  for (double e : *errs) EXPECT_LT(std::fabs(e), 0.01);
}

TEST(ProfileFit, KeepsAParameterTheMeasurementsDoNotDetermineNearItsBaseValue) {
  const std::vector<RunRecord> measured = simulate(truth_profile(), k_points);
  ProfileFitOptions o;
  o.params = {"network.bandwidth_factor", "cpu.storage_request", "disk.read_latency_ns"};
  o.max_iterations = 30;  // storage_request has a factor of 2000 to go
  o.prior_weight = 0.001;
  Result<ProfileFit> fit = fit_profile(base_profile(), measured, fake_predict(), o);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_NEAR(fit->values[2], 77000, 770);  // no effect on the fake: the prior holds it
  EXPECT_NEAR(fit->values[0], 0.91, 0.01);
  // ... and its standard error says the measurements do not determine it.
  ASSERT_EQ(fit->log_std_errors.size(), 3u);
  EXPECT_TRUE(std::isinf(fit->log_std_errors[2]));
  EXPECT_NE(fitted_value_text(*fit, 2).find("not determined"), std::string::npos) << fitted_value_text(*fit, 2);
  EXPECT_TRUE(std::isfinite(fit->log_std_errors[0]));
}

// Measurements with a known scatter (each point off by a fixed +-2%): the
// standard errors come out of the order the scatter allows, the 95%
// intervals hold the truth, and held-out prediction intervals hold the
// held-out measurements made with the same scatter.
TEST(ProfileFit, StandardErrorsAndPredictionIntervalsFollowTheScatterOfTheMeasurements) {
  std::vector<RunRecord> measured = simulate(truth_profile(), k_points);
  const double scatter[] = {1.02, 0.98, 0.985, 1.015, 1.01, 0.99, 0.98, 1.02, 1.02, 0.98, 0.99, 1.01};
  std::size_t i = 0;
  for (RunRecord& r : measured) {
    for (PhaseRecord& p : r.phases) p.bytes_per_s *= scatter[i++ % std::size(scatter)];
  }
  ProfileFitOptions o;
  o.params = {"network.bandwidth_factor", "cpu.storage_request"};
  o.prior_weight = 0.001;
  o.robust_scale = 0;
  o.max_iterations = 30;
  Result<ProfileFit> fit = fit_profile(base_profile(), measured, fake_predict(), o);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  ASSERT_EQ(fit->log_std_errors.size(), 2u);
  const double truth[] = {0.91, 2'000'000};
  for (std::size_t k = 0; k < 2; ++k) {
    const double se = fit->log_std_errors[k];
    EXPECT_GT(se, 1e-4) << fit->names[k];
    EXPECT_LT(se, 0.2) << fit->names[k];
    EXPECT_LE(std::fabs(std::log(fit->values[k] / truth[k])), fit->t95 * se) << fitted_value_text(*fit, k);
  }
  EXPECT_NEAR(fit->t95, 2.228, 0.01) << "12 observations, 2 parameters: t(0.975, 10)";
  const std::vector<FakePoint> held = {{300e6, 6 << 20, 3}, {300e6, 24 << 20, 3}};
  const std::vector<RunRecord> predicted = simulate(fit->profile, held);
  const PredictFn predict_held = [&held](const nlohmann::json& profile) -> Result<std::vector<RunRecord>> {
    return simulate(profile, held);
  };
  Result<std::vector<PredictionInterval>> intervals =
      prediction_intervals(base_profile(), *fit, predicted, predict_held, {"write", "read"}, "bytes_per_s");
  ASSERT_TRUE(intervals.ok()) << intervals.status().to_string();
  ASSERT_EQ(intervals->size(), 4u);
  const std::vector<RunRecord> truth_held = simulate(truth_profile(), held);
  std::size_t row = 0;
  for (const RunRecord& r : truth_held) {
    for (const PhaseRecord& p : r.phases) {
      const PredictionInterval& pi = (*intervals)[row++];
      EXPECT_LT(pi.low, pi.predicted);
      EXPECT_GT(pi.high, pi.predicted);
      EXPECT_GE(p.bytes_per_s * 1.02, pi.low);
      EXPECT_LE(p.bytes_per_s * 0.98, pi.high);
      EXPECT_LT(pi.high / pi.low, 1.5) << "an interval as wide as the scatter allows, not wider";
    }
  }
}

TEST(ProfileFit, StopsAtTheSimulatorCallLimit) {
  const std::vector<RunRecord> measured = simulate(truth_profile(), k_points);
  ProfileFitOptions o;
  o.params = {"network.bandwidth_factor", "cpu.storage_request"};
  o.max_evaluations = 4;
  std::size_t calls = 0;
  Result<ProfileFit> fit = fit_profile(base_profile(), measured, fake_predict(&calls), o);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  // The limit, the final prediction of the written profile, and one call per
  // parameter for the standard errors.
  EXPECT_LE(calls, 4u + 1u + 2u);
  EXPECT_FALSE(fit->converged);
  EXPECT_NE(fit->failed_candidates.find("max_evaluations"), std::string::npos) << fit->failed_candidates;
}

TEST(ProfileFit, StepsBackFromCandidatesTheSimulatorFailsOn) {
  const std::vector<RunRecord> measured = simulate(truth_profile(), k_points);
  ProfileFitOptions o;
  o.params = {"network.bandwidth_factor", "cpu.storage_request"};
  o.prior_weight = 0.001;
  o.max_iterations = 30;
  // The stand-in cannot simulate a bandwidth factor below 0.905 (as sim times out an RPC).
  const PredictFn fragile = [](const nlohmann::json& profile) -> Result<std::vector<RunRecord>> {
    if (profile["link_classes"]["network"]["bandwidth_factor"].get<double>() < 0.905) {
      return error(StatusCode::timed_out, "no reply");
    }
    return simulate(profile, k_points);
  };
  Result<ProfileFit> fit = fit_profile(base_profile(), measured, fragile, o);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_GE(fit->values[0], 0.905);
  EXPECT_NEAR(fit->values[0], 0.91, 0.005);
}

TEST(ProfileFit, RefusesUnknownParametersAndUnderdeterminedFits) {
  const std::vector<RunRecord> measured = simulate(truth_profile(), k_points);
  ProfileFitOptions unknown;
  unknown.params = {"network.bandwith_factor"};
  Result<ProfileFit> a = fit_profile(base_profile(), measured, fake_predict(), unknown);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("network.bandwidth_factor"), std::string::npos) << "lists the known names";
  ProfileFitOptions many;
  many.params = {"network.bandwidth_factor", "network.latency_factor", "cpu.storage_request"};
  many.phases = {"read"};
  const std::vector<RunRecord> two(measured.begin(), measured.begin() + 2);
  EXPECT_FALSE(fit_profile(base_profile(), two, fake_predict(), many).ok());
  EXPECT_FALSE(fit_profile(base_profile(), {}, fake_predict(), many).ok());
  nlohmann::json not_profile = base_profile();
  not_profile["format"] = "something-else";
  EXPECT_FALSE(fit_profile(not_profile, measured, fake_predict()).ok());
}

TEST(ProfileFit, ReportsAFailingBaselineSimulation) {
  const std::vector<RunRecord> measured = simulate(truth_profile(), k_points);
  const PredictFn broken = [](const nlohmann::json&) -> Result<std::vector<RunRecord>> {
    return error(StatusCode::unavailable, "sim crashed");
  };
  Result<ProfileFit> fit = fit_profile(base_profile(), measured, broken);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.status().message().find("sim crashed"), std::string::npos);
}

TEST(PairedRelErrors, SignedPerPointAndPhaseAndRejectsFailedRuns) {
  std::vector<RunRecord> measured = simulate(base_profile(), {{200e6, 4 << 20, 1}});
  std::vector<RunRecord> predicted = measured;
  predicted[0].phases[1].bytes_per_s *= 1.1;  // read over-predicted by 10%
  predicted[0].phases[0].bytes_per_s *= 0.8;  // write under-predicted by 20%
  Result<std::vector<double>> e = paired_rel_errors(predicted, measured, {"write", "read"}, "bytes_per_s");
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e->size(), 2u);
  EXPECT_NEAR((*e)[0], -0.2, 1e-12);
  EXPECT_NEAR((*e)[1], 0.1, 1e-12);
  EXPECT_FALSE(paired_rel_errors(predicted, measured, {"stat"}, "bytes_per_s").ok());
  EXPECT_FALSE(paired_rel_errors({}, measured, {"read"}, "bytes_per_s").ok());
  predicted[0].ok = false;
  predicted[0].error = "boom";
  Result<std::vector<double>> failed = paired_rel_errors(predicted, measured, {"read"}, "bytes_per_s");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("boom"), std::string::npos);
}

TEST(MedianOfRepeats, TakesEachPhasesMedianSoOneSlowRepeatDoesNotCount) {
  std::vector<RunRecord> runs =
      simulate(base_profile(), {{500e6, 4 << 20, 1}, {500e6, 4 << 20, 1}, {500e6, 4 << 20, 1}});
  const double normal = runs[0].phases[1].bytes_per_s;
  runs[1].phases[1].bytes_per_s = normal / 2;  // one read hit a retransmission timeout
  runs[2].phases[1].bytes_per_s = normal * 1.02;
  runs[0].phases[0].bytes_per_s *= 0.98;
  Result<RunRecord> m = median_of_repeats(runs);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_DOUBLE_EQ(m->phases[1].bytes_per_s, normal);
  EXPECT_DOUBLE_EQ(m->phases[0].bytes_per_s, runs[1].phases[0].bytes_per_s);
  runs[2].params["file"] = "other";
  EXPECT_FALSE(median_of_repeats(runs).ok()) << "repeats of different points";
  EXPECT_FALSE(median_of_repeats({}).ok());
  runs[2] = runs[0];
  runs[2].ok = false;
  EXPECT_FALSE(median_of_repeats(runs).ok());
}

TEST(ApplyProfileParams, ClampsToSimBoundsAndRoundsIntegerFields) {
  std::vector<ProfileParam> params{*find_profile_param("network.bandwidth_factor"),
                                   *find_profile_param("cpu.storage_request")};
  Result<nlohmann::json> p = apply_profile_params(base_profile(), params, {5e3, 1234.6});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->at("link_classes").at("network").at("bandwidth_factor").get<double>(), 1e3);
  EXPECT_EQ(p->at("cpu").at("cost_ns_per_unit").at("storage_request").get<std::uint64_t>(), 1235u);
  nlohmann::json lacking = base_profile();
  lacking["cpu"]["cost_ns_per_unit"].erase("storage_request");
  EXPECT_FALSE(apply_profile_params(lacking, params, {1.0, 1.0}).ok());
  EXPECT_FALSE(apply_profile_params(base_profile(), params, {1.0}).ok());
}

TEST(ApplyProfileParams, EveryFittableFieldIsInTheShippedProfiles) {
  // `sluice calibrate` fits a shipped profile file as it stands, so each
  // field the fit may change must be written there (the disk fields of
  // issue 22's F4 included).
  for (const char* name : {"default", "h200_staging"}) {
    Result<nlohmann::json> base =
        read_json_file(std::string(SLUICE_SOURCE_DIR) + "/sim/profiles/" + std::string(name) + ".json");
    ASSERT_TRUE(base.ok()) << base.status().to_string();
    for (const ProfileParam& param : profile_params()) {
      Result<nlohmann::json> p = apply_profile_params(*base, {param}, {param.min_value});
      EXPECT_TRUE(p.ok()) << name << ": " << p.status().to_string();
    }
  }
  for (const char* disk : {"disk.read_bandwidth_factor", "disk.write_bandwidth_factor", "disk.read_request_bytes_per_s",
                           "disk.write_request_bytes_per_s"}) {
    EXPECT_TRUE(find_profile_param(disk).ok()) << disk;
  }
}

}  // namespace
}  // namespace sluice::analysis
