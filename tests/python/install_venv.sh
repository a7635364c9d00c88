#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs python/parity_dump into a venv that sees Debian's torch and numpy, without network
# access, the way the README tells users to: install_venv.sh PYTHON SOURCE_DIR VENV_DIR
set -euo pipefail
python="$1" source="$2" venv="$3"
rm -rf "$venv" "$venv.src"
"$python" -m venv --system-site-packages "$venv"
cp -r "$source" "$venv.src"  # the build writes into the tree it builds from
PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --no-index --no-build-isolation \
  --no-deps --quiet "$venv.src"
"$venv/bin/python" -c "import parity_dump, sys; print('parity_dump', parity_dump.__version__, 'in', parity_dump.__file__)"
