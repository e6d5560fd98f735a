# bench/calibrated.awk — exit 0 when every task size in the StarPU history models given has at
# least `least` measurements (awk -v least=N, default 10), 1 otherwise.
#
#   awk [-v least=N] -f bench/calibrated.awk MODEL_FILE…
#
# A history table's rows are "hash size flops mean dev sum sum2 n". A size whose samples StarPU
# flushed (more measurements off the mean by STARPU_HISTORY_MAX_ERROR than within it) keeps its
# row with n = 0 and a mean of 0: it counts as uncalibrated, since StarPU-SimGrid aborts on a
# task whose expected length is 0.
BEGIN { if (least == "") least = 10 }
/^# hash/ { table = 1; next }
/^#/ { table = 0 }
table && NF == 8 && $8 < least { bad = 1 }
END { exit bad }
