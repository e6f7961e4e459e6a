# 50-python.sh — the Python binding (bindings/python): a virtual environment, then
# `pip install ./bindings/python` (a PEP 517 build: scikit-build-core from PyPI drives
# this repository's CMake and puts libtether inside the wheel), ray and pytest from PyPI,
# then the Python suite, the Ray scenarios on a local cluster included. Sourced by
# scripts/test.sh (deps.sh loaded, set -euo pipefail); also runnable alone:
#   bash scripts/test.d/50-python.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
declare -F tether_require_packages >/dev/null || . scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" python3 python3-venv python3-dev

python=${TETHER_PYTHON:-python3}
venv=build/python-venv
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# build-dir: incremental rebuilds on a machine that already built it; warnings are errors.
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps -Cbuild-dir="$PWD/build/python" \
  -Ccmake.define.TETHER_WERROR=ON ./bindings/python
"$venv/bin/python" -c "import tether; print('tether', tether.__version__, 'from', tether.__file__)"

"$venv/bin/python" -m pip install -q pytest
if "$venv/bin/python" -m pip install -q ray; then
  ray_note="ran on ray $("$venv/bin/python" -c 'import ray; print(ray.__version__)')"
else
  ray_note="SKIPPED: ray could not be installed from PyPI"
fi

rc=0
(cd bindings/python && "../../$venv/bin/python" -m pytest -v -rs -p no:cacheprovider tests) || rc=$?
echo "tether python: Ray scenarios $ray_note"
case $rc in
  0) ;;
  5) echo "tether python: pytest collected no tests" >&2; exit 1 ;;
  *) echo "tether python: pytest failed (exit $rc)" >&2; exit "$rc" ;;
esac
