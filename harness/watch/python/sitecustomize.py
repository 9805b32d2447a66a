# feedbench watch's probe, put first on a watched job's PYTHONPATH: it records, for every batch a
# PyTorch DataLoader iterator yields, when the trainer asked for it and when it got it, and in
# the workers when each batch was fetched, how much CPU that took and how long it waited for a core;
# the CPU the trainer's thread spent taking each batch and stepping after it, and each worker
# process's CPU when each fetch began (what it spent outside its fetches: start-up, handing
# batches over). It does nothing until the
# job imports torch.utils.data, and chains to any other sitecustomize on the path. Each process
# appends JSON lines to a file of its own under $FEEDBENCH_WATCH_DIR (one write per line, so a
# killed job leaves whole lines); times are CLOCK_MONOTONIC nanoseconds, as the watcher's.
# Each record names its process image ("img"): a launcher that execs the job under the same pid
# is another image. The record format is feedbench's
# (harness/watch/include/feedbench/watch/job_log.h), version 4.
#
# The probe holds no descriptor: each record's file is opened, written and closed (a job that
# closes every descriptor, then opens its own output, never gets a record). A record it cannot
# write is counted by why in the watcher's counters file (guest_counters.h), mapped on the first
# loss without keeping a descriptor.
import os
import sys

_DIR = os.environ.get("FEEDBENCH_WATCH_DIR", "")
_HERE = os.path.dirname(os.path.abspath(__file__))
# This process image's number: its start time (one pid's images run one after another).
_IMAGE = __import__("time").monotonic_ns()


def _chain():
    """Runs the sitecustomize this one hides, if the path holds another."""
    import importlib.machinery
    import importlib.util
    path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


