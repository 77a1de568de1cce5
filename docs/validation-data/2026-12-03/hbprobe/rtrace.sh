T=/sys/kernel/tracing
echo 0 > $T/tracing_on
echo 40000 > $T/buffer_size_kb
echo > $T/trace
for e in sched_switch sched_wakeup sched_wakeup_new sched_waking sched_migrate_task; do echo 1 > $T/events/sched/$e/enable; done
echo 1 > $T/tracing_on
"$@"
echo 0 > $T/tracing_on
cat $T/trace > ${OUTF:-r.txt}
for e in sched_switch sched_wakeup sched_wakeup_new sched_waking sched_migrate_task; do echo 0 > $T/events/sched/$e/enable; done
