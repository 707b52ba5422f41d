#!/usr/bin/env bash
# Check the course against one torch version, in a fresh virtual environment:
#     bash bench/compat.sh 2.14.1
#
# Creates a venv in a temporary directory, installs torch==VERSION (from PyTorch's CPU wheel
# index; set TORCH_INDEX_URL to another index, or to "" for PyPI), then this checkout with
# `pip install -e .` while keeping that torch (a constraint: pip fails rather than replace it),
# and runs `tutor check --all --solutions` with a tutor home inside the temporary directory.
# Exit status: that of `tutor check` (0 when every reference solution passed); 2 on bad
# arguments or a failed install. The temporary directory is removed at the end; the
# learner's own tutor home is not touched. Takes a while: a torch download, then every check.
set -uo pipefail

if [ "$#" -ne 1 ] || ! [[ "$1" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?([a-z0-9.+]*)$ ]]; then
    echo "usage: bash bench/compat.sh TORCH_VERSION   (for example: bash bench/compat.sh 2.14.1)" >&2
    exit 2
fi
version="$1"
cd "$(dirname "$0")/.." || exit 2
root="$(pwd)"
PY="${PYTHON:-python3}"
# A learner's shell: no unbuffered or no-bytecode settings from the environment.
unset PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE

tmp="$(mktemp -d "${TMPDIR:-/tmp}/tutor-compat.XXXXXX")" || exit 2
trap 'rm -rf "$tmp"' EXIT

index="${TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}"
index_args=()
if [ -n "$index" ]; then index_args=(--index-url "$index"); fi

echo "== torch $version in $tmp/venv"
"$PY" -m venv "$tmp/venv" || exit 2
pip=("$tmp/venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install "torch==$version" ${index_args[@]+"${index_args[@]}"} || exit 2
echo "torch==$version" > "$tmp/constraints.txt"
"${pip[@]}" install -e "$root" -c "$tmp/constraints.txt" || exit 2
"$tmp/venv/bin/python" -c 'import torch, torchao, pytorch_lightning as pl
print("torch", torch.__version__, "| torchao", torchao.__version__, "| pytorch-lightning", pl.__version__)' || exit 2

echo "== tutor check --all --solutions"
TUTOR_HOME="$tmp/home" "$tmp/venv/bin/tutor" check --all --solutions
status=$?
echo "== torch $version: tutor check exited with $status"
exit "$status"