class _Lost:
    """The watcher's counters file (guest_counters.h), mapped on first use through ctypes (Python's
    mmap module would keep a duplicate descriptor): this process counts in a slot of its own."""

    _BYTES, _TOKEN, _REFUSED_UID, _SLOTS, _SLOT_WORDS = 12288, 0, 6, 64, 4

    def __init__(self):
        self.words = None
        self.tried = False

    def _map(self):
        import ctypes
        spec = os.environ.get("FEEDBENCH_WATCH_COUNTERS", "")
        inherited, _, token = spec.partition(":")
        try:
            token = int(token, 16)
            inherited = int(inherited)
        except ValueError:
            return None
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]
        import mmap
        try:  # by its path; a process that changed user cannot: the descriptor the watcher left
            fd, own = os.open(os.path.join(_DIR, "counters"), os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW), True
        except OSError:
            fd, own = inherited, False
        try:
            if os.fstat(fd).st_size != self._BYTES:
                return None
            at = libc.mmap(None, self._BYTES, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
        except OSError:
            return None
        finally:
            if own:
                os.close(fd)
        if at is None or at == ctypes.c_void_p(-1).value:
            return None
        words = (ctypes.c_uint64 * (self._BYTES // 8)).from_address(at)
        return words if token and words[self._TOKEN] == token else None

    def count(self, error):
        """Counts one record lost to `error` (an OSError) in this process's slot."""
        import errno
        try:
            if not self.tried:
                self.tried = True
                self.words = self._map()
            w = self.words
            if w is None:
                return
            code = getattr(error, "errno", None)
            reason = 0 if code in (errno.ENOSPC, errno.EDQUOT) else 1 if code in (errno.EACCES, errno.EPERM, errno.EROFS) else 2
            if reason == 1:
                w[self._REFUSED_UID] = os.geteuid() + 1
            pid, slots = os.getpid(), (len(w) - self._SLOTS) // self._SLOT_WORDS
            for k in range(slots):
                at = self._SLOTS + ((pid + k) % slots) * self._SLOT_WORDS
                if w[at] in (0, pid):
                    w[at] = pid
                    w[at + 1 + reason] += 1
                    return
        except Exception:
            pass  # counting must never cost the job


_lost = _Lost()


class _Log:
    """This process's record file, opened, written and closed per record."""

    def write(self, record):
        import json
        pid = os.getpid()
        record["pid"] = pid
        record["img"] = _IMAGE
        data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
        try:
            fd = os.open(os.path.join(_DIR, "%d.jsonl" % pid), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as e:  # out of descriptors, a full disk, another user: counted, never the job's
            _lost.count(e)
            return
        try:
            n = os.write(fd, data)
            if n < len(data):  # a full disk cut it short: cut back to the last whole line, counted
                try:
                    os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_END) - n)
                except OSError:
                    pass
                raise OSError(__import__("errno").ENOSPC, "short write")
        except OSError as e:
            _lost.count(e)
        finally:
            os.close(fd)


_log = _Log()


def _patch(dl):
    """Wraps the DataLoader iterator and the dataset fetchers of module torch.utils.data.dataloader."""
    import itertools
    import threading
    import time
    from torch.utils.data._utils import fetch
    clock = time.monotonic_ns
    serial = itertools.count(1)
    lock = threading.Lock()
    base = dl._BaseDataLoaderIter
    if getattr(base, "_feedbench_watched", False):
        return
    base._feedbench_watched = True

    def settings(loader):
        ctx = loader.multiprocessing_context
        return {"loader": id(loader), "batch_size": loader.batch_size, "num_workers": loader.num_workers,
                "prefetch_factor": loader.prefetch_factor if loader.num_workers > 0 else None,
                "pin_memory": bool(loader.pin_memory), "persistent_workers": bool(loader.persistent_workers),
                "start_method": ctx.get_start_method() if ctx is not None else None}

    def new_epoch(self):
        """An iterator's pass over its loader: a fresh iterator, or a persistent one reset."""
        with lock:
            self._feedbench_epoch = next(serial)
        # Its workers' pids (started by now), so that their fetches map to this pass; a persistent
        # iterator's workers serve every pass of it, told apart by their count of resumes.
        workers = [w.pid for w in getattr(self, "_workers", None) or [] if getattr(w, "pid", None)]
        _log.write(dict({"e": "epoch", "it": self._feedbench_epoch, "t": clock(), "iter": id(self),
                         "workers": workers}, **self._feedbench_settings))

    init, reset = base.__init__, base._reset

    def __init__(self, loader, *a, **k):
        self._feedbench_settings = settings(loader)
        self._feedbench_epoch = None
        init(self, loader, *a, **k)

    def _reset(self, loader, *a, **k):
        reset(self, loader, *a, **k)
        self._feedbench_settings = settings(loader)
        new_epoch(self)

    base.__init__, base._reset = __init__, _reset

    nxt = base.__next__
    pending = []  # the last batch's record, written during the next ask's wait
    thread_cpu = time.thread_time_ns

    def flush():
        while pending:
            _log.write(pending.pop(0))

    import atexit
    atexit.register(flush)
    # A process forked from the trainer (not a DataLoader worker) must not write the trainer's
    # pending batch as its own.
    os.register_at_fork(after_in_child=pending.clear)

    # "got" is when next() has returned to the job: after the statement that asked has stored the
    # batch, which frees the job's previous batch (a DataLoader's shared-memory tensors: their
    # segments unmapped and descriptors closed, milliseconds a batch of 20 MB) and which the job's
    # own timing around next() counts as wait. The asking frame is traced opcode by opcode only
    # until its first instruction that is not a store, an unpack or a pop (a few events a batch);
    # never where the thread is traced already (a debugger, coverage), and a call site that did
    # not resume before the next ask (list(loader) in C) is not traced again.
    import dis
    passing = frozenset(i for i, n in enumerate(dis.opname)
                        if n.startswith(("STORE_", "UNPACK_")) or n in ("POP_TOP", "NOP", "EXTENDED_ARG"))
    armed = []  # [frame, record, thread] while a got is being settled
    indirect = set()  # (code, offset) of call sites that did not resume before the next ask

    def untraced(frame, event, arg):
        return None  # what the asking frame calls meanwhile is not traced

    def disarm(stamp):
        frame, record, _ = armed.pop()
        if stamp:
            # The loader's own threads (the index queues' feeders, pin memory) asked for the GIL
            # during __next__; the job's next call would hand it to them before its own clock
            # reads (under load, many milliseconds): handed over here, that is wait too.
            time.sleep(0)
            record["got"], record["cgot"] = clock(), thread_cpu()
        frame.f_trace = None
        frame.f_trace_opcodes, frame.f_trace_lines = False, True
        if sys.gettrace() is untraced:
            sys.settrace(None)

    def settle_got(record, frame):
        if armed or frame is None or sys.gettrace() is not None or (frame.f_code, frame.f_lasti) in indirect:
            return
        code, events = frame.f_code.co_code, [0]

        def step(f, event, arg):
            if event == "opcode" and events[0] < 8 and f.f_lasti < len(code) and code[f.f_lasti] in passing:
                events[0] += 1
                return step
            disarm(True)
            return None

        armed.append([frame, record, threading.get_ident()])
        frame.f_trace_lines, frame.f_trace_opcodes = False, True
        frame.f_trace = step
        sys.settrace(untraced)

    def __next__(self):
        if armed and armed[0][2] == threading.get_ident():
            frame = armed[0][0]
            indirect.add((frame.f_code, frame.f_lasti))
            disarm(False)
        if getattr(self, "_feedbench_epoch", None) is None:
            new_epoch(self)  # a single-process iterator is never reset
        ask, cask = clock(), thread_cpu()
        # The previous batch's step, on this thread's CPU: from its got to this ask, same pass.
        if pending and pending[-1]["it"] == self._feedbench_epoch:
            pending[-1]["step_cpu"] = cask - pending[-1]["cgot"]
        # The previous batch's record is written here, inside this batch's wait, which both the
        # job's own timing and ours count: the probe's write never lands in the job's step.
        flush()
        # Without workers this process fetches the batch itself: which one, for its fetch record.
        current[:] = [self._feedbench_epoch, self._num_yielded, None]
        try:
            data = nxt(self)
        except StopIteration:
            _log.write({"e": "end", "it": self._feedbench_epoch, "t": clock()})
            raise
        got, cgot = clock(), thread_cpu()
        record = {"e": "batch", "it": self._feedbench_epoch, "k": self._num_yielded - 1,
                  "ask": ask, "got": got, "cask": cask, "cgot": cgot}
        pending.append(record)
        settle_got(record, sys._getframe(1))
        return data

    base.__next__ = __next__

    def runqueue_ns():
        """This thread's time runnable but waiting for a core (the kernel's schedstat); 0 without."""
        try:
            fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
            try:
                return int(os.read(fd, 128).split()[1])
            finally:
                os.close(fd)
        except (OSError, IndexError, ValueError):
            return 0

    # The batch this thread is fetching: [pass or None, batch index, resumes or None]. A worker
    # learns it from its index queue: each task is (batch index, sample indices), and a
    # _ResumeIteration starts a persistent worker's next pass.
    current = [None, None, None]

    class _IndexQueue:
        def __init__(self, q):
            self._q = q
            self._resumes = 0

        def get(self, *a, **k):
            r = self._q.get(*a, **k)
            if isinstance(r, tuple) and len(r) == 2:
                current[:] = [None, r[0], self._resumes]
            elif type(r).__name__ == "_ResumeIteration":
                self._resumes += 1
            return r

        def __getattr__(self, name):
            return getattr(self._q, name)

    from torch.utils.data._utils import worker as worker_module
    loop = worker_module._worker_loop

    def _worker_loop(*a, **k):
        if "index_queue" in k:
            k["index_queue"] = _IndexQueue(k["index_queue"])
        elif len(a) > 2:
            a = a[:2] + (_IndexQueue(a[2]),) + a[3:]
        try:
            return loop(*a, **k)
        finally:
            # The worker's CPU in all, its threads' (the queue's feeder pickling batches) with
            # it: what its last fetch handed over is the part after that fetch began.
            _log.write({"e": "worker_end", "t": clock(), "pcpu": time.process_time_ns()})

    # Pickled by name for spawned workers: the same name finds this one in the child, patched too.
    _worker_loop.__module__, _worker_loop.__qualname__ = loop.__module__, loop.__qualname__
    _worker_loop.__name__ = loop.__name__
    worker_module._worker_loop = _worker_loop

    def wrap_fetch(cls):
        inner = cls.fetch

        def fetch_(self, index):
            t0, c0, q0, p0 = clock(), time.thread_time_ns(), runqueue_ns(), time.process_time_ns()
            try:
                return inner(self, index)
            finally:
                from torch.utils.data import get_worker_info
                info = get_worker_info()
                record = {"e": "fetch", "worker": info.id if info is not None else -1, "t0": t0, "t1": clock(),
                          "cpu": time.thread_time_ns() - c0, "runq": runqueue_ns() - q0, "pcpu": p0,
                          "n": len(index) if hasattr(index, "__len__") else 1, "tid": threading.get_native_id()}
                if current[1] is not None:
                    record["batch"] = current[1]
                    if current[0] is not None:
                        record["pass"] = current[0]
                    if current[2] is not None:
                        record["resumes"] = current[2]
                _log.write(record)

        cls.fetch = fetch_

    wrap_fetch(fetch._MapDatasetFetcher)
    wrap_fetch(fetch._IterableDatasetFetcher)


class _Finder:
    """Patches torch.utils.data.dataloader once the job imports it, and never imports it itself."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch.utils.data.dataloader":
            return None
        import importlib.machinery
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            try:
                _patch(module)
            except Exception as e:  # a torch this probe does not know: say so once, run on
                _log.write({"e": "probe_error", "what": "%s: %s" % (type(e).__name__, e)})

        loader.exec_module = exec_and_patch
        return spec


if _DIR:
    sys.meta_path.insert(0, _Finder())
_chain()
