#!/usr/bin/env bash
# The tests of every module of the workspace with the race detector: the README's test command.
#
#   ./test.sh                 go test -race of every module's packages
#   ./test.sh -count=1 ...    with go test's flags added: -count=1 runs every test again instead
#                             of replaying the results go test cached for unchanged packages
#
# It runs `go test -race "$@" $(go list -m -f '{{.Dir}}/...')`, then lists the integration tests
# that were skipped because a program they run (redis-server, chromium) is not on PATH, with the
# reason: go test prints the output of a package whose tests pass only under -v, so a skip is
# otherwise silent. With the environment variable CI set, those tests fail instead of skipping.
# The exit status is go test's.
set -uo pipefail
cd "$(dirname "$0")"
root=$PWD

# The skipped tests leave a record here (see internal/integration). Records are kept between
# runs, so that a package whose result go test replays from its cache still shows its skips.
export LEVEE_SKIPPED_DIR="$root/.test-skipped"
mkdir -p "$LEVEE_SKIPPED_DIR"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
mapfile -t patterns < <(go list -m -f '{{.Dir}}/...')
go test -race "$@" "${patterns[@]}" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}

# Only the records of the packages this run tested (ok or FAIL, run or cached) count.
skipped=()
shopt -s nullglob
for record in "$LEVEE_SKIPPED_DIR"/*.skip; do
  IFS=$'\t' read -r pkg test reason <"$record" || continue
  if grep -qE "^(ok|FAIL)[[:space:]]+${pkg//./\\.}([[:space:]]|$)" "$out"; then
    skipped+=("  ${pkg#github.com/levee-go/levee/} $test: $reason")
  fi
done
cached=$(grep -cE '^ok .*\(cached\)' "$out")

echo
if [ ${#skipped[@]} -gt 0 ]; then
  echo "SKIPPED integration tests (${#skipped[@]}; CI=true makes them fail instead of skip):"
  printf '%s\n' "${skipped[@]}" | sort
else
  echo "No integration test was skipped."
fi
if [ "$cached" -gt 0 ]; then
  echo "$cached packages' results are replayed from go test's cache, marked (cached): ./test.sh -count=1 runs every test again."
fi
exit "$status"
