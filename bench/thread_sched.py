#!/usr/bin/env python3
"""thread_sched: where a process's threads spend their time, per thread name, from Linux's
per-thread scheduler statistics; and per-thread priorities set from outside, for A/B runs.

    python3 bench/thread_sched.py stat PID SECONDS
        One row per thread name over SECONDS: threads, CPU ms, ms spent runnable but waiting
        for a core (the run queue), time slices, average wait per slice, nice values.
        Read from /proc/PID/task/*/schedstat (run ns, run-queue wait ns, slices) and .../stat.
    python3 bench/thread_sched.py set PID GROUP VALUE [GROUP VALUE ...]
        Sets every thread of a group to nice VALUE (setpriority on the thread id; lowering
        nice needs root), or to SCHED_BATCH with VALUE = batch. Groups: ingest (histd-stage,
        histd-flush, histd-apply, histd-ack, histd-gpu-done), grpc (gRPC's threads), rpc (histd-rpc).

Used for bench/results/render.md: which of histd's threads a render waits behind.
"""
import collections
import os
import sys
import time

GROUPS = {
    'ingest': ('histd-stage', 'histd-flush', 'histd-apply', 'histd-ack', 'histd-gpu-done'),
    'grpc': ('nexting_thread', 'default-executo', 'event_engine', 'grpc_global_tim',
             'resolver-execut', 'timer_manager', 'grpcpp_sync_ser'),
    'rpc': ('histd-rpc',),
}


def threads(pid):
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            name = open(f'/proc/{pid}/task/{tid}/comm').read().strip()
        except OSError:
            continue  # the thread ended
        yield int(tid), name


def set_priorities(pid, pairs):
    for group, value in pairs:
        n = 0
        for tid, name in threads(pid):
            if name not in GROUPS[group]:
                continue
            if value == 'batch':
                os.sched_setscheduler(tid, os.SCHED_BATCH, os.sched_param(0))
            else:
                os.setpriority(os.PRIO_PROCESS, tid, int(value))
            n += 1
        print(f'{group} -> {value} on {n} threads', flush=True)


def snapshot(pid):
    out = {}
    for tid, name in threads(pid):
        try:
            run, wait, slices = map(int, open(f'/proc/{pid}/task/{tid}/schedstat').read().split())
            stat = open(f'/proc/{pid}/task/{tid}/stat').read()
        except OSError:
            continue
        nice = int(stat.rsplit(')', 1)[1].split()[16])  # field 19
        out[tid] = (name, run, wait, slices, nice)
    return out


def stat(pid, seconds):
    before = snapshot(pid)
    time.sleep(seconds)
    after = snapshot(pid)
    rows = collections.defaultdict(lambda: [0, 0, 0, 0, set()])
    for tid, (name, run, wait, slices, nice) in after.items():
        _, run0, wait0, slices0, _ = before.get(tid, (name, 0, 0, 0, 0))
        row = rows[name]
        row[0] += run - run0
        row[1] += wait - wait0
        row[2] += slices - slices0
        row[3] += 1
        row[4].add(nice)
    print(f'{"thread":16s} {"n":>3s} {"cpu ms":>9s} {"rq wait ms":>10s} {"slices":>8s} '
          f'{"wait/slice us":>13s} nice')
    for name, (run, wait, slices, n, nices) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
        print(f'{name:16s} {n:3d} {run / 1e6:9.0f} {wait / 1e6:10.0f} {slices:8d} '
              f'{wait / 1e3 / max(slices, 1):13.0f} {sorted(nices)}')


if __name__ == '__main__':
    if len(sys.argv) >= 4 and sys.argv[1] == 'stat':
        stat(int(sys.argv[2]), float(sys.argv[3]))
    elif len(sys.argv) >= 5 and sys.argv[1] == 'set' and len(sys.argv) % 2 == 1:
        set_priorities(int(sys.argv[2]), list(zip(sys.argv[3::2], sys.argv[4::2])))
    else:
        sys.exit(__doc__)
