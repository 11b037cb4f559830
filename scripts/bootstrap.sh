#!/usr/bin/env bash
# Set up a fresh machine for pytest-netbench: Debian packages the catalog and benchmarks
# use, then a virtualenv in .venv with the package and its dev extras. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

# wrk and ab (apache2-utils) are the second tools of `netbench crosscheck`; chromium opens
# the HTML report headless in its test (tests/integration/test_html_report.py); h2load
# (nghttp2-client) is HTTP/2's yardstick in benchmarks/bench_h2_floor.py.
apt_packages=(wrk apache2-utils nginx-light pypy3 openssl procps iproute2 chromium nghttp2-client)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev,flows]"

# PyPy with the frameworks it supports, for the catalog's CPython-vs-PyPy comparisons
# (Debian's pypy3 ships none of them and its pip refuses system installs).
if command -v pypy3 >/dev/null && [ ! -x .venv-pypy/bin/pypy3 ]; then
  pypy3 -m venv .venv-pypy
  .venv-pypy/bin/pypy3 -m pip install -q twisted tornado eventlet trio
fi
