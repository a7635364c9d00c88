#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs "$@" under the current-PyTorch environment's interpreter (scripts/venv), for the ctest
# entries labelled torch2: the same test files as their torch1 twins, which run under Debian's
# /usr/bin/python3 and torch 1.13. The interpreter is also $PARITY_PYTHON, so that the parity
# binary the tests start picks it as a user's would.
# The environment missing, or made from another lock: with CI=true the entry fails naming the
# command that makes it; otherwise it is skipped (exit 77, ctest's SKIP_RETURN_CODE) with that
# reason — never a pass.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
if ! py="$("$root/scripts/venv" --check 2>&1)"; then
  if [ "${CI:-}" = true ]; then
    echo "torch2: $py" >&2
    exit 1
  fi
  echo "SKIP torch2: $py"
  exit 77
fi
export PARITY_PYTHON="$py"
exec "$py" "$@"
