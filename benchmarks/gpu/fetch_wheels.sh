#!/usr/bin/env bash
# Download, here (where PyPI answers), the wheels the H200 runs need, for the device's
# Python 3.12 on x86-64, and split the one wheel too large for one device call.
#
#   bash benchmarks/gpu/fetch_wheels.sh DEST        (default .whl; keep DEST out of git)
#
# DEST/base/  ledger's own dependencies (pydantic & co.; the device image lacks them)
# DEST/fa4/   flash-attn 4 and its CuTe DSL runtime, except nvidia-cutlass-dsl-libs-cu13
# DEST/call-1/  the first FIRST_BYTES (default 52,000,000) of nvidia-cutlass-dsl-libs-cu13 (about
#               92 MB) as part-0, for the first device call
# DEST/call-2/  base/, fa4/ and the rest of that wheel as part-1, for the second call
# (both with parts, big.name, big.sha256). One device call carries at most 64 MiB with the
# repository's own tree (7 MB in December 2026), so the big wheel travels in two calls and is
# copied into /tmp there (see install_wheels.sh): carry DEST/call-1, then DEST/call-2.
# cuda-bindings, cuda-pathfinder, einops and protobuf are already in the device image.
set -euo pipefail
DEST="${1:-.whl}"
PY="${PYTHON:-python3}"
mkdir -p "$DEST/base" "$DEST/fa4" "$DEST/big"
dl() {
  local dest=$1; shift
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
    --platform any -d "$dest" "$@"
}
dl "$DEST/base" pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 \
  ruamel.yaml==0.19.1 python-ulid==4.1.0 orjson==3.13.0 GitPython==3.2.1 gitdb==4.0.12 smmap==5.0.3
dl "$DEST/fa4" flash-attn-4==4.0.0b36 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1 \
  nvidia-cutlass-dsl-libs-core==4.8.1 apache-tvm-ffi torch-c-dlpack-ext quack-kernels
dl "$DEST/big" nvidia-cutlass-dsl-libs-cu13==4.8.1
big=$(ls "$DEST"/big/*.whl)
FIRST="${FIRST_BYTES:-52000000}"
rm -rf "$DEST/call-1" "$DEST/call-2" "$DEST"/part-* "$DEST/parts" "$DEST/big.name" "$DEST/big.sha256"
mkdir -p "$DEST/call-1" "$DEST/call-2"
head -c "$FIRST" "$big" > "$DEST/call-1/part-0"
tail -c +"$((FIRST + 1))" "$big" > "$DEST/call-2/part-1"
mv "$DEST/base" "$DEST/fa4" "$DEST/call-2/"
for c in call-1 call-2; do
  echo 2 > "$DEST/$c/parts"
  basename "$big" > "$DEST/$c/big.name"
  sha256sum "$big" | cut -d' ' -f1 > "$DEST/$c/big.sha256"
done
rm -rf "$DEST/big"
du -sh "$DEST"/call-*
