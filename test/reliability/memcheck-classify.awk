# test/reliability/memcheck-classify.awk: used by memcheck.sh (not a test).
# Reads memcheck error records (one per paragraph: the error line, then its
# "at"/"by" frames) and prints those whose owner is `mode` ("ours" or
# "postgres").  An error is ours when, reading its stack from the top and
# skipping C library frames, the first frame in PostgreSQL or in our module is
# ours: in workload.so, or at a line of one of our source files (the regex in
# the OURRE environment variable).  An error raised inside PostgreSQL's own
# code, that a call of ours merely led to, is PostgreSQL's.
BEGIN { RS = ""; FS = "\n"; re = ENVIRON["OURRE"] }
{
	who = "postgres"
	for (i = 2; i <= NF; i++) {
		if ($i ~ re) { who = "ours"; break }
		if ($i ~ /\(in \/usr\/lib\/postgresql\// || $i ~ /\(in .*\/bin\/postgres\)/) break
	}
	if (who == mode) { print; print "" }
}
