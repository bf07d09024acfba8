#!/usr/bin/env bash
# make tsan, after the build: ThreadSanitizer on the code that runs threads (argument: the build directory
# configured with -DRACKSIM_TSAN=ON). The planner's searches share a system's graph, calibration and context
# between the worker pool's threads (run_plan: the other systems' and the degraded systems' searches), and
# a race there corrupts a cache silently or once in a hundred runs (docs/errors.md, "ThreadSanitizer"), so:
#   * the planner's unit tests (searches, plans with failures, the caches; their process runs the engine itself,
#     so its plans' engine checks go to spawned engine servers while the comparisons' threads run);
#   * a whole plan through the CLI that uses the pool: one GB200 rack, with both degraded systems
#     re-searched and the two other systems compared (a race there showed in 4 s under ThreadSanitizer);
#   * a search large enough to screen its candidates on every core (search.cpp, for_each_on_cores), whose
#     comparisons start when its pricing starts and run beside it;
#   * a plan whose first priced layout has another GPU count than its best (the comparisons started for the
#     guess are abandoned while they run and started again).
# The first report ends the run with a failure (halt_on_error; exit status 66).
set -euo pipefail
build=$(cd "${1:-build-tsan}" && pwd)
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0"
echo "tsan: planner unit tests"
"$build/tests/racksim_unit_tests" --gtest_filter='Plan.*:Search.*:StepCaches.*' --gtest_brief=1
echo "tsan: racksim plan, Llama 3.1 405B on one GB200 NVL72 rack (degraded systems and comparison on the pool)"
"$build/cli/racksim" plan --system gb200-nvl72 --racks 1 --model llama-3.1-405b --global-batch 2048 --seq-len 8192 \
  --format json >/dev/null
echo "tsan: racksim plan, DeepSeek-V3 on 8 GB200 racks (29 083 candidates screened on every core, comparisons on the pool)"
"$build/cli/racksim" plan --system gb200-nvl72 --racks 8 --model deepseek-v3 --global-batch 4096 --seq-len 4096 \
  --engine-top 0 --format json >/dev/null
echo "tsan: racksim plan, Llama 3.1 70B on one GB200 rack (the comparisons started for the first priced layout's 64 GPUs,"
echo "      abandoned and started again for the best's 72)"
"$build/cli/racksim" plan --system gb200-nvl72 --racks 1 --model llama-3.1-70b --global-batch 1024 --seq-len 4096 \
  --format json >/dev/null
echo "tsan: no ThreadSanitizer report"
