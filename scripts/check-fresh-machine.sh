#!/usr/bin/env bash
# check-fresh-machine.sh: proves the set-up on a fresh minimal Debian, where no package that
# this machine happens to have can hide a missing install step. It makes a minimal chroot with
# debootstrap (--variant=minbase, plus git), clones the committed HEAD of this checkout into it
# and runs scripts/run.sh there (or scripts/test.sh with --test), timing it.
#
#   scripts/check-fresh-machine.sh [--test] [--keep] [--dir DIR]
#
#   --test     run scripts/test.sh instead of scripts/run.sh
#   --keep     leave the chroot in place afterwards (default: removed)
#   --dir DIR  make the chroot in DIR (default: a new directory under /var/tmp)
#
# The Debian mirror and release are read at run time from this machine's apt sources and
# /etc/os-release, never written into the repository. Needs root (debootstrap, chroot, mounts);
# installs debootstrap when it is missing. Only committed changes are checked: the chroot gets a
# clone. Takes a cold build's time (no ccache is shared with the chroot, as on a new machine).
set -euo pipefail

root_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
script=run.sh
keep=0
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --test) script=test.sh ;;
    --keep) keep=1 ;;
    --dir)
      [ $# -ge 2 ] || { echo "check-fresh-machine: --dir needs a directory" >&2; exit 2; }
      dir="$2"
      shift
      ;;
    *)
      echo "check-fresh-machine: unknown argument '$1' (expected --test, --keep or --dir DIR)" >&2
      exit 2
      ;;
  esac
  shift
done

log() { printf '[fresh-machine] %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  log "needs root (debootstrap, chroot and mounts); run it as root"
  exit 2
fi

# The mirror this machine installs from: the first Debian archive in its apt sources (deb822
# .sources files or one-line sources.list entries), skipping the security archive.
mirror_of_this_machine() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
  done
}
mirror=$(mirror_of_this_machine | grep -v -- '-security' | grep -i debian | head -n 1 || true)
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ -z "$mirror" ] || [ -z "$suite" ]; then
  log "could not read a Debian mirror (found '${mirror}') and release (found '${suite}') from" \
      "/etc/apt and /etc/os-release"
  exit 2
fi

if ! command -v debootstrap > /dev/null; then
  log "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
fi

[ -n "$dir" ] || dir=$(mktemp -d /var/tmp/tessera-fresh.XXXXXX)
mkdir -p "$dir"
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2> /dev/null || true; done
  if [ "$keep" -eq 0 ]; then
    rm -rf --one-file-system "$dir"
  else
    log "chroot kept in $dir"
  fi
}
trap cleanup EXIT

start=$(date +%s)
log "debootstrap --variant=minbase $suite from $mirror into $dir"
debootstrap --variant=minbase --include=git,ca-certificates "$suite" "$dir" "$mirror" \
  > "$dir.debootstrap.log" 2>&1 || { tail -n 30 "$dir.debootstrap.log" >&2; exit 1; }
rm -f "$dir.debootstrap.log"
made=$(date +%s)

for m in proc sys dev dev/pts; do
  mkdir -p "$dir/$m"
  case "$m" in
    proc) mount -t proc proc "$dir/proc" ;;
    *) mount --bind "/$m" "$dir/$m" ;;
  esac
  mounted+=("$dir/$m")
done
cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2> /dev/null || true

log "cloning $(git -C "$root_dir" rev-parse --short HEAD) into the chroot"
git clone -q --no-local "$root_dir" "$dir/src/tessera"

log "running scripts/$script in the chroot"
set +e
chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  /bin/bash -c "cd /src/tessera && scripts/$script"
status=$?
set -e
end=$(date +%s)
log "debootstrap $((made - start)) s; scripts/$script $((end - made)) s; exit status $status"
exit "$status"
