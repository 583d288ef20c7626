// compare's library before anything runs (compare_run.cpp): the options checked together and
// completed, and the allocators and inputs refused with the message and exit status the
// command shows (a usage error, 2 for an allocator or command that cannot be used, 1 for a
// trace that cannot be read).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "registry/allocator_registry.hpp"
#include "compare/compare_run.hpp"
#include "support/error.hpp"
#include "tracetools/trace_inputs.hpp"

namespace {

using strata::compare::Options;
using strata::support::Error;
using strata::support::UsageError;

// What completeOptions throws for `o` ("" when it accepts it); a usage error (status 2).
std::string usageProblem(Options o, bool allocatorsGiven = true) {
  try {
    strata::compare::completeOptions(o, allocatorsGiven);
  } catch (const UsageError& e) {
    EXPECT_EQ(e.exitStatus(), 2);
    return e.what();
  }
  return "";
}

// The message and exit status of the Error `f` throws; {"", 0} when it throws none.
template <typename F>
std::pair<std::string, int> errorOf(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    ADD_FAILURE() << "a usage error: " << e.what();
  } catch (const Error& e) {
    return {e.what(), e.exitStatus()};
  }
  return {"", 0};
}

TEST(CompareOptions, ContradictionsAreUsageErrors) {
  Options both;
  both.traces = {"a.trace"};
  both.command = {"true"};
  EXPECT_EQ(usageProblem(both), "give trace files or '-- COMMAND', not both");

  Options liveOnly;
  liveOnly.liveOnly = true;
  EXPECT_EQ(usageProblem(liveOnly), "--live-only needs '-- COMMAND' to run");
  liveOnly.live = false;
  EXPECT_EQ(usageProblem(liveOnly), "--live-only and --no-live contradict each other");

  Options sites;
  sites.command = {"true"};
  sites.liveOnly = true;
  sites.sites = true;
  EXPECT_EQ(usageProblem(sites), "--sites shows the traces' sites; --live-only records none");
  sites.sites = false;
  EXPECT_EQ(usageProblem(sites), "");
}

TEST(CompareOptions, EveryKnownAllocatorWhenNoneNamedEachNameOnce) {
  Options o;
  strata::compare::completeOptions(o, false);
  std::vector<std::string> known;
  for (const strata::registry::AllocatorInfo& info : strata::registry::knownAllocators())
    known.emplace_back(info.name);
  EXPECT_EQ(o.allocators, known);

  Options named;
  named.allocators = {"jemalloc", "glibc", "jemalloc", "glibc"};
  strata::compare::completeOptions(named, true);
  EXPECT_EQ(named.allocators, (std::vector<std::string>{"jemalloc", "glibc"})) << "first order kept";

  Options empty;
  strata::compare::completeOptions(empty, true);
  EXPECT_TRUE(empty.allocators.empty()) << "--allocators given: no defaults added";
}

TEST(CompareOptions, AllocatorsThatCannotBeUsedStopWithStatusTwo) {
  using strata::compare::resolveAllocators;
  const auto [unknown, unknownStatus] = errorOf([] { resolveAllocators({"no-such-malloc"}); });
  EXPECT_NE(unknown.find("no-such-malloc"), std::string::npos) << unknown;
  EXPECT_EQ(unknownStatus, 2);

  // Libraries that are not there are unavailable, not errors; two of one label are.
  const auto [twice, twiceStatus] = errorOf(
      [] { resolveAllocators({"x=/nonexistent/liba.so", "x=/nonexistent/libb.so"}); });
  EXPECT_EQ(twice, "two allocators are labelled 'x' ('x=/nonexistent/liba.so' and "
                   "'x=/nonexistent/libb.so'); name one: LABEL=SPEC");
  EXPECT_EQ(twiceStatus, 2);

  const auto a = resolveAllocators({"x=/nonexistent/liba.so", "y=/nonexistent/libb.so"});
  ASSERT_EQ(a.where.size(), 2u);
  EXPECT_EQ(a.available, 0u);
  EXPECT_FALSE(a.where[0].available);
  EXPECT_EQ(a.where[1].spec.label, "y");
}

TEST(CompareOptions, InputsThatCannotBeUsedStopBeforeAnythingRuns) {
  using strata::tracetools::checkInputs;
  const auto [command, commandStatus] =
      errorOf([] { checkInputs({"/nonexistent/program", "arg"}, {}); });
  EXPECT_EQ(command.rfind("/nonexistent/program: ", 0), 0u) << command;
  EXPECT_EQ(commandStatus, 2);

  const auto [trace, traceStatus] = errorOf([] { checkInputs({}, {"/nonexistent/a.trace"}); });
  EXPECT_EQ(trace.rfind("cannot read trace '/nonexistent/a.trace': ", 0), 0u) << trace;
  EXPECT_EQ(traceStatus, 1);

  EXPECT_EQ(errorOf([] { checkInputs({"sh", "-c", "true"}, {}); }).second, 0)
      << "a command on the PATH is fine";
}

}  // namespace
