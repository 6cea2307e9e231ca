#!/usr/bin/env bash
# README command 2: run the whole test suite through colcon, fail on any failure.
#
#   atlas_crawl_bringup/scripts/run_tests.sh [extra colcon test args, e.g. --packages-select X]
#
# Makes sure the environment exists and the workspace is built (setup_and_demo.sh
# --no-demo: idempotent, fast when nothing changed), then
#   colcon test  &&  colcon test-result --verbose
# Exit status is non-zero if a test fails or errors, or a test run itself fails.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"

bash "$HERE/setup_and_demo.sh" --no-demo

set +u
# shellcheck disable=SC1091
. "$HERE/env.sh"
set -u
export PYTHONDONTWRITEBYTECODE=1
# Generated message classes check field types/ranges only when asked (Jazzy): ask, in tests.
export ROS_PYTHON_CHECK_FIELDS="${ROS_PYTHON_CHECK_FIELDS:-1}"
# Tests stay on this host and, by default, on a domain of their own per run, so that
# concurrent test runs on the same machine do not see each other's nodes.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 1 ))}"
echo "[tests] ROS_DOMAIN_ID=$ROS_DOMAIN_ID MUJOCO_GL=$MUJOCO_GL"

t0=$SECONDS
# Results of earlier runs would otherwise be summarised again (stale or removed tests).
colcon test-result --delete-yes >/dev/null 2>&1 || true
rc_test=0
nice -n "${ATLAS_CRAWL_NICE:-10}" colcon test --event-handlers console_cohesion+ summary+ \
  --return-code-on-test-failure "$@" || rc_test=$?
rc_result=0
colcon test-result --verbose || rc_result=$?
echo "[tests] colcon test rc=$rc_test, colcon test-result rc=$rc_result, $(( SECONDS - t0 )) s"
if [ "$rc_test" -ne 0 ] || [ "$rc_result" -ne 0 ]; then
  echo "[tests] FAILED" >&2
  exit 1
fi
echo "[tests] all passed"
