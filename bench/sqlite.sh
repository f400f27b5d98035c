#!/usr/bin/env bash
# bench/sqlite.sh VARIANT: sqlite3 (the CLI) under VARIANT (see bench/lib.sh)
# runs an insert-heavy script into a fresh database file, then a query-heavy
# script against it; each run is timed from outside (wall, start-up
# included; under perf stat, see elapsed in bench/lib.sh). Prints "sqlite_insert SECONDS" and "sqlite_query SECONDS".
#   insert: PRAGMA synchronous=OFF (no fsync: the disk is not what we
#     measure), a table with an index, SQL_ROWS single-row INSERTs, each its
#     own transaction (rollback journal created, written, deleted per row:
#     about 37 system calls per INSERT).
#   query: SQL_QUERIES indexed aggregate SELECTs, and a GROUP BY over the whole
#     table every 100 (each statement takes and drops the file locks: about
#     9 system calls per SELECT).
# The scripts are generated into VTMP/sql once (deterministic).
# Environment: XS, VTMP, SQL_ROWS (10000), SQL_QUERIES (30000).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
[ $# -eq 1 ] || die "usage: bench/sqlite.sh VARIANT"
variant=$1
: "${XS:?}" "${VTMP:?}"
SQL_ROWS=${SQL_ROWS:-10000}
SQL_QUERIES=${SQL_QUERIES:-30000}
sql=$VTMP/sql-$SQL_ROWS-$SQL_QUERIES
if [ ! -f "$sql/query.sql" ]; then
  mkdir -p "$sql"
  awk -v n="$SQL_ROWS" 'BEGIN {
      print "PRAGMA synchronous=OFF;"
      print "CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
      print "CREATE INDEX t_k ON t(k);"
      for (i = 1; i <= n; i++) printf "INSERT INTO t (k, v) VALUES (%d, %cvalue-%d%c);\n", (i * 7919) % 1000, 39, i, 39
    }' >"$sql/insert.sql" || die "cannot write the insert script"
  awk -v n="$SQL_QUERIES" 'BEGIN {
      for (i = 1; i <= n; i++) {
        printf "SELECT count(*), sum(length(v)) FROM t WHERE k = %d;\n", i % 1000
        if (i % 100 == 0) print "SELECT k, count(*) FROM t GROUP BY k ORDER BY 2 DESC LIMIT 3;"
      }
    }' >"$sql/query.sql" || die "cannot write the query script"
fi

db=$VTMP/bench.sqlite
rm -f "$db" "$db-journal"
for phase in insert query; do
  wrap "$variant"
  t0=$EPOCHREALTIME
  "${WRAP[@]}" sqlite3 "$db" <"$sql/$phase.sql" >"$VTMP/sqlite.out" 2>"$VTMP/sqlite.err" ||
    die "sqlite3 $phase under $variant failed (status $?): $(tail -c 300 "$VTMP/sqlite.err")"
  t1=$EPOCHREALTIME
  [ -s "$VTMP/sqlite.err" ] && die "sqlite3 $phase under $variant: $(tail -c 300 "$VTMP/sqlite.err")"
  check_variant "$variant"
  echo "sqlite_$phase $(elapsed "$variant" "$t0" "$t1")"
done
rows=$(sqlite3 "$db" 'SELECT count(*) FROM t') || die "cannot read the database back"
[ "$rows" = "$SQL_ROWS" ] || die "sqlite3 under $variant: $rows rows, expected $SQL_ROWS"
rm -f "$db"
