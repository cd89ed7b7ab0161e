"""Beyond one machine, for real: three SSH hosts (real sshd, each in its own network namespace with its own
address), a host that stops answering mid-run and comes back, host-key verification, and a Dask LocalCluster
of two workers whose timings never overlap."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from lab import results
from lab.config import Lab
from lab.publish import build_report
from lab.report import errors_in

from lab.backends import ssh

from . import sshd
from .conftest import ROOT
from .html_tables import find

pytestmark = pytest.mark.timeout(900)
WHY = sshd.available()
needs_hosts = pytest.mark.skipif(WHY is not None, reason=f"no SSH test hosts: {WHY}")


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    hs = sshd.Hosts(tmp_path_factory.mktemp("ssh"), 3)
    yield hs
    hs.close()


def lab_cmd(tmp: Path, hs, *args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "CIPHERLAB_HOSTS_DIR": str(hs.hosts_dir), "CIPHERLAB_LOCK_DIR": str(tmp / "locks"),
           **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "lab", *args], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=800)


def run_args(tmp: Path, *extra: str) -> list[str]:
    return ["run", "--results-dir", str(tmp / "results"), "--build-dir", str(ROOT / "build" / "test-ssh"),
            "--no-report", "--no-icount", "--no-progress", "--profile", "smoke", "--implementations", "default", *extra]


@needs_hosts
def test_a_run_over_three_hosts_merges_into_one_report(hosts, tmp_path):
    r = lab_cmd(tmp_path, hosts, *run_args(tmp_path, "--ciphers", "des,idea", "--toolchains", "gcc-O3",
                                           "--hosts", "h1,h2,h3", "--no-local"))
    assert r.returncode == 0, r.stderr
    dirs = results.run_dirs(tmp_path / "results")
    assert sorted(d.parent.name for d in dirs) == ["h1", "h2", "h3"]  # results/<machine>/<run-id>/
    assert len({d.name for d in dirs}) == 1  # one run id
    for d in dirs:
        meta, cells = results.read_run(d)
        assert meta.machine["ssh"].startswith("root@10.231.") and meta.machine["cpu_model"]
        assert {c.status for c in cells} == {"ok"} and len(cells) == 2
        assert all(c.cell.endswith("@" + d.parent.name) for c in cells)
    # nothing but the programs, the runner and the vectors went to the host
    shipped = sorted(p.name for p in (hosts.hosts[0].workdir / "files").rglob("*") if p.is_file())
    assert set(shipped) <= {"kat", "timing", "cycles", "cipherlab-run", "des.kat", "idea.kat"}
    html = build_report(Lab(hosts_dir=hosts.hosts_dir), dirs,
                        results_dir=tmp_path / "results", reports_dir=tmp_path / "reports").read_text()
    assert not errors_in(html)
    platforms = [r[0].text for r in find(html, "machines")[0].rows]
    assert platforms == ["host @ h1", "host @ h2", "host @ h3"]
    assert len(find(html, "a1")) == 3  # a NIST table per machine, never averaged together


@needs_hosts
@pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK (./cipherlab installs it)")
def test_java_cells_run_on_an_ssh_host_in_its_jvm_beside_c_cells(hosts, tmp_path):
    """A Java cell on an SSH host goes through the same pipeline as a C cell there: the classes (one jar) and the
    pinned jars are shipped, the host's JVM starts the same command, the cell is gated and measured there."""
    r = lab_cmd(tmp_path, hosts, *run_args(tmp_path, "--ciphers", "rc6", "--toolchains", "openjdk17-c2,gcc-O3",
                                           "--hosts", "h2", "--no-local"))
    assert r.returncode == 0, r.stderr
    (d,) = results.run_dirs(tmp_path / "results")
    meta, cells = results.read_run(d)
    assert d.parent.name == "h2" and meta.machine["ssh"].startswith("root@10.231.")
    by_language = {c.language: c for c in cells}
    assert set(by_language) == {"java", "c"} and {c.status for c in cells} == {"ok"}, cells
    java_cell = by_language["java"]
    assert java_cell.cell.endswith("@h2") and java_cell.java.java_version
    df = results.load(d, tmp_path / "results")
    speeds = df[(df.language == "java") & (df.metric == "encrypt_speed")]
    assert len(speeds) and (speeds.estimate > 0).all()
    shipped = {p.name for p in (hosts.hosts[1].workdir / "files").rglob("*") if p.is_file()}
    # (the known answers' verdicts may come from the verdict cache of an earlier run: kat need not be there)
    assert {"classes.jar", "timing"} <= shipped and any(
        n.endswith(".jar") and n != "classes.jar" for n in shipped), ",".join(sorted(shipped))


