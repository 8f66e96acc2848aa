# Sourced by the fetch scripts: npm_pack WORK PKG VERSION WHO downloads PKG@VERSION's tarball into
# the folder WORK with `npm pack` (the registry only, no install scripts run), retrying a failed
# download up to four times with a growing pause, unpacks it into WORK/package, and returns
# non-zero with a line naming WHO, the package and npm's last words when every attempt failed.
npm_pack() {
  local work="$1" pkg="$2" version="$3" who="$4" tarball="" attempt
  command -v npm >/dev/null || { echo "$who: npm not found (apt-get install npm)" >&2; return 1; }
  echo "$who: fetching $pkg@$version" >&2
  for attempt in 1 2 3 4; do
    tarball="$(cd "$work" && npm pack --silent --fetch-retries=3 "$pkg@$version" 2>"$work/npm.err" | tail -n 1)" || true
    [ -n "$tarball" ] && [ -f "$work/$tarball" ] && break
    echo "$who: npm pack $pkg@$version failed (attempt $attempt): $(tail -n 1 "$work/npm.err")" >&2
    tarball=""
    sleep $((attempt * 5))
  done
  [ -n "$tarball" ] || { echo "$who: npm pack $pkg@$version failed" >&2; return 1; }
  tar -xzf "$work/$tarball" -C "$work"
}
