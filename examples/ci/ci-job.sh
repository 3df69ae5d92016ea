#!/usr/bin/env bash
# A CI job consuming a Stageflow handoff: run the pipeline, read the verified deliverables of
# `write-notes` from the run summary file (no database, no server), and publish them — or do
# nothing when the stage was skipped.
#
#   examples/ci/ci-job.sh [output-dir]
#
# Environment: SF (the sf command, default `sf`), AGENT (default: this example's script agent).
# Exit codes: 0 published or nothing to publish, otherwise sf's exit code (1 failed, 2 waiting).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-$PWD/ci-out}" && cd "${1:-$PWD/ci-out}" && pwd)"
sf=(${SF:-sf})
agent="${AGENT:-script:$here/agent.script.yaml}"

# 1. Run the pipeline; the summary with each stage's envelope goes to a file.
"${sf[@]}" run --pipeline "$here/release-notes.pipeline.yaml" --agent "$agent" \
  --input '{"ref": "'"${GITHUB_SHA:-local}"'"}' --json --include stages > "$out/sf-run.json"

# 2. Extract the handoff: absolute artifact paths, or {"skipped": true}.
"${sf[@]}" envelope get --from "$out/sf-run.json" --stage write-notes \
  --detect-stage detect-changes --format handoff --json > "$out/envelope.json"

# 3. Deliver, or no-op.
if [ "$(jq -r '.skipped' "$out/envelope.json")" = "true" ]; then
  echo "release notes: skipped, nothing to publish"
  exit 0
fi
mkdir -p "$out/publish"
jq -r '.artifacts[]' "$out/envelope.json" | while IFS= read -r artifact; do
  cp "$artifact" "$out/publish/"
done
echo "release notes: published $(jq -r '.artifacts | length' "$out/envelope.json") file(s) to $out/publish ($(jq -r '.payload.title' "$out/envelope.json"))"