@needs_hosts
def test_an_unknown_host_key_is_refused_unless_accepted(hosts, tmp_path):
    (tmp_path / "hosts").mkdir()
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    h = hosts.hosts[0]
    (tmp_path / "hosts" / "newbox.yaml").write_text(
        f"address: {h.address}\nuser: root\nidentity_file: {hosts.key}\ntarget: host\nworkdir: {h.workdir}\n"
        f"known_hosts: {empty}\n")
    env = {"CIPHERLAB_HOSTS_DIR": str(tmp_path / "hosts")}
    args = run_args(tmp_path, "--ciphers", "des", "--toolchains", "gcc-O3", "--hosts", "newbox", "--no-local")
    r = lab_cmd(tmp_path, hosts, *args, env_extra=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "its key is not in" in r.stderr and "--accept-new-host-keys" in r.stderr
    r = lab_cmd(tmp_path, hosts, *args, "--accept-new-host-keys", env_extra=env)
    assert r.returncode == 0, r.stderr
    assert h.address in empty.read_text()  # remembered: the next contact is verified


# A host whose link is cut is found dead within ssh.DEAD_LINK_BOUND (15 s: keepalives after 5 s without
# traffic, TCP_USER_TIMEOUT of 10 s) whatever it was doing; the test allows as much again for a loaded machine.
CUT_FOUND_WITHIN = 2 * ssh.DEAD_LINK_BOUND
HOST_TEST_BOUND = 300  # seconds for the whole test: run, cut, resume (31-92 s measured with warm builds)


CUTS = {  # where h2's link is cut: (the line of the run that triggers it, seconds after it)
    "in-prepare": (r"prepare \(build, verify, instruction counts\): \d+ cells on h2", 0.0),  # builds, uploads, gates
    "in-measure": (r"measure: \d+ cells on h2", 1.0),  # a measuring program running (or being shipped)
    "waiting-for-lock": ("waiting for the timing lock of host h2", 0.0),  # another run holds h2's timing lock
    # not cut: every process of h2 frozen (SIGSTOP) as its prepare stage starts: TCP still acknowledged, SSH silent
    "frozen-in-prepare": (r"prepare \(build, verify, instruction counts\): \d+ cells on h2", 0.0),
}


@needs_hosts
@pytest.mark.timeout(HOST_TEST_BOUND)
@pytest.mark.parametrize("where", sorted(CUTS))
def test_a_host_that_stops_answering_gives_unreachable_cells_and_resume_retries_them(hosts, tmp_path, where):
    """h2's link is cut as its prepare stage (build, upload, known answers) starts, 1 s into its measuring, or
    while it waits for h2's timing lock: its unfinished cells are recorded unreachable within CUT_FOUND_WITHIN seconds of the cut, the run
    finishes h1's cells, and --resume runs h2's once the link is back."""
    trigger, delay = CUTS[where]
    # a cut is found by the link (DEAD_LINK_BOUND), not by a time-out: 8 s timed out h1's gates under load
    args = run_args(tmp_path, "--ciphers", "des,idea,rc6,3des", "--toolchains", "gcc-O3,clang-O3",
                    "--hosts", "h1,h2", "--no-local", "--timeout", "60", "--jobs", "1")
    env = {**os.environ, "CIPHERLAB_HOSTS_DIR": str(hosts.hosts_dir), "CIPHERLAB_LOCK_DIR": str(tmp_path / "locks")}
    h2 = hosts.hosts[1]
    holder = None
    if where == "waiting-for-lock":  # another run's lock on h2 (same file system: the namespaces share it)
        h2.workdir.mkdir(parents=True, exist_ok=True)
        holder = subprocess.Popen(["flock", str(h2.workdir / "timing.lock"), "sleep", "600"], start_new_session=True)
    p = subprocess.Popen([sys.executable, "-m", "lab", *args], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    seen, cut, found = [], None, None
    try:
        for line in p.stderr:  # the stage lines, then a line per finished cell: cut h2's link, then wait
            seen.append(line)
            if cut is None and re.search(trigger, line):
                time.sleep(delay)
                h2.freeze() if where.startswith("frozen") else h2.down()  # the machine stops answering
                cut = time.monotonic()
            elif cut is not None and "unreachable" in line and "@h2" in line:
                found = time.monotonic() - cut
                break
        out, err = p.communicate(timeout=HOST_TEST_BOUND)
        err = "".join(seen) + err
    finally:
        h2.thaw() if where.startswith("frozen") else h2.up()
        if holder is not None:
            os.killpg(holder.pid, signal.SIGKILL)  # flock and its sleep
            holder.wait()
    print(f"h2 cut {where}: found unreachable {found} s after the cut")
    assert cut is not None and found is not None, err
    assert found < CUT_FOUND_WITHIN, f"h2 found unreachable {found:.1f} s after the cut"
    assert p.returncode == 1, err  # red (unreachable) cells, the rest of the run done
    (d2,) = results.run_dirs(tmp_path / "results" / "h2")  # beside it the machine's speed.json (lab/speed.py)
    (d1,) = results.run_dirs(tmp_path / "results" / "h1")
    _, c2 = results.read_run(d2)
    unreachable = [c for c in c2 if c.status == "unreachable"]
    assert unreachable and all(f"h2 ({h2.address}:22) unreachable" in c.reason for c in unreachable)
    _, c1 = results.read_run(d1)
    assert {c.status for c in c1} == {"ok"} and len(c1) == 8
    r = subprocess.run([sys.executable, "-m", "lab", "run", "--resume", "--results-dir", str(tmp_path / "results"),
                        "--build-dir", str(ROOT / "build" / "test-ssh"), "--no-report", "--no-progress"],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    meta, c2 = results.read_run(d2)
    assert sorted(c.cell for c in c2) == sorted(meta.cells_planned)  # each once, none lost
    assert {c.status for c in c2} == {"ok"} and meta.status == "finished"


@needs_hosts
def test_a_cut_link_loses_the_timing_lock_after_its_lease_and_a_held_one_keeps_it(hosts, monkeypatch):
    """The remote holder of a host's timing lock lets go LEASE_SECONDS after it last heard from the run: held
    past several leases while the run's heartbeat reaches it, free one lease after the link is cut (without the
    lease it was held until TCP gave up on the connection, minutes; a --resume waited for that)."""
    from lab.backends.host import HostBackend
    from lab.schema import HostFile

    # the lease is kept by a byte every LEASE_SECONDS / 3, so the held half fails only if the heartbeat thread
    # stalls for 2/3 of a lease: 4 s with a 6 s lease (a 2 s lease left 1.3 s, which a loaded machine can take)
    monkeypatch.setattr(ssh, "LEASE_SECONDS", 6)
    h2 = hosts.hosts[1]
    backend = ssh.SshBackend("h2", HostFile(**yaml.safe_load((hosts.hosts_dir / "h2.yaml").read_text())),
                             HostBackend(ROOT))
    lock = h2.workdir / "timing.lock"  # the namespaces share this machine's file system

    def free() -> bool:
        return subprocess.run(["flock", "-n", str(lock), "true"]).returncode == 0
    try:
        with backend.timing_lock("lease-test", say=lambda _: None) as got:
            assert got == {"host": "h2"} and not free()
            time.sleep(3 * ssh.LEASE_SECONDS)  # three leases, kept by the heartbeat
            assert not free()
            h2.down()
            cut = time.monotonic()
            while not free() and time.monotonic() - cut < 10 * ssh.LEASE_SECONDS:
                time.sleep(0.1)
            released = time.monotonic() - cut
            # the holder's `read -t LEASE_SECONDS` restarts at each byte, and the last byte arrived before the cut:
            # free within one lease of it, plus the holder's exit and this loop's 0.1 s polls (2 s for a loaded
            # machine); a bound that does not depend on how quiet the machine is
            assert free() and released < ssh.LEASE_SECONDS + 2, f"released {released:.1f} s after the cut"
    finally:
        h2.up()
        backend.close()


def test_an_upload_cut_short_stores_nothing_and_a_stored_file_that_is_not_whole_is_sent_again(hosts, tmp_path):
    """A cut link ends the host's stdin early, and its cat ends without an error: the store command must not
    give the short file the whole one's name (a later run ran such an empty 'program' as an empty script: exit
    0, no output).  And a file already stored under its hash is checked against it, not only found."""
    from lab.backends.host import HostBackend
    from lab.schema import HostFile

    def backend():
        return ssh.SshBackend("h1", HostFile(**yaml.safe_load((hosts.hosts_dir / "h1.yaml").read_text())),
                              HostBackend(ROOT))
    data = os.urandom(300_000)
    local = tmp_path / "program"
    local.write_bytes(data)
    b = backend()
    try:
        remote = Path(b._upload(local, 0o755))  # the namespaces share this machine's file system
        assert remote.read_bytes() == data and os.access(remote, os.X_OK)
        cut = remote.with_name("cut-short")
        chan = b._connect().client.get_transport().open_session()
        chan.exec_command(b._store_command(str(cut), 0o755, len(data), hashlib.sha256(data).hexdigest()))
        chan.sendall(data[:4096])
        chan.close()  # the host sees its stdin end, as when the link is cut
        time.sleep(2)
        assert not cut.exists() and not list(cut.parent.glob("cut-short*")), "a short upload was stored"
        remote.write_bytes(b"")  # what an upload cut short left before
    finally:
        b.close()
    b = backend()
    try:
        assert Path(b._upload(local, 0o755)) == remote and remote.read_bytes() == data
    finally:
        b.close()


def test_an_exchange_with_a_host_may_take_the_floor_plus_its_bytes_at_the_minimum_rate():
    from lab.backends.host import HostBackend
    from lab.config import HostFile

    slow = ssh.SshBackend("x", HostFile(address="x", target="host", answer_floor_seconds=5, min_rate_kib=2),
                          HostBackend(ROOT))
    assert slow._transfer_seconds(0) == 5 and slow._transfer_seconds(20 * 1024) == 15
    default = ssh.SshBackend("x", HostFile(address="x", target="host"), HostBackend(ROOT))
    assert default._transfer_seconds(2 * 1024 * 1024) == 20 + 8  # a 2 MiB static program: 28 s, not 300


def test_a_dask_local_cluster_of_two_workers_never_overlaps_timings(tmp_path):
    pytest.importorskip("distributed", reason="the optional Dask extra: pip install -e '.[distributed]'")
    from lab.progress import Progress
    from lab.run import RunRequest, run

    os.environ["CIPHERLAB_LOCK_DIR"] = str(tmp_path / "locks")
    try:
        out = run(Lab(), RunRequest(ciphers=["des", "idea", "rc6", "twofish"],
                                    implementations=["des/spbox", "idea/ref", "rc6/ref", "twofish/full",
                                                     "twofish/compact"],
                                    toolchains=["gcc-O3", "clang-O3"],
                                    profile="smoke", executor="dask", icount=False, results_dir=tmp_path / "results",
                                    build_dir=ROOT / "build" / "test-dask"), Progress(0, "quiet"))
    finally:
        del os.environ["CIPHERLAB_LOCK_DIR"]
    assert out.counts == {"ok": 10}
    _, cells = results.read_run(out.run_dir)
    spans = sorted((p.started, p.started + p.seconds, c.cell) for c in cells
                   for p in [*c.measurement.timing, *c.measurement.cycles])
    assert len(spans) == 10 * 2 * 2
    for (s1, e1, a), (s2, e2, b) in zip(spans, spans[1:]):
        assert e1 <= s2, f"timings overlap: {a} until {e1}, {b} from {s2}"


@pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK (./cipherlab installs it)")
def test_java_and_c_cells_on_a_dask_local_cluster(tmp_path):
    """Java cells are cells on Dask too: the same prepare and measure tasks, on a real LocalCluster."""
    pytest.importorskip("distributed", reason="the optional Dask extra: pip install -e '.[distributed]'")
    from lab.progress import Progress
    from lab.run import RunRequest, run

    os.environ["CIPHERLAB_LOCK_DIR"] = str(tmp_path / "locks")
    try:
        out = run(Lab(), RunRequest(ciphers=["rc6"], implementations="default",
                                    toolchains=["gcc-O3", "openjdk17-c2"], profile="smoke", executor="dask",
                                    icount=False, results_dir=tmp_path / "results",
                                    build_dir=ROOT / "build" / "test-dask"), Progress(0, "quiet"))
    finally:
        del os.environ["CIPHERLAB_LOCK_DIR"]
    assert out.counts == {"ok": 2}
    _, cells = results.read_run(out.run_dir)
    assert sorted(c.language for c in cells) == ["c", "java"]
    assert all(c.measurement.timing for c in cells)


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (the run: its Dask nannies, workers and their programs), from the kernel's
    children lists: a few files, so polling stays fast however loaded the machine is (a scan of all of /proc
    took long enough under load to miss every short measuring program of a run)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:  # a process may end between its parent's children list and this read: it has no children then
            tasks = list(Path(f"/proc/{p}/task").glob("*/children"))
        except OSError:
            continue
        for t in tasks:
            try:
                kids = [int(x) for x in t.read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def _measuring_worker(run_pid: int, build_dir: Path) -> tuple[int, int, str] | None:
    """(worker pid, program pid, cell's build folder) of a timing or cycles program running from build_dir."""
    for pid in _descendants(run_pid):
        d = Path(f"/proc/{pid}")
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            stat = (d / "stat").read_text()
        except OSError:
            continue
        if argv and str(build_dir).encode() in argv[0] and Path(argv[0].decode()).name in ("timing", "cycles"):
            program = Path(argv[0].decode())  # the process's own copy: <cell>/.own-PID-N/<process>/<program>
            cell = program.parent.parent.parent if program.parent.parent.name.startswith(".own-") else program.parent
            return int(stat.rsplit(")", 1)[1].split()[1]), pid, str(cell)
    return None


def test_a_dask_worker_that_dies_mid_measurement_has_its_cell_measured_again(tmp_path):
    """The worker that holds the timing resource is killed (SIGKILL) while it measures a cell: the scheduler runs
    the task again on the restarted worker, the cell is measured from the start, and nothing is lost or doubled."""
    pytest.importorskip("distributed", reason="the optional Dask extra: pip install -e '.[distributed]'")
    build = ROOT / "build" / "test-dask-death"
    env = {**os.environ, "CIPHERLAB_LOCK_DIR": str(tmp_path / "locks")}
    # the quick profile, not smoke: smoke's measuring programs live a few milliseconds each (twelve in the run), and
    # a poller descheduled on a loaded machine could miss them all; quick's run for seconds per cell
    p = subprocess.Popen([sys.executable, "-m", "lab", "run", "--ciphers", "des,idea,rc6", "--implementations", "default", "--toolchains", "gcc-O3",
                          "--profile", "quick", "--executor", "dask", "--no-icount", "--no-report", "--no-progress",
                          "--results-dir", str(tmp_path / "results"), "--build-dir", str(build)],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and p.poll() is None and time.monotonic() < deadline:
        found = _measuring_worker(p.pid, build)
        if found:
            worker, program, cell_dir = found
            at = time.time()
            os.kill(worker, 9)  # the worker process, as an OOM kill or a crash would
            try:
                os.killpg(program, 9)  # and what it was running
            except ProcessLookupError:
                pass
            killed = worker
        time.sleep(0.005)
    out, err = p.communicate(timeout=600)
    assert killed, f"no measuring program was seen running: {out}{err}"
    assert p.returncode == 0, err
    (d,) = results.run_dirs(tmp_path / "results")
    meta, cells = results.read_run(d)
    assert sorted(c.cell for c in cells) == sorted(meta.cells_planned)  # each once, none lost, none doubled
    assert {c.status for c in cells} == {"ok"} and meta.status == "finished"
    spans = sorted((p.started, p.started + p.seconds) for c in cells
                   for p in [*c.measurement.timing, *c.measurement.cycles])
    assert all(e1 <= s2 for (_, e1), (s2, _) in zip(spans, spans[1:]))
    # the cell whose measurement was cut: everything kept of it was measured after the kill (from the start)
    cipher, impl = Path(cell_dir).parts[-2:]
    (hit,) = [c for c in cells if c.cell.startswith(f"{cipher}/{impl}@")]
    assert min(p.started for p in [*hit.measurement.timing, *hit.measurement.cycles]) > at
    # the dead worker's copies of its programs were swept when the cell was measured again; none are left
    assert not list(build.rglob(".own-*"))
