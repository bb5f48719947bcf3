# Shared by the benchmark scripts (sourced): DIR must be set.
# measure NAME CMD... : run CMD under /usr/bin/time -v (stdout to DIR/NAME.out, stderr to
# DIR/NAME.err); print its wall time and peak RSS, and keep them in DIR/NAME.time.
measure() {
  local name=$1; shift
  /usr/bin/time -v -o "$DIR/$name.time" "$@" > "$DIR/$name.out" 2> "$DIR/$name.err" || true
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$DIR/$name.time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$DIR/$name.time")
  printf '%-20s wall %-10s peak RSS %8s KiB\n' "$name" "$wall" "$rss"
}

# drop_caches: start a measurement with a cold page cache where the kernel lets us
drop_caches() {
  sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
}
