#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs python/ (parity_dump, parity_workloads and parity with the extension of the build
# tree $PARITY_BUILD_DIR) into a venv that sees Debian's torch and numpy, without network
# access, the way the README tells users to: install_venv.sh PYTHON SOURCE_DIR VENV_DIR.
# Fails when the install leaves anything in SOURCE_DIR that git does not already ignore.
set -euo pipefail
python="$1" source="$2" venv="$3"
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
before=$(cd "$source" && find . -path ./parity_dump -prune -o -path ./parity_workloads -prune \
  -o -path ./parity -prune -o -print | sort)
PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --no-index --no-build-isolation \
  --no-deps --quiet "$source"
after=$(cd "$source" && find . -path ./parity_dump -prune -o -path ./parity_workloads -prune \
  -o -path ./parity -prune -o -print | sort)
if [ "$before" != "$after" ]; then
  echo "install_venv.sh: pip install left files in $source:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
cd "$venv"  # not the checkout: the installed packages, not python/ in the working directory
"$venv/bin/python" - <<'PY'
import numpy as np
import parity
import parity_dump

assert parity.__file__.startswith(__import__("sys").prefix), parity.__file__
r = parity.compare(np.ones(10, np.float32), np.ones(10, np.float32), k=4)
assert r.passed and r.to_dict()["summary"]["passed"] == 1, r.to_dict()
print("parity_dump", parity_dump.__version__, "and parity", parity.__version__, "in",
      parity.__file__)
PY
