#!/usr/bin/env bash
# The same checks CI runs (see .ci/run).
exec bash "$(dirname "$0")/../.ci/run"
