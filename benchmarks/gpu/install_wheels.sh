#!/usr/bin/env bash
# Install, on the GPU machine, the wheels benchmarks/gpu/fetch_wheels.sh downloaded, into
# $SITE, /tmp/site-packages (`pip install --target`: the device has no registry). Source it:
#
#   source benchmarks/gpu/install_wheels.sh WHEELS      (WHEELS: the call-N folder fetch_wheels.sh
#                                                        wrote that this device call carries)
#
# The large nvidia-cutlass-dsl-libs-cu13 wheel travels in parts, one device call each:
# every call copies the parts it carries into /tmp/ledger-wheels (which lives as long as the
# machine stays warm); once all parts are there they are joined, checked against the
# sha256 fetch_wheels.sh wrote, and flash-attn 4 is installed. `--target` skips .pth files,
# so PYTHONPATH gets both $SITE and $SITE/nvidia_cutlass_dsl/dsl_packages. The folder's name
# ends in site-packages because quack fingerprints an epilogue's functions by their file's path and
# treats only code under site-packages/dist-packages as installed: from /tmp/site it recursed into
# the CuTe DSL's own globals and refused to compile its GELU epilogues (phase h31's first call).
# Sets FA4_READY=1 when flash-attn 4 is installed.
WHEELS="${1:-.whl}"
STASH=/tmp/ledger-wheels
SITE=/tmp/site-packages
mkdir -p "$STASH" "$SITE"
for f in "$WHEELS"/part-* "$WHEELS"/big.name "$WHEELS"/big.sha256 "$WHEELS"/parts; do
  [ -f "$f" ] && cp "$f" "$STASH/"
done
for d in base fa4; do
  [ -d "$WHEELS/$d" ] && mkdir -p "$STASH/$d" && cp "$WHEELS/$d"/*.whl "$STASH/$d/"
done
if [ ! -f $SITE/.base-installed ] && ls "$STASH"/base/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$STASH"/base/*.whl \
    && touch $SITE/.base-installed
fi
export PYTHONPATH="$SITE:$SITE/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}"
FA4_READY=0
if [ -f $SITE/.fa4-installed ]; then
  FA4_READY=1
elif [ -f "$STASH/parts" ] && [ -f "$STASH/big.name" ]; then
  want=$(cat "$STASH/parts"); have=$(ls "$STASH"/part-* 2>/dev/null | wc -l)
  if [ "$have" -ge "$want" ] && ls "$STASH"/fa4/*.whl >/dev/null 2>&1; then
    big="$STASH/$(cat "$STASH/big.name")"
    cat $(ls "$STASH"/part-* | sort) > "$big"
    if [ "$(sha256sum "$big" | cut -d' ' -f1)" = "$(cat "$STASH/big.sha256")" ]; then
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
        "$STASH"/fa4/*.whl "$big" && touch $SITE/.fa4-installed && FA4_READY=1
    else
      echo "install_wheels: the joined $(basename "$big") does not match big.sha256; fetch the parts again" >&2
    fi
  else
    echo "install_wheels: $have of $want parts of the cutlass-dsl cu13 wheel are here; flash-attn 4 waits for the rest"
  fi
fi
export FA4_READY
echo "install_wheels: FA4_READY=$FA4_READY"
