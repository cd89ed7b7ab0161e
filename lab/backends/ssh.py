"""The SSH backend: programs built here, run on a machine reached over SSH (hosts/<name>.yaml).

Builds run locally, through the backend that builds for the host's target (the host's own compilers when the
machine has this machine's architecture, else the target's container), linked statically, so nothing but an
SSH server is needed there.  What goes to the host: the built programs, the runner entry point
(cipherlab-run) and the known-answer files — each stored once under the host's work folder by content hash.
Instruction counts stay local (QEMU of the target's architecture: they are the same on any machine).

Connections use Fabric (paramiko): host keys are verified against known_hosts, a first contact is refused
unless the user accepts it (``accept_new_host_keys``), and no password is ever asked for (keys: the identity
file, else the SSH agent and ~/.ssh/config).  A host that cannot be reached, or stops answering, makes its
commands come back ``unreachable`` (the run records its cells so and goes on; ``--resume`` retries them).
The timing lock of the host is a ``flock`` held by a remote process for the whole measuring stage, on a lease:
this side sends it a byte every LEASE_SECONDS / 3 and it lets go when none came for LEASE_SECONDS.  (Without the
lease, a cut link left the holder waiting on a connection its sshd still thought alive until TCP gave up on it,
minutes later, and a ``--resume`` after the link came back waited for that.)

Failing fast.  Every exchange has a time limit that scales with what it sends: the host's
``answer_floor_seconds`` plus the bytes sent over its ``min_rate_kib`` (hosts/<name>.yaml; 20 s and 256 KiB/s
by default), a program run its own time limit plus that floor.  A link that goes dead is
found sooner than any of these: SSH keepalives go out after KEEPALIVE_SECONDS without traffic, and the
connection's TCP_USER_TIMEOUT closes it once data has gone unacknowledged for DEAD_LINK_SECONDS — so within
DEAD_LINK_BOUND (15 s) of a cut, whatever was in progress (an upload, a program run, taking the timing lock),
the host is ``unreachable``.  A host that keeps its link but stops answering (its processes frozen: TCP is still
acknowledged, SSH says nothing) is found by keepalives that want a reply (:class:`_Answers`): no answer for
SILENT_BOUND seconds ends whatever call was waiting on it, and the host is ``unreachable``.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..config import ROOT, HostFile, Target
from ..errors import RunError
from .base import RUNNER_SCRIPT, TIMED_OUT, Backend, Completed, launch_spec

CONNECT_TIMEOUT = 15  # seconds for the TCP connection, the SSH banner and the authentication
KEEPALIVE_SECONDS = 5  # an SSH keepalive goes out after this long without sending anything
DEAD_LINK_SECONDS = 10  # TCP_USER_TIMEOUT: data unacknowledged this long means the link is dead
DEAD_LINK_BOUND = KEEPALIVE_SECONDS + DEAD_LINK_SECONDS  # a cut link is found within this many seconds
SILENT_BOUND = KEEPALIVE_SECONDS + DEAD_LINK_SECONDS  # a host that stops answering (frozen) is given up after this
LEASE_SECONDS = 30  # the remote timing-lock holder lets go when it heard nothing from this side for this long


class HostUnreachable(Exception):
    pass


def _fail_fast(transport) -> None:
    """Keepalives, and TCP_USER_TIMEOUT on the connection's socket (when it is a TCP socket, not a proxy
    command), so that a link that stops carrying data closes the connection within DEAD_LINK_BOUND seconds."""
    transport.set_keepalive(KEEPALIVE_SECONDS)
    sock = transport.sock
    if isinstance(sock, socket.socket) and hasattr(socket, "TCP_USER_TIMEOUT") and \
            sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, DEAD_LINK_SECONDS * 1000)


class _Answers:
    """When the host last answered: a thread asks it every KEEPALIVE_SECONDS with a global request that wants a
    reply (OpenSSH answers even a request it does not know).  A host whose processes are frozen (SIGSTOP) keeps
    its TCP connection acknowledged and sends nothing: only an unanswered question finds it, within
    SILENT_BOUND seconds, whatever call is waiting on it."""

    def __init__(self, transport):
        self.transport, self.heard = transport, time.monotonic()
        self._stop = threading.Event()
        threading.Thread(target=self._ask, daemon=True, name="ssh-answers").start()

    def _ask(self) -> None:
        while not self._stop.wait(KEEPALIVE_SECONDS) and self.transport.is_active():
            try:
                self.transport.global_request("keepalive@openssh.com", wait=True)
            except Exception:  # noqa: BLE001 - a closed transport: the callers see it inactive
                return
            self.heard = time.monotonic()

    def silent(self) -> float:
        """Seconds since the host last answered."""
        return time.monotonic() - self.heard

    def stop(self) -> None:
        self._stop.set()


def _heartbeat(chan, stop: threading.Event) -> None:
    """Keeps the remote timing-lock holder's lease: a byte every LEASE_SECONDS / 3 until `stop` (or the channel
    fails: then the link is gone and the holder lets go by itself)."""
    while not stop.wait(LEASE_SECONDS / 3):
        try:
            chan.send(b".")
        except Exception:  # noqa: BLE001 - paramiko's errors of a closed or dead channel
            return


class SshBackend(Backend):
    name = "ssh"
    own_copies = False  # programs are shipped once by content; the host runs that copy for every process

    def __init__(self, host_name: str, host: HostFile, build: Backend, *, accept_new_host_keys: bool = False,
                 root: Path = ROOT):
        super().__init__()
        self.host_name, self.host, self.build = host_name, host, build
        self.cancel = build.cancel  # one Ctrl-C stops both
        self.accept_new = accept_new_host_keys
        self.root = Path(root)
        self._conn = None
        self._answers: _Answers | None = None
        self._down: str | None = None  # why the host stopped answering
        self._remote: dict[Path, str] = {}  # local file -> remote path
        self._facts: dict | None = None
        self.workdir = host.workdir or ".cipherlab"

    # ----------------------------------------------------------- connection
    def _connect(self):
        if self._conn is not None:
            transport = self._conn.client.get_transport() if self._conn.client else None
            if transport is not None and transport.is_active():
                return self._conn
            self._conn = None
        import paramiko
        from fabric import Config, Connection

        kwargs: dict = {"allow_agent": True, "look_for_keys": True,
                        "banner_timeout": CONNECT_TIMEOUT, "auth_timeout": CONNECT_TIMEOUT}
        if self.host.identity_file:
            kwargs.update(key_filename=os.path.expanduser(self.host.identity_file), allow_agent=False,
                          look_for_keys=False)
        conn = Connection(self.host.address, user=self.host.user, port=self.host.port, connect_kwargs=kwargs,
                          connect_timeout=CONNECT_TIMEOUT, config=Config(overrides={"load_ssh_configs": True}))
        known = Path(os.path.expanduser(self.host.known_hosts or "~/.ssh/known_hosts"))
        conn.client.set_missing_host_key_policy(
            paramiko.AutoAddPolicy() if self.accept_new else paramiko.RejectPolicy())
        if known.exists():
            conn.client.load_host_keys(str(known))
        try:
            conn.open()
        except paramiko.SSHException as e:
            if "not found in known_hosts" in str(e) or "Server" in str(e) and "not found" in str(e):
                raise RunError(f"host {self.host_name} ({self.host.address}:{self.host.port}): its key is not in "
                               f"{known}. Fix: check the key and add it (ssh-keyscan), or accept it once with "
                               "--accept-new-host-keys") from None
            if isinstance(e, paramiko.BadHostKeyException):
                raise RunError(f"host {self.host_name}: its key does not match {known} (a different machine, or "
                               "an attack). Fix: verify the machine, then update known_hosts") from None
            if isinstance(e, paramiko.AuthenticationException):
                raise RunError(f"host {self.host_name}: authentication failed for user {self.host.user or '(default)'}"
                               f". Fix: set identity_file in hosts/{self.host_name}.yaml or load the key into the "
                               "SSH agent (no password is asked for during a run)") from None
            raise HostUnreachable(str(e)) from None
        except (OSError, socket.timeout, EOFError) as e:
            raise HostUnreachable(f"{type(e).__name__}: {e}") from None
        if self.accept_new and known.parent.exists():
            conn.client.save_host_keys(str(known))
        _fail_fast(conn.client.get_transport())
        if self._answers is not None:
            self._answers.stop()
        self._answers = _Answers(conn.client.get_transport())
        self._conn = conn
        return conn

    def _silent(self) -> bool:
        """The host has not answered a keepalive for SILENT_BOUND seconds (frozen, or the link is gone)."""
        return self._answers is not None and self._answers.silent() > SILENT_BOUND

    def _transfer_seconds(self, nbytes: int) -> float:
        """How long sending nbytes (and hearing back) may take: the floor plus the bytes at the minimum rate."""
        return self.host.answer_floor_seconds + nbytes / (self.host.min_rate_kib * 1024)

    def _lost(self, what: str) -> HostUnreachable:
        self._conn = None
        return HostUnreachable(f"connection lost {what} (nothing acknowledged for {DEAD_LINK_SECONDS} s, or closed "
                               "by the host)")

    def _sh(self, command: str, limit: float, stdin: bytes | None = None) -> tuple[int, str, str, float]:
        """Run a shell command that may take ``limit`` seconds on the host, sending it stdin: (status, stdout,
        stderr, seconds); HostUnreachable if it cannot, or if the exchange takes longer than limit plus the time
        stdin may take to send (:meth:`_transfer_seconds`)."""
        if self._down:
            raise HostUnreachable(self._down)
        conn = self._connect()
        transport = conn.client.get_transport()
        limit += self._transfer_seconds(len(stdin or b""))
        t0 = time.perf_counter()
        try:
            chan = transport.open_session(timeout=CONNECT_TIMEOUT)
            chan.settimeout(limit)
            chan.exec_command(command)
            if stdin is not None:
                chan.sendall(stdin)
            chan.shutdown_write()
            out, err = bytearray(), bytearray()
            while True:
                if self.cancel.event.is_set():
                    chan.close()
                    self.cancel.check()
                if chan.recv_ready():
                    out += chan.recv(65536)
                elif chan.recv_stderr_ready():
                    err += chan.recv_stderr(65536)
                elif not transport.is_active():
                    raise self._lost("while a command ran")
                elif self._silent():
                    chan.close()
                    self._conn = None
                    raise HostUnreachable(f"no answer to keepalives for {SILENT_BOUND} s while a command ran")
                elif chan.exit_status_ready() and not chan.recv_ready() and not chan.recv_stderr_ready():
                    break
                elif time.perf_counter() - t0 > limit:
                    chan.close()
                    self._conn = None
                    raise HostUnreachable(f"no answer within {limit:.0f} s")
                else:
                    time.sleep(0.002)
            status = chan.recv_exit_status()
            chan.close()
        except (OSError, socket.timeout, EOFError) as e:
            self._conn = None
            raise HostUnreachable(f"connection lost: {type(e).__name__}: {e}") from None
        except Exception as e:  # paramiko.SSHException and friends
            if type(e).__module__.startswith("paramiko"):
                self._conn = None
                raise HostUnreachable(f"connection lost: {e}") from None
            raise
        return status, out.decode(errors="replace"), err.decode(errors="replace"), time.perf_counter() - t0

    @staticmethod
    def _holds(word: str, sha256: str) -> str:
        """A shell test: the file named by the shell word `word` exists and holds the bytes whose SHA-256 is
        `sha256`."""
        return f"printf '%s  %s\\n' {sha256} {word} | sha256sum -c --status 2>/dev/null"

    @classmethod
    def _store_command(cls, remote: str, mode: int, size: int, sha256: str) -> str:
        """The host's side of an upload: the bytes on stdin into a temporary file of this process, moved to
        `remote` only when they are all there (size and SHA-256), else removed with status 1.  (A cut link ends
        stdin early, and cat ends without an error: moving what it wrote left a short file under the name of
        a whole one, which a later run took for the program; an empty one even ran, as an empty script.)"""
        q, part = shlex.quote(remote), shlex.quote(remote) + ".part.$$"
        return (f"mkdir -p {shlex.quote(str(Path(remote).parent))} && cat > {part} && "
                f"[ \"$(wc -c < {part})\" -eq {size} ] && {cls._holds(part, sha256)} && "
                f"chmod {mode:o} {part} && mv -f {part} {q} || {{ rm -f {part}; exit 1; }}")

    def _upload(self, local: Path, mode: int = 0o644) -> str:
        """Stores a local file on the host once, under its content hash; a file already there is checked
        against that hash, not only for being there."""
        local = Path(local).resolve()
        if local not in self._remote:
            self._remote[local] = self._store(local.name, local.read_bytes(), mode)
        return self._remote[local]

    def _store(self, name: str, data: bytes, mode: int) -> str:
        """Stores bytes on the host under their content hash, unless a whole copy is there already."""
        sha256 = hashlib.sha256(data).hexdigest()
        remote = f"{self.workdir}/files/{sha256[:16]}/{name}"
        _, out, _, _ = self._sh(f"{self._holds(shlex.quote(remote), sha256)} && echo have", 0)
        if out.strip() != "have":
            status, _, err, _ = self._sh(self._store_command(remote, mode, len(data), sha256), 0, stdin=data)
            if status != 0:
                raise HostUnreachable(f"could not store {name} under {remote} on the host "
                                      f"(status {status}{': ' + err.strip()[:200] if err.strip() else ''})")
        return remote

    def _ship(self, program: Path) -> str:
        """The program on the host: a built binary as it is; a launcher (a Java cell's JVM command, see
        base.launch_spec) as its classpath's files and a launcher of the same command over their copies."""
        spec = launch_spec(program)
        if spec is None:
            return self._upload(program, 0o755)
        program = program.resolve()
        if program not in self._remote:  # once per launcher, as a binary is uploaded once (not per process)
            cp = ":".join(self._upload(Path(f)) for f in spec["classpath"])
            text = "#!/bin/sh\nexec " + " ".join(shlex.quote(x) for x in (
                spec["java"], *spec["flags"], "-cp", cp, spec["main"])) + ' "$@"\n'
            self._remote[program] = self._store(program.name, text.encode(), 0o755)
        return self._remote[program]

    # -------------------------------------------------------------- protocol
    def prepare(self, targets: list[Target], inputs=()) -> None:
        self.build.prepare(targets, inputs)
        try:
            self._upload(self.root / RUNNER_SCRIPT, 0o755)
            for f in inputs:
                self._upload(Path(f))
        except HostUnreachable as e:
            self._went_down(e)

    @property
    def down(self) -> str | None:
        return self._down

    def exec(self, argv: list[str], *, target: Target, timeout: float, env: dict | None = None) -> Completed:
        return self.build.exec(argv, target=target, timeout=timeout, env=env)

    def runner(self) -> str:
        return self._remote.get((self.root / RUNNER_SCRIPT).resolve(), str(RUNNER_SCRIPT))

    def plugin_path(self, target: Target | None = None) -> str | None:
        return self.build.plugin_path(target)

    def run_program(self, program, args, *, target, timeout, env=None, cpu=None, icount=None) -> Completed:
        if icount is not None:  # guest instructions are the same anywhere: counted here, under QEMU
            return self.build.run_program(program, args, target=target, timeout=timeout, env=env, icount=icount)
        from .base import runner_args, runner_env

        def command() -> str:  # the uploads are part of the exchange: a host lost during them is lost here too
            remote = self._ship(Path(program))
            remote_args = [self._upload(Path(a)) if Path(a).is_absolute() and Path(a).is_file() else a for a in args]
            envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in {**runner_env(target), **(env or {})}.items())
            return f"env {envs} " + " ".join(shlex.quote(x) for x in [self.runner(), *runner_args(cpu, None), remote,
                                                                       *remote_args])
        return self._run_there([str(program), *args], command, timeout)

    def run_command(self, argv: list[str], *, target: Target, timeout: float) -> Completed:
        return self._run_there(list(argv), lambda: " ".join(shlex.quote(x) for x in argv), timeout)

    def _run_there(self, argv: list[str], command, timeout: float) -> Completed:
        """`command()` (a shell command line) on the host, in its home folder, under `timeout`: its Completed
        (returncode None when the time ran out), or an unreachable one when the host is lost."""
        wall = time.time()
        try:
            status, out, err, seconds = self._sh(f"cd && timeout -k 5 {timeout:g} {command()}", timeout + 5)
        except HostUnreachable as e:
            self._went_down(e)
            return Completed(argv, None, "", self._down, 0.0, started=wall, unreachable=True)
        if status == TIMED_OUT:
            return Completed(argv, None, out, err, seconds, timed_out=True, started=wall)
        return Completed(argv, status, out, err, seconds, started=wall)

    def _went_down(self, e: Exception) -> None:
        """Remembers why the host is lost."""
        self._down = f"host {self.host_name} ({self.host.address}:{self.host.port}) unreachable: {e}"

    def machine_facts(self) -> dict:
        if self._facts is None:
            from ..system import parse_machine

            try:
                _, out, _, _ = self._sh("cat /proc/cpuinfo; echo @@; cat /etc/os-release; echo @@; hostname; "
                                        "echo @@; uname -m; echo @@; nproc; echo @@; uname -r; echo @@; cat "
                                        "/sys/devices/system/clocksource/clocksource0/current_clocksource "
                                        "2>/dev/null", 0)
                parts = [p.strip() for p in out.split("@@")]
                cpuinfo, osrel, hostname, arch, cores, kernel, clock = (parts + [""] * 7)[:7]
                self._facts = parse_machine(cpuinfo, osrel, hostname, arch, int(cores or 0) or None, kernel,
                                            clocksource=clock)
            except HostUnreachable as e:
                self._facts = {"hostname": self.host.address, "unreachable": str(e)}
            self._facts["machine_id"] = self.host_name
            self._facts["ssh"] = f"{self.host.user + '@' if self.host.user else ''}{self.host.address}:{self.host.port}"
        return self._facts

    def image_id(self, target: Target) -> str | None:
        return self.build.image_id(target)

    def describe(self) -> dict:
        return {"backend": "ssh", "host": self.host_name, "address": self.host.address, "port": self.host.port,
                "built_by": self.build.describe()}

    def allowed_cpus(self) -> list[int]:
        return list(range(self.machine_facts().get("cores") or 1))

    def _try_lock(self, lock: str, who: str):
        """One attempt at the host's timing lock: (the channel that holds it, None) or (None, flock's status);
        HostUnreachable when the host does not answer within its floor (or the link dies)."""
        conn = self._connect()
        transport = conn.client.get_transport()
        try:
            chan = transport.open_session(timeout=CONNECT_TIMEOUT)
            # the lock lives as long as this channel keeps sending (timing_lock's heartbeat): the loop ends at
            # end of file (we closed it) or after LEASE_SECONDS of silence (the link is gone); bash: read -t
            # without a process per heartbeat on the machine that measures
            chan.exec_command(f"mkdir -p {shlex.quote(self.workdir)} && W={who} exec flock -n -E 75 {lock} "
                              "bash -c 'echo \"$W\" > \"$0.who\"; echo LOCKED; "
                              f"while IFS= read -r -n 1 -t {LEASE_SECONDS} _; do :; done' " + lock)
        except (OSError, EOFError) as e:
            raise self._lost(f"while taking the timing lock: {type(e).__name__}: {e}") from None
        except Exception as e:  # paramiko.SSHException and friends
            if type(e).__module__.startswith("paramiko"):
                raise self._lost(f"while taking the timing lock: {e}") from None
            raise
        line, deadline = b"", time.monotonic() + self._transfer_seconds(0)
        while not line.endswith(b"\n") and not (chan.exit_status_ready() and not chan.recv_ready()):
            if chan.recv_ready():
                line += chan.recv(1)
            elif not transport.is_active():
                raise self._lost("while taking the timing lock")
            elif self._silent():
                self._conn = None
                raise HostUnreachable(f"no answer to keepalives for {SILENT_BOUND} s while taking its timing lock")
            elif time.monotonic() > deadline:
                self._conn = None
                raise HostUnreachable("no answer while taking its timing lock")
            else:
                time.sleep(0.01)
        if line.strip() == b"LOCKED":
            return chan, None
        if not transport.is_active():
            raise self._lost("while taking the timing lock")
        status = chan.recv_exit_status()
        chan.close()
        return None, status

    @contextmanager
    def timing_lock(self, run_id: str, wait: bool = True, say=print) -> Iterator[dict]:
        """The host's timing lock: a flock held by a remote process while this connection keeps it open.
        A host that does not answer is marked down (its cells become unreachable), never an exception."""
        lock = shlex.quote(f"{self.workdir}/timing.lock")
        who = shlex.quote(f"run {run_id} from {socket.gethostname()} pid {os.getpid()}")
        announced = False
        chan = None
        while chan is None:
            try:
                if self._down:
                    raise HostUnreachable(self._down)
                chan, status = self._try_lock(lock, who)
                if chan is None:
                    if status != 75:
                        raise RunError(f"host {self.host_name}: cannot take the timing lock (flock exit {status}; "
                                       "are util-linux and bash installed there?)")
                    _, holder, _, _ = self._sh(f"cat {lock}.who 2>/dev/null", 0)
            except HostUnreachable as e:
                if not self._down:
                    self._went_down(e)
                yield {}
                return
            if chan is None:
                if not wait:
                    raise RunError(f"timing is busy on host {self.host_name}: held by "
                                   f"{holder.strip() or 'another run'}")
                if not announced:
                    say(f"waiting for the timing lock of host {self.host_name}: held by {holder.strip()}")
                    announced = True
                time.sleep(2)
        stop = threading.Event()
        beat = threading.Thread(target=_heartbeat, args=(chan, stop), name=f"lease {self.host_name}", daemon=True)
        beat.start()
        try:
            yield {"host": self.host_name}
        finally:
            stop.set()
            try:
                chan.close()
            except Exception:  # noqa: BLE001 - the connection may already be gone
                pass
            beat.join()

    def close(self) -> None:
        if self._answers is not None:
            self._answers.stop()
            self._answers = None
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
            self._conn = None
        self.build.close()
