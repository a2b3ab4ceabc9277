import os
import shutil
import subprocess
import time
from pathlib import Path

from bench.jit import compiler_cpu_seconds, thread_cpu_ms


def _stat(tid: int, name: str, utime: int, stime: int) -> str:
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
    return f"{tid} ({name}) S 1 1 1 0 -1 4194368 10 0 0 0 {utime} {stime} 0 0 20 0 30 0 100 0 0\n"


def test_a_thread_name_with_spaces_and_parentheses_is_read_whole():
    assert thread_cpu_ms(_stat(7, "C2 CompilerThre", 150, 50), clock_ticks=100) == ("C2 CompilerThre", 2000.0)
    assert thread_cpu_ms(_stat(8, "a (b) c", 1, 0), clock_ticks=100) == ("a (b) c", 10.0)


def _jvm(proc: Path, pid: int, threads: dict[int, tuple[str, int, int]]) -> None:
    for tid, (name, utime, stime) in threads.items():
        task = proc / str(pid) / "task" / str(tid)
        task.mkdir(parents=True)
        (task / "stat").write_text(_stat(tid, name, utime, stime))


def test_only_the_compiler_threads_of_the_given_jvms_count(tmp_path):
    ticks = os.sysconf("SC_CLK_TCK")
    _jvm(tmp_path, 10, {10: ("java", 5 * ticks, 0), 11: ("C2 CompilerThre", 2 * ticks, ticks),
                        12: ("C1 CompilerThre", ticks // 2, 0), 13: ("data-plane-kafk", 9 * ticks, 0)})
    _jvm(tmp_path, 20, {21: ("C2 CompilerThre", 7 * ticks, 0)})
    assert compiler_cpu_seconds([10], proc=tmp_path) == 3.5
    assert compiler_cpu_seconds([10, 20], proc=tmp_path) == 10.5
    assert compiler_cpu_seconds([10, 99], proc=tmp_path) == 3.5, "a process gone counts nothing"


def test_a_process_without_compiler_threads_counts_nothing():
    assert compiler_cpu_seconds([os.getpid()]) == 0.0


def test_a_real_jvm_compiling_is_seen(tmp_path):
    """The threads' names as a JVM gives them: the source launcher compiles the program in the JVM itself."""
    source = tmp_path / "Spin.java"
    source.write_text("public class Spin { public static void main(String[] a) throws Exception {"
                      " long s = 0; for (int i = 0; i < 50_000_000; i++) { s += i % 7; }"
                      " System.out.println(s); System.out.flush(); Thread.sleep(60_000); } }")
    java = shutil.which("java")
    assert java, "java is installed with the brokers"
    process = subprocess.Popen([java, str(source)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip()  # compiled, ran, now sleeps
        seconds = compiler_cpu_seconds([process.pid])
        assert seconds > 0.05, f"the JIT compilers used {seconds} CPU s compiling javac and the loop"
        time.sleep(0.2)
        assert compiler_cpu_seconds([process.pid]) >= seconds
    finally:
        process.kill()
        process.wait()
